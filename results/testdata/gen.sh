#!/usr/bin/env bash
# gen.sh captures the output of real test runners and linters on small
# failing projects, for the readers' tests: each capture is out/NAME.txt and
# its exit code is a row "NAME<TAB>CODE" of out/exit.tsv. The golden reports
# (golden/NAME.json) follow from them: go test ./results -run TestGolden -update.
#
# Usage: results/testdata/gen.sh   (under a minute; needs go, python3 with
# pytest (Debian's python3-pytest) and flake8 (python3-flake8), node 20,
# cargo, and jest 29, vitest 2, eslint 9 and typescript 5: TOOLS=DIR names a
# directory where "npm install jest@29 vitest@2 eslint@9 typescript@5" was run)
set -u
cd "$(dirname "$0")"
out=$PWD/out
rm -rf "$out"
mkdir -p "$out"
export GOFLAGS=-count=1 GOTOOLCHAIN=local LANG=C.UTF-8 CARGO_TERM_COLOR=never NO_COLOR=1 CI=1
unset FORCE_COLOR PYTEST_ADDOPTS
export PYTHON=${PYTHON:-/usr/bin/python3}
TOOLS=${TOOLS:-/tmp/jsrunners}
bin=$TOOLS/node_modules/.bin
work=$(mktemp -d /tmp/results-gen.XXXXXX)
trap 'rm -rf "$work"' EXIT

# capture NAME DIR CMD: CMD's output in DIR as out/NAME.txt.
capture() {
	local name=$1 dir=$2 cmd=$3 rc
	(cd "$dir" && sh -c "$cmd") >"$out/$name.txt" 2>&1
	rc=$?
	printf '%s\t%d\n' "$name" "$rc" >>"$out/exit.tsv"
	echo "$name: exit $rc" >&2
}

# ---------------------------------------------------------------- go test

g=$work/go
mkdir -p "$g/calc" "$g/text" "$g/boom" "$g/broken"
cat >"$g/go.mod" <<'EOF'
module example.com/demo

go 1.22
EOF
cat >"$g/calc/calc_test.go" <<'EOF'
package calc

import "testing"

func add(a, b int) int { return a + b + 1 }

func TestAdd(t *testing.T) {
	if got := add(1, 2); got != 3 {
		t.Errorf("add(1, 2) = %d, want 3", got)
	}
}

func TestSub(t *testing.T) {
	if 3-1 != 2 {
		t.Fatal("sub")
	}
}

func TestTable(t *testing.T) {
	for _, c := range []struct{ a, b, want int }{{0, 0, 1}, {1, 1, 2}} {
		t.Run("case", func(t *testing.T) {
			t.Log("checking", c.a, c.b)
			if got := c.a + c.b; got != c.want {
				t.Errorf("%d+%d = %d, want %d", c.a, c.b, got, c.want)
			}
		})
	}
}
EOF
cat >"$g/text/text_test.go" <<'EOF'
package text

import (
	"strings"
	"testing"
)

func TestUpper(t *testing.T) {
	t.Parallel()
	if got := strings.ToUpper("a"); got != "B" {
		t.Fatalf("ToUpper(a) = %q", got)
	}
}

func TestLower(t *testing.T) {
	t.Parallel()
	if strings.ToLower("A") != "a" {
		t.Fatal("lower")
	}
}
EOF
cat >"$g/boom/boom_test.go" <<'EOF'
package boom

import "testing"

func TestFine(t *testing.T) {}

func TestBoom(t *testing.T) {
	var m map[string]int
	m["x"] = 1
}
EOF
capture go-text "$g" 'go test ./calc ./text'
capture go-verbose "$g" 'go test -v ./calc ./text'
capture go-json "$g" 'go test -json ./calc ./text'
capture go-panic "$g" 'go test ./boom'
capture go-panic-verbose "$g" 'go test -v ./boom'
capture go-pass "$g" 'go test ./text -run TestLower'
capture go-pass-verbose "$g" 'go test -v ./calc -run TestSub'
cat >"$g/broken/broken_test.go" <<'EOF'
package broken

import "testing"

func TestX(t *testing.T) { undefinedName() }
EOF
capture go-build "$g" 'go test ./calc ./broken'
capture go-build-json "$g" 'go test -json ./broken'
rm -r "$g/broken"
cat >"$g/calc/vet.go" <<'EOF'
package calc

import "fmt"

func Show(s string) { fmt.Printf("%d\n", s) }
EOF
capture go-vet "$g" 'go vet ./...'

# ---------------------------------------------------------------- pytest

p=$work/py
mkdir -p "$p/tests"
cat >"$p/tests/test_calc.py" <<'EOF'
import pytest


def add(a, b):
    return a + b + 1


def test_add():
    assert add(1, 2) == 3


def test_sub():
    assert 3 - 1 == 2


@pytest.mark.parametrize("a,want", [(1, 2), (2, 4)])
def test_double(a, want):
    assert a * 2 == want


class TestWords:
    def test_upper(self):
        print("checking upper")
        assert "a".upper() == "B"

    def test_lower(self):
        assert "A".lower() == "a"


@pytest.fixture
def broken():
    raise RuntimeError("fixture broke")


def test_uses_broken(broken):
    pass
EOF
capture pytest "$p" '$PYTHON -m pytest -p no:cacheprovider'
capture pytest-q "$p" '$PYTHON -m pytest -q -p no:cacheprovider'
capture pytest-v "$p" '$PYTHON -m pytest -v -p no:cacheprovider'
capture pytest-pass "$p" '$PYTHON -m pytest -q -p no:cacheprovider -k "sub or lower"'
cat >"$p/tests/test_syntax.py" <<'EOF'
def test_x(:
    pass
EOF
capture pytest-collect "$p" '$PYTHON -m pytest -q -p no:cacheprovider'
rm "$p/tests/test_syntax.py"
cat >"$p/lint.py" <<'EOF'
import os
def f( x):
    return undefined_name
EOF
capture flake8 "$p" '$PYTHON -m flake8 lint.py'

# ---------------------------------------------------------------- jest, vitest

j=$work/js
mkdir -p "$j/src"
ln -s "$TOOLS/node_modules" "$j/node_modules"
cat >"$j/package.json" <<'EOF'
{"name": "demo", "version": "1.0.0", "private": true}
EOF
cat >"$j/src/sum.test.js" <<'EOF'
const sum = (a, b) => a + b + 1;

describe("sum", () => {
  test("adds", () => {
    expect(sum(1, 2)).toBe(3);
  });
  test("zero", () => {
    expect(0 + 0).toBe(0);
  });
  describe("nested", () => {
    it("negatives", () => {
      expect(sum(-1, -1)).toBe(-2);
    });
  });
});
EOF
cat >"$j/src/words.test.js" <<'EOF'
test("upper", () => {
  expect("a".toUpperCase()).toBe("A");
});
test("lower", () => {
  expect("A".toLowerCase()).toBe("b");
});
EOF
capture jest "$j" "$bin/jest"
capture jest-verbose "$j" "$bin/jest --verbose"
capture jest-pass "$j" "$bin/jest -t zero"
printf 'test("x", () => {\n' >"$j/src/broken.test.js"
capture jest-suite "$j" "$bin/jest"
for f in "$j"/src/*.test.js; do sed -i '1i import { describe, test, it, expect } from "vitest";' "$f"; done
capture vitest-suite "$j" "$bin/vitest run"
rm "$j/src/broken.test.js"
capture vitest "$j" "$bin/vitest run"
capture vitest-verbose "$j" "$bin/vitest run --reporter=verbose"
capture vitest-pass "$j" "$bin/vitest run -t zero"
sed -i 's/^test("lower"/test.skip("lower"/' "$j/src/words.test.js"
capture vitest-skip "$j" "$bin/vitest run"
sed -i 's/^test.skip("lower"/test("lower"/' "$j/src/words.test.js"
cat >"$j/lint.js" <<'EOF'
const unused = 1;
if (x == 2) { console.log("x") }
EOF
cat >"$j/eslint.config.js" <<'EOF'
module.exports = [{ files: ["lint.js"], rules: { "no-unused-vars": "error", "no-undef": "error", eqeqeq: "warn" } }];
EOF
capture eslint "$j" "$bin/eslint lint.js"
cat >"$j/calc.ts" <<'EOF'
export function add(a: number, b: number): number {
  return a + b;
}
const s: string = add(1, 2);
add("1", 2);
EOF
capture tsc "$j" "$bin/tsc --noEmit --strict calc.ts"

# ---------------------------------------------------------------- node --test

n=$work/node
mkdir -p "$n/test"
cat >"$n/test/math.test.js" <<'EOF'
const test = require("node:test");
const assert = require("node:assert");

test("adds", () => {
  assert.strictEqual(1 + 2, 4);
});
test("subtracts", () => {
  assert.strictEqual(3 - 1, 2);
});
test.describe("suite", () => {
  test.it("multiplies", () => {
    assert.strictEqual(2 * 2, 5);
  });
  test.it("divides", () => {
    assert.strictEqual(4 / 2, 2);
  });
});
EOF
cat >"$n/test/words.test.js" <<'EOF'
const test = require("node:test");
const assert = require("node:assert");

test("upper", () => {
  assert.strictEqual("a".toUpperCase(), "B");
});
EOF
capture node-tap "$n" 'node --test'
capture node-spec "$n" 'node --test --test-reporter=spec'
capture node-tap-one "$n" 'node --test test/math.test.js'

# ---------------------------------------------------------------- cargo test

c=$work/rust
mkdir -p "$c/src" "$c/tests"
cat >"$c/Cargo.toml" <<'EOF'
[package]
name = "calc"
version = "0.1.0"
edition = "2021"
EOF
cat >"$c/src/lib.rs" <<'EOF'
pub fn add(a: i32, b: i32) -> i32 {
    a + b + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(1, 2), 3);
    }

    #[test]
    fn subtracts() {
        assert_eq!(3 - 1, 2);
    }

    #[test]
    fn panics() {
        let v: Vec<i32> = Vec::new();
        println!("about to index");
        let _ = v[1];
    }
}
EOF
cat >"$c/tests/api.rs" <<'EOF'
#[test]
fn api_adds() {
    assert_eq!(calc::add(0, 0), 0, "zero plus zero");
}
EOF
capture cargo "$c" 'cargo test --no-fail-fast'
capture cargo-q "$c" 'cargo test -q --no-fail-fast'
echo 'pub fn broken() -> i32 { "x" }' >>"$c/src/lib.rs"
capture cargo-compile "$c" 'cargo test'

# Mask this machine's scratch directory in the captures.
sed -i "s#$work#/tmp/results-gen#g" "$out"/*.txt
