#!/usr/bin/env bash
# gen2.sh adds to the evidence corpus in testdata/corpus the captures of
# more runners, by running real tools on small failing projects, each
# scenario at least twice, in the way gen.sh does (odd runs under /tmp, even
# runs under $HOME): pytest (default, -q, -x, -v, xdist), go test -json,
# node --test with an added passing test, cargo test, tsc, eslint, flake8,
# a service log in syslog's form, and a build script that fails in mktemp
# directories. It
# rewrites only its own captures (named pytest*, go-json*, node-tap-added*,
# cargo-*, syslog-*, mktemp-*, tsc*, eslint*, flake8*) and their lines of
# corpus/runs.tsv.
#
# Usage: signature/testdata/gen2.sh   (about a minute; needs go, python3 with
# pytest (Debian's python3-pytest, python3-pytest-xdist), flake8 (Debian's
# python3-flake8), node 20, cargo, and tsc and eslint: TOOLS=DIR names a
# directory where "npm install typescript@5 eslint@9" was run)
set -u
cd "$(dirname "$0")"
out=$PWD/corpus
mkdir -p "$out"
own='^(pytest[.-]|go-json|node-tap-added|cargo-|syslog-|mktemp-|tsc|eslint|flake8)'
grep -Ev "$own" "$out/runs.tsv" >"$out/runs.tsv.new" || true
mv "$out/runs.tsv.new" "$out/runs.tsv"
for f in "$out"/*.txt; do
	case $(basename "$f") in pytest.* | pytest-* | go-json* | node-tap-added* | cargo-* | syslog-* | mktemp-* | tsc* | eslint* | flake8*) rm -f "$f" ;; esac
done
export GOFLAGS=-count=1 GOTOOLCHAIN=local LANG=C.UTF-8 CARGO_TERM_COLOR=never
unset NO_COLOR FORCE_COLOR PYTEST_ADDOPTS
PYTHON=${PYTHON:-/usr/bin/python3}

. ./capture.sh

# ---------------------------------------------------------------- pytest

# pyproj DIR [WANT] [EXTRA_TESTS] [SLEEP] [NAME]: a failing pytest project.
# EXTRA_TESTS more passing tests; SLEEP seconds in a passing test, which
# changes the duration and the width of the summary line's padding.
pyproj() {
	local d=$1 want=${2:-4} extra=${3:-0} sleep=${4:-0} name=${5:-test_add} mul=${6:-6}
	{
		cat <<EOF
import os
import time


def add(a, b):
    return a + b


def test_sub():
    time.sleep($sleep)
    assert add(3, -1) == 2


def $name():
    print("checking add")
    assert add(1, 2) == $want


def test_ratio():
    assert 1 / 1 == 1


def test_mul():
    assert 2 * 3 == $mul
EOF
		for i in $(seq 1 "$extra"); do
			printf '\n\ndef test_extra_%d():\n    assert add(%d, 0) == %d\n' "$i" "$i" "$i"
		done
	} >"$d/test_calc.py"
}
for mode in "" "-q" "-x" "-v"; do
	tag=${mode#-}
	tag=${tag:+-$tag}
	for r in 1 2; do
		d=$(newdir $r)
		pyproj "$d"
		capture "pytest$tag.$r" "$d" "$PYTHON -m pytest -p no:cacheprovider $mode"
	done
done
d=$(newdir 1)
pyproj "$d" 4 0 1.2
capture "pytest-slow.1" "$d" "$PYTHON -m pytest -p no:cacheprovider"
d=$(newdir 2)
pyproj "$d" 4 3
capture "pytest-added.2" "$d" "$PYTHON -m pytest -p no:cacheprovider"
d=$(newdir 1)
pyproj "$d" 4 12 0
capture "pytest-q-added.1" "$d" "$PYTHON -m pytest -p no:cacheprovider -q"
d=$(newdir 1)
pyproj "$d" 5
capture "pytest-other.1" "$d" "$PYTHON -m pytest -p no:cacheprovider"
d=$(newdir 2)
pyproj "$d" 4 0 0 test_plus
capture "pytest-renamed.2" "$d" "$PYTHON -m pytest -p no:cacheprovider"
if $PYTHON -c 'import xdist' 2>/dev/null; then
	for r in 1 2 3; do
		d=$(newdir $r)
		pyproj "$d" 4 6 0 test_add 7
		capture "pytest-xdist.$r" "$d" "$PYTHON -m pytest -p no:cacheprovider -n 2"
	done
	d=$(newdir 2)
	pyproj "$d" 5 6 0 test_add 7
	capture "pytest-xdist-other.2" "$d" "$PYTHON -m pytest -p no:cacheprovider -n 2"
fi

# ---------------------------------------------------------------- go test -json

gojson() {
	local d=$1 want=${2:-4} extra=${3:-0}
	printf 'module example.com/calc\n\ngo 1.26\n' >"$d/go.mod"
	printf 'package calc\n\nfunc Add(a, b int) int { return a + b }\n' >"$d/calc.go"
	{
		cat <<EOF
package calc

import "testing"

func TestSub(t *testing.T) {
	if Add(3, -1) != 2 {
		t.Fatal("sub")
	}
}

func TestAdd(t *testing.T) {
	for i := 0; i < 3; i++ {
		t.Logf("step %d", i)
	}
	if got := Add(1, 2); got != $want {
		t.Errorf("Add(1, 2) = %d; want $want", got)
	}
}
EOF
		for i in $(seq 1 "$extra"); do
			printf '\nfunc TestExtra%d(t *testing.T) {}\n' "$i"
		done
	} >"$d/calc_test.go"
}
for r in 1 2; do
	d=$(newdir $r)
	gojson "$d"
	capture "go-json.$r" "$d" "go test -json ./..."
done
d=$(newdir 1)
gojson "$d" 4 3
capture "go-json-added.1" "$d" "go test -json ./..."
d=$(newdir 2)
gojson "$d" 5
capture "go-json-other.2" "$d" "go test -json ./..."

# ---------------------------------------------------------------- node --test

nodeproj() {
	local d=$1 extra=${2:-0}
	{
		cat <<'EOF'
import { test } from 'node:test';
import assert from 'node:assert';

test('adds', () => { assert.strictEqual(1 + 2, 3); });
test('multiplies', () => { assert.strictEqual(2 * 2, 5); });
EOF
		for i in $(seq 1 "$extra"); do
			printf "test('extra %d', () => { assert.ok(true); });\n" "$i"
		done
	} >"$d/calc.test.mjs"
}
for r in 1 2; do
	d=$(newdir $r)
	nodeproj "$d"
	capture "node-tap-added.$r" "$d" "node --test --test-reporter=tap"
done
d=$(newdir 1)
nodeproj "$d" 4
capture "node-tap-added-more.1" "$d" "node --test --test-reporter=tap"

# ---------------------------------------------------------------- cargo test

cargoproj() {
	local d=$1 want=${2:-4} extra=${3:-0} pad=${4:-}
	mkdir -p "$d/src"
	printf '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n' >"$d/Cargo.toml"
	{
		cat <<EOF
pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub() {
        assert_eq!(add(3, -1), 2);
    }

    #[test]
    fn adds() {
        $pad assert_eq!(add(1, 2), $want, "adding");
    }

    #[test]
    fn divides() {
        let v: Vec<i32> = vec![1, 2];
        $pad let _ = v[add(1, 2) as usize];
    }
EOF
		for i in $(seq 1 "$extra"); do
			printf '\n    #[test]\n    fn extra_%d() {\n        assert_eq!(add(%d, 0), %d);\n    }\n' "$i" "$i" "$i"
		done
		printf '}\n'
	} >"$d/src/lib.rs"
}
if command -v cargo >/dev/null; then
	for r in 1 2 3; do
		d=$(newdir $r)
		cargoproj "$d"
		capture "cargo-test.$r" "$d" "cargo test --offline -q"
	done
	d=$(newdir 1)
	cargoproj "$d" 4 3 "let _pad = 0;"
	capture "cargo-test-added.1" "$d" "cargo test --offline -q"
	d=$(newdir 2)
	cargoproj "$d" 5
	capture "cargo-test-other.2" "$d" "cargo test --offline -q"
fi

# ---------------------------------------------------------------- service logs

# A service that logs as syslog does ("Nov 23 12:00:01 host name[pid]:")
# and fails its health check.
svc() {
	local d=$1 port=${2:-5432}
	cat >"$d/svc.sh" <<EOF
#!/bin/sh
log() { echo "\$(date '+%b %e %H:%M:%S') \$(hostname) calcd[\$\$]: \$*"; }
log "starting, config \$PWD/calcd.conf"
log "connecting to db at 127.0.0.1:$port"
sleep 0.\$\$
log "error: connection refused (127.0.0.1:$port)"
echo "health check failed: calcd exited 1" >&2
exit 1
EOF
}
for r in 1 2; do
	d=$(newdir $r)
	svc "$d"
	capture "syslog-svc.$r" "$d" "sh svc.sh"
done
d=$(newdir 1)
svc "$d" 5433
capture "syslog-svc-other.1" "$d" "sh svc.sh"

# ---------------------------------------------------------------- mktemp dirs

# A build script that works in mktemp directories, under the temp dir and
# under its own work dir, and fails there.
mk() {
	local d=$1 what=${2:-calc.o}
	cat >"$d/build.sh" <<EOF
#!/bin/sh
t=\$(mktemp -d /tmp/build-XXXXXXXX)
w=\$(mktemp -d "\$PWD/work/tmp.XXXXXXXXXX")
echo "building in \$t and \$w"
ls "\$w/$what" 2>&1 || echo "build failed: \$t/$what missing"
rm -rf "\$t" "\$w"
exit 2
EOF
	mkdir -p "$d/work"
}
for r in 1 2; do
	d=$(newdir $r)
	mk "$d"
	capture "mktemp-build.$r" "$d" "sh build.sh"
done
d=$(newdir 2)
mk "$d" util.o
capture "mktemp-build-other.2" "$d" "sh build.sh"

# ---------------------------------------------------------------- tsc, eslint, flake8

TOOLS=${TOOLS:-}
if [ -n "$TOOLS" ] && [ -x "$TOOLS/node_modules/.bin/tsc" ]; then
	tsproj() {
		local d=$1 pad=${2:-} value=${3:-"'three'"}
		printf '%s\nexport function add(a: number, b: number): number {\n  return a + b;\n}\nexport const total: number = %s;\nexport const sum = add(1, "2");\n' "$pad" "$value" >"$d/calc.ts"
	}
	for r in 1 2; do
		d=$(newdir $r)
		tsproj "$d"
		capture "tsc.$r" "$d" "$TOOLS/node_modules/.bin/tsc --noEmit --strict calc.ts"
	done
	d=$(newdir 1)
	tsproj "$d" $'// two comment lines above\n// shift every line'
	capture "tsc-shifted.1" "$d" "$TOOLS/node_modules/.bin/tsc --noEmit --strict calc.ts"
	d=$(newdir 2)
	tsproj "$d" "" "true"
	capture "tsc-other.2" "$d" "$TOOLS/node_modules/.bin/tsc --noEmit --strict calc.ts"

	esproj() {
		local d=$1 name=${2:-unused} pad=${3:-}
		printf 'export default [{ rules: { "no-unused-vars": "error", "no-undef": "error" } }];\n' >"$d/eslint.config.js"
		printf '%s\nconst %s = 1;\nexport function f() {\n  return missing + 1;\n}\n' "$pad" "$name" >"$d/calc.js"
	}
	for r in 1 2; do
		d=$(newdir $r)
		esproj "$d"
		capture "eslint.$r" "$d" "$TOOLS/node_modules/.bin/eslint calc.js"
	done
	d=$(newdir 1)
	esproj "$d" unused $'// ten lines\n\n\n\n\n\n\n\n\n// shift every line'

	capture "eslint-shifted.1" "$d" "$TOOLS/node_modules/.bin/eslint calc.js"
	d=$(newdir 2)
	esproj "$d" spare
	capture "eslint-other.2" "$d" "$TOOLS/node_modules/.bin/eslint calc.js"
fi
if $PYTHON -m flake8 --version >/dev/null 2>&1; then
	f8proj() {
		local d=$1 mod=${2:-os} pad=${3:-}
		printf '%s\nimport %s\n\n\ndef add(a, b):\n    return a + c\n' "$pad" "$mod" >"$d/calc.py"
	}
	for r in 1 2; do
		d=$(newdir $r)
		f8proj "$d"
		capture "flake8.$r" "$d" "$PYTHON -m flake8 calc.py"
	done
	d=$(newdir 1)
	f8proj "$d" os $'# two lines\n# shift every line'

	capture "flake8-shifted.1" "$d" "$PYTHON -m flake8 calc.py"
	d=$(newdir 2)
	f8proj "$d" sys
	capture "flake8-other.2" "$d" "$PYTHON -m flake8 calc.py"
fi
