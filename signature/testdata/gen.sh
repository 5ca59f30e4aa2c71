#!/usr/bin/env bash
# gen.sh re-creates the evidence corpus in testdata/corpus by running real tools
# (go, gcc, python3, node, make, sh, curl, dd) on small failing projects built in
# temporary directories. Every scenario runs at least twice, in different
# directories (odd runs under /tmp, even runs under $HOME), so that paths, PIDs,
# ports, addresses and durations differ between runs. The tests read the
# captured files; they never run this script.
#
# Usage: signature/testdata/gen.sh   (about a minute; needs go, gcc with
# ASan, python3, node 20, make, curl, script)
#
# Each capture is corpus/NAME.txt (stdout and stderr together, as a gate
# captures them with sh -c) plus a line "NAME<TAB>EXIT<TAB>WORKDIR<TAB>HOME" in
# corpus/runs.tsv. Every run differs from the last, so a re-run rewrites
# every capture; then "go test ./signature -run TestCorpusNormalized -update"
# rewrites testdata/normalized, whose diff is the one to review, and
# "go test ./signature" checks the labels in pairs.txt against the new runs.
set -u
cd "$(dirname "$0")"
out=$PWD/corpus
rm -rf "$out"
mkdir -p "$out"
: >"$out/runs.tsv"
export GOFLAGS=-count=1 GOTOOLCHAIN=local LANG=C.UTF-8
unset NO_COLOR FORCE_COLOR

# The project directories are the third column of runs.tsv.
cleanup() { cut -f3 "$out/runs.tsv" | xargs rm -rf; }
trap cleanup EXIT

# newdir RUN: a fresh temporary directory, under /tmp for odd runs and under
# $HOME for even runs (a workspace that no generic temp-path rule covers).
newdir() {
	local d
	if (($1 % 2)); then d=$(mktemp -d /tmp/sigcorpus.XXXXXX); else d=$(mktemp -d "$HOME/sigcorpus.XXXXXX"); fi
	echo "$d"
}

# capture NAME DIR COMMAND: runs COMMAND with sh -c in DIR, saves the output.
capture() {
	local name=$1 dir=$2 cmd=$3 rc
	(cd "$dir" && sh -c "$cmd") >"$out/$name.txt" 2>&1
	rc=$?
	printf '%s\t%d\t%s\t%s\n' "$name" "$rc" "$dir" "$HOME" >>"$out/runs.tsv"
	echo "$name: exit $rc" >&2
}

# ---------------------------------------------------------------- go projects

# gocalc DIR [ADD_BODY] [PAD] [TESTADD]: a module with failing tests.
gocalc() {
	local d=$1 add=${2:-a + b} pad=${3:-} testadd=${4:-TestAdd}
	cat >"$d/go.mod" <<EOF
module example.com/calc

go 1.26
EOF
	cat >"$d/calc.go" <<EOF
// Package calc is a tiny calculator with bugs.
package calc
$pad
// Add adds.
func Add(a, b int) int { return $add }

// Sub subtracts.
func Sub(a, b int) int { return b - a }
EOF
	mkdir -p "$d/util"
	cat >"$d/util/util_test.go" <<EOF
package util

import "testing"

func TestOK(t *testing.T) {}
EOF
	cat >"$d/calc_test.go" <<EOF
package calc

import (
	"os"
	"path/filepath"
	"testing"
)
$pad
func $testadd(t *testing.T) {
	if got, want := Add(1, 2), 4; got != want {
		t.Errorf("Add(1, 2): got %d want %d", got, want)
	}
}

func TestSub(t *testing.T) {
	if got, want := Sub(3, 1), 2; got != want {
		t.Errorf("Sub(3, 1): got %d want %d", got, want)
	}
}

func TestConfig(t *testing.T) {
	dir := t.TempDir()
	if _, err := os.Stat(filepath.Join(dir, "config.yaml")); err != nil {
		t.Errorf("loading config: %v", err)
	}
}

func TestTable(t *testing.T) {
	for _, n := range []int{1, 2, 3} {
		t.Run(filepath.Base(string(rune('a'+n-1))), func(t *testing.T) {
			t.Parallel()
			if Add(n, n) != 2*n || n > 1 {
				t.Errorf("case %d: Add(%d, %d) = %d", n, n, n, Add(n, n))
			}
		})
	}
}

func TestMul(t *testing.T) {
	if 2*3 != 6 {
		t.Fatal("math is broken")
	}
}
EOF
}

pad5=$'\n// Unrelated lines added by the agent\n// shift every line number below.\n// One.\n// Two.\n'
hash5=${pad5//\/\//#}

for r in 1 2 3 4; do
	d=$(newdir $r)
	gocalc "$d"
	capture "go-assert.$r" "$d" "go test -shuffle=on ./..."
done
for r in 1 2; do
	d=$(newdir $r)
	gocalc "$d"
	capture "go-assert-v.$r" "$d" "go test -v -shuffle=on ./..."
done
d=$(newdir 1)
gocalc "$d" "a + b + 2"
capture "go-assert-progress.1" "$d" "go test ./..."
d=$(newdir 2)
gocalc "$d" "a + b" "$pad5"
capture "go-assert-shifted.2" "$d" "go test ./..."
d=$(newdir 1)
gocalc "$d" "a + b" "" "TestAddition"
capture "go-assert-renamed.1" "$d" "go test ./..."
d=$(newdir 2)
gocalc "$d"
# grep adds colour (SGR and erase-line codes) as colourizing wrappers do.
capture "go-assert-color.2" "$d" "bash -c 'set -o pipefail; go test ./... 2>&1 | grep --color=always -E \"^--- FAIL|got|want|\\\$\"'"
d=$(newdir 1)
gocalc "$d"
# script(1) gives go test a terminal: CRLF line ends, as on a pty.
capture "go-assert-pty.1" "$d" "script -qec 'go test ./...' /dev/null"

gopanic() {
	local d=$1 idx=${2:-5}
	gocalc "$d"
	cat >"$d/index_test.go" <<EOF
package calc

import "testing"

type store struct{ items []int }

func (s *store) at(i int) int { return s.items[i] }

func lookup(s *store, i int) int { return s.at(i) }

func TestIndex(t *testing.T) {
	s := &store{items: []int{1, 2, 3}}
	done := make(chan int)
	go func() { done <- lookup(s, $idx) }()
	t.Log(<-done)
}
EOF
}
for r in 1 2; do
	d=$(newdir $r)
	gopanic "$d"
	capture "go-panic.$r" "$d" "go test -run TestIndex ./..."
done
d=$(newdir 1)
gopanic "$d" 7
capture "go-panic-other.1" "$d" "go test -run TestIndex ./..."

gorace() {
	local d=$1
	gocalc "$d"
	cat >"$d/race_test.go" <<'EOF'
package calc

import (
	"sync"
	"testing"
)

type counter struct{ n int }

func (c *counter) inc() { c.n++ }

func TestRace(t *testing.T) {
	c := &counter{}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.inc()
		}()
	}
	wg.Wait()
}
EOF
}
for r in 1 2 3; do
	d=$(newdir $r)
	gorace "$d"
	capture "go-race.$r" "$d" "go test -race -run TestRace ./..."
done

gohang() {
	local d=$1
	gocalc "$d"
	cat >"$d/hang_test.go" <<'EOF'
package calc

import (
	"testing"
	"time"
)

func TestHang(t *testing.T) {
	ch := make(chan int)
	go func() { time.Sleep(time.Hour); ch <- 1 }()
	<-ch
}
EOF
}
for r in 1 2; do
	d=$(newdir $r)
	gohang "$d"
	capture "go-timeout.$r" "$d" "go test -timeout 2s -run TestHang ./..."
done

for r in 1 2; do
	d=$(newdir $r)
	gocalc "$d" "a + b + c"
	capture "go-build.$r" "$d" "go test ./..."
done
d=$(newdir 1)
gocalc "$d" 'a + "b"'
capture "go-build-other.1" "$d" "go test ./..."

govet() {
	local d=$1 pad=${2:-} file=${3:-format.go}
	gocalc "$d"
	cat >"$d/$file" <<EOF
package calc

import "fmt"
$pad
// Format formats.
func Format(name string, n int) string {
	return fmt.Sprintf("%d items in %s", name, n)
}
EOF
}
for r in 1 2; do
	d=$(newdir $r)
	govet "$d"
	capture "go-vet.$r" "$d" "go vet ./..."
done
d=$(newdir 1)
govet "$d" "$pad5"
capture "go-vet-shifted.1" "$d" "go vet ./..."
d=$(newdir 2)
govet "$d" "" "report.go"
capture "go-vet-otherfile.2" "$d" "go vet ./..."

gorun() {
	local d=$1
	gocalc "$d"
	mkdir -p "$d/cmd/probe"
	cat >"$d/cmd/probe/main.go" <<'EOF'
// Command probe starts a listener, closes it, and probes it.
package main

import (
	"log"
	"net"
	"net/http"
	"os"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	log.Printf("probing %s (pid %d)", addr, os.Getpid())
	if _, err := http.Get("http://" + addr + "/health"); err != nil {
		log.Fatalf("health check: %v", err)
	}
}
EOF
}
for r in 1 2; do
	d=$(newdir $r)
	gorun "$d"
	capture "go-run.$r" "$d" "go run ./cmd/probe"
done

# ---------------------------------------------------------------- C

cfile() {
	local d=$1 body=${2:-'total = add(1, 2) + count;'} pad=${3:-}
	cat >"$d/calc.c" <<EOF
#include <stdio.h>
$pad
static int add(int a, int b) { return a + b; }

int main(void) {
	int total;
	$body
	printf("%d\n", total);
	return 0;
}
EOF
}
for r in 1 2; do
	d=$(newdir $r)
	cfile "$d"
	capture "gcc.$r" "$d" "gcc -Wall -c calc.c"
done
d=$(newdir 1)
cfile "$d"
capture "gcc-color.1" "$d" "gcc -Wall -fdiagnostics-color=always -c calc.c"
d=$(newdir 2)
cfile "$d" 'total = add(1, 2) + count;' "$pad5"
capture "gcc-shifted.2" "$d" "gcc -Wall -c calc.c"
d=$(newdir 1)
cfile "$d" 'total = add(1, 2, 3);'
capture "gcc-other.1" "$d" "gcc -Wall -c calc.c"

cassert() {
	local d=$1 want=${2:-4}
	cat >"$d/check.c" <<EOF
#include <assert.h>
#include <stdio.h>
#include <unistd.h>

static int add(int a, int b) { return a + b; }

int main(void) {
	fprintf(stderr, "check (pid %d): add(1, 2) = %d\n", (int)getpid(), add(1, 2));
	assert(add(1, 2) == $want);
	return 0;
}
EOF
}
for r in 1 2; do
	d=$(newdir $r)
	cassert "$d"
	capture "c-assert.$r" "$d" "gcc -o check check.c && ./check"
done
d=$(newdir 1)
cassert "$d" 5
capture "c-assert-other.1" "$d" "gcc -o check check.c && ./check"

casan() {
	local d=$1
	cat >"$d/overflow.c" <<'EOF'
#include <stdlib.h>

static int sum(const int *v, int n) {
	int s = 0;
	for (int i = 0; i <= n; i++)
		s += v[i];
	return s;
}

int main(void) {
	int *v = malloc(4 * sizeof *v);
	for (int i = 0; i < 4; i++)
		v[i] = i;
	return sum(v, 4) == 6 ? 0 : 1;
}
EOF
}
for r in 1 2; do
	d=$(newdir $r)
	casan "$d"
	capture "c-asan.$r" "$d" "gcc -g -fsanitize=address -o overflow overflow.c && ./overflow"
done

# ---------------------------------------------------------------- python

pyunit() {
	local d=$1 want=${2:-4} pad=${3:-}
	cat >"$d/test_calc.py" <<EOF
import os
import unittest
$pad


def add(a, b):
    return a + b


def ratio(a, b):
    return a / b


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(1, 2), $want)

    def test_ratio(self):
        self.assertEqual(ratio(1, 0), 0)

    def test_sub(self):
        self.assertEqual(3 - 1, 1, "subtraction")

    def test_ok(self):
        self.assertTrue(add(2, 2) == 4)


if __name__ == "__main__":
    if os.environ.get("REVERSE"):
        # As a randomizing runner would: tests run in another order.
        unittest.TestLoader.sortTestMethodsUsing = lambda _, a, b: (a < b) - (a > b)
    unittest.main()
EOF
}
for r in 1 2; do
	d=$(newdir $r)
	pyunit "$d"
	capture "py-unittest.$r" "$d" "python3 test_calc.py"
done
d=$(newdir 1)
pyunit "$d"
capture "py-unittest-reversed.1" "$d" "REVERSE=1 python3 test_calc.py"
for r in 1 2; do
	d=$(newdir $r)
	pyunit "$d"
	capture "py-unittest-v.$r" "$d" "python3 test_calc.py -v"
done
d=$(newdir 2)
pyunit "$d" 5
capture "py-unittest-other.2" "$d" "python3 test_calc.py"
d=$(newdir 1)
pyunit "$d"
capture "py-unittest-pty.1" "$d" "script -qec 'python3 test_calc.py' /dev/null"
d=$(newdir 2)
pyunit "$d" 4 "$hash5"
capture "py-unittest-shifted.2" "$d" "python3 test_calc.py"

pyapp() {
	local d=$1 key=${2:-timeout}
	mkdir -p "$d/app"
	cat >"$d/app/config.py" <<EOF
import logging
import os
import tempfile

log = logging.getLogger("app")


def load(path):
    settings = {"retries": 3}
    log.warning("loaded %s (pid %d)", path, os.getpid())
    return settings["$key"]


def main():
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    with tempfile.TemporaryDirectory() as tmp:
        print("scratch dir", tmp, "object", object())
        return load(os.path.join(tmp, "settings.toml"))
EOF
	cat >"$d/main.py" <<'EOF'
from app import config

config.main()
EOF
}
for r in 1 2; do
	d=$(newdir $r)
	pyapp "$d"
	capture "py-traceback.$r" "$d" "python3 main.py"
done
d=$(newdir 1)
pyapp "$d" "delay"
capture "py-traceback-other.1" "$d" "python3 main.py"

# ---------------------------------------------------------------- node

nodetest() {
	local d=$1 order=${2:-} want=${3:-5}
	local mul="await t.test('multiplies', () => assert.equal(mul(2, 2), $want));"
	local div="await t.test('divides', () => assert.equal(div(6, 2), 4));"
	local first=$mul second=$div
	if [ "$order" = reverse ]; then first=$div second=$mul; fi
	cat >"$d/calc.test.mjs" <<EOF
import test from 'node:test';
import assert from 'node:assert/strict';

const mul = (a, b) => a * b;
const div = (a, b) => a / b;
const scratch = new Buffer(8); // a deprecated API: node warns, naming its pid

test('adds', () => assert.equal(1 + 2, 3));

test('arithmetic', async (t) => {
  await t.test('squares', () => assert.equal(mul(3, 3), 9));
  $first
  $second
});

test('subtracts', () => {
  assert.deepEqual({ a: 3 - 1 }, { a: 1 });
});
EOF
}
for r in 1 2; do
	d=$(newdir $r)
	nodetest "$d"
	capture "node-tap.$r" "$d" "node --test --test-reporter=tap"
done
d=$(newdir 1)
nodetest "$d" reverse
capture "node-tap-reversed.1" "$d" "node --test --test-reporter=tap"
d=$(newdir 2)
nodetest "$d" "" 6
capture "node-tap-other.2" "$d" "node --test --test-reporter=tap"
for r in 1 2; do
	d=$(newdir $r)
	nodetest "$d"
	capture "node-spec.$r" "$d" "node --test --test-reporter=spec"
done
d=$(newdir 1)
nodetest "$d" reverse
capture "node-spec-reversed.1" "$d" "node --test --test-reporter=spec"
d=$(newdir 2)
nodetest "$d"
capture "node-spec-color.2" "$d" "FORCE_COLOR=1 node --test --test-reporter=spec"
d=$(newdir 1)
nodetest "$d"
capture "node-default.1" "$d" "node --test"

# ---------------------------------------------------------------- make

makeproj() {
	local d=$1 pad=${2:-}
	mkdir -p "$d/sub"
	cat >"$d/Makefile" <<EOF
$pad
all: build test

build:
	@echo "building at \$\$(date)"

test:
	\$(MAKE) -C sub check
EOF
	cat >"$d/sub/Makefile" <<'EOF'
check:
	@test -f config.yaml || { echo "config.yaml missing in $(CURDIR)" >&2; exit 2; }
EOF
}
for r in 1 2; do
	d=$(newdir $r)
	makeproj "$d"
	capture "make.$r" "$d" "make"
done
d=$(newdir 1)
makeproj "$d" "$hash5"
capture "make-shifted.1" "$d" "make"

# ---------------------------------------------------------------- shell

shellnoise() {
	local d=$1 status=${2:-200}
	cat >"$d/smoke.sh" <<EOF
#!/bin/sh
echo "[\$(date '+%Y-%m-%d %H:%M:%S')] smoke test starting, pid=\$\$"
echo "started: \$(date)"
echo "rfc2822: \$(date -R)"
port=\$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "\$(date -u +%Y-%m-%dT%H:%M:%S.%NZ) server listening on 127.0.0.1:\$port"
echo "request \$(cat /proc/sys/kernel/random/uuid) cache key \$(head -c 32 /dev/urandom | sha256sum | cut -d' ' -f1)"
state=\$(mktemp)
echo "state saved to \$state"
rm -f "\$state"
sleep 0.1 & echo "background job pid \$!"
wait
curl -sS "http://localhost:\$port/health"
echo "ERROR: health check expected status $status, got 000"
exit 1
EOF
}
for r in 1 2; do
	d=$(newdir $r)
	shellnoise "$d"
	capture "shell.$r" "$d" "sh smoke.sh"
	sleep 1
done
d=$(newdir 1)
shellnoise "$d" 204
capture "shell-other.1" "$d" "sh smoke.sh"

progress() {
	local d=$1
	cat >"$d/fetch.py" <<'EOF'
import random
import sys

pct = 0
while pct < 100:
    pct = min(100, pct + random.randint(7, 31))
    sys.stderr.write("\rdownloading fixtures... %3d%%" % pct)
    sys.stderr.flush()
sys.stderr.write("\n")
print("checksum mismatch for fixtures.tar: got 1f2e want 9a0b")
sys.exit(1)
EOF
}
for r in 1 2; do
	d=$(newdir $r)
	progress "$d"
	capture "progress.$r" "$d" "dd if=/dev/zero of=/dev/null bs=1M count=4000; python3 fetch.py"
done

# ---------------------------------------------------------------- exit classes

# Outputs that normalize to nothing: only passing-test noise, or silence.
d=$(newdir 1)
gocalc "$d"
capture "empty-go-pass.1" "$d" "go test ./util/"
d=$(newdir 2)
capture "empty-silent.2" "$d" "exit 1"

for r in 1 2; do
	d=$(newdir $r)
	capture "class-timeout.$r" "$d" "timeout 1 sh -c 'echo waiting for database; sleep 10'"
done
d=$(newdir 1)
capture "class-fail.1" "$d" "echo waiting for database; exit 1"
d=$(newdir 2)
capture "class-killed.2" "$d" "echo waiting for database; kill -KILL \$\$"
for r in 1 2; do
	d=$(newdir $r)
	capture "class-notfound.$r" "$d" "gotestsum --format short ./..."
done
d=$(newdir 1)
printf 'echo checked\n' >"$d/check.sh"
capture "class-noexec.1" "$d" "./check.sh"
# dash names the script and the line of a command it cannot find.
d=$(newdir 1)
printf '#!/bin/sh\necho running checks\ngotestsum ./...\n' >"$d/ci.sh"
capture "class-notfound-script.1" "$d" "sh ci.sh"
d=$(newdir 2)
printf '#!/bin/sh\n# lint first\nset -u\necho running checks\ngotestsum ./...\n' >"$d/ci.sh"
capture "class-notfound-script-shifted.2" "$d" "sh ci.sh"
