#!/usr/bin/env bash
# gen4.sh captures, into corpus/, real runs of more runners: jest and
# vitest (npm: TOOLS=DIR names a directory where "npm install jest@29
# vitest@3" was run), and clang and gcc with warnings as errors. It
# rewrites only its own captures (named jest*, vitest*, clang-werror*,
# gcc-werror*) and their lines of corpus/runs.tsv.
#
# Usage: TOOLS=DIR signature/testdata/gen4.sh   (about a minute; needs
# node 20, clang and gcc)
set -u
cd "$(dirname "$0")"
out=$PWD/corpus
own='^(jest|vitest|clang-werror|gcc-werror)'
grep -Ev "$own" "$out/runs.tsv" >"$out/runs.tsv.new" || true
mv "$out/runs.tsv.new" "$out/runs.tsv"
rm -f "$out"/jest*.txt "$out"/vitest*.txt "$out"/clang-werror*.txt "$out"/gcc-werror*.txt
: "${TOOLS:?TOOLS=DIR, where npm install jest@29 vitest@3 was run}"
export CI=1 NO_COLOR=1 FORCE_COLOR=0

. ./capture.sh

# tooldir N: newdir with the npm tools linked in.
tooldir() {
	local d
	d=$(newdir "$1")
	ln -s "$TOOLS/node_modules" "$d/node_modules"
	echo "$d"
}

# jsproj DIR WANT EXT: a failing test of add (which subtracts) among
# passing ones; EXT is the test file's extension (test.js for jest,
# test.mjs for vitest).
jsproj() {
	cat >"$1/calc.js" <<'EOF'
function add(a, b) { return a - b; }
function mul(a, b) { return a * b; }
module.exports = { add, mul };
EOF
	echo "module.exports = { testEnvironment: 'node' };" >"$1/jest.config.js"
	local imp="const { add, mul } = require('./calc.js');"
	[ "$3" = test.mjs ] && imp="import { test, expect } from 'vitest'; import { createRequire } from 'module'; const { add, mul } = createRequire(import.meta.url)('./calc.js');"
	cat >"$1/calc.$3" <<EOF
$imp
test('mul', () => { expect(mul(2, 3)).toBe(6); });
test('slow mul', async () => { await new Promise(r => setTimeout(r, 20 + Math.floor(Math.random() * 80))); expect(mul(3, 3)).toBe(9); });
test('add', () => { expect(add(2, 3)).toBe($2); });
EOF
}

for i in 1 2; do
	d=$(tooldir $i)
	jsproj "$d" 5 test.js
	capture "jest.$i" "$d" "node node_modules/jest/bin/jest.js --ci calc.test.js"
done
d=$(tooldir 3)
jsproj "$d" 6 test.js
capture "jest-other.1" "$d" "node node_modules/jest/bin/jest.js --ci calc.test.js"

for i in 1 2; do
	d=$(tooldir $i)
	jsproj "$d" 5 test.mjs
	capture "vitest.$i" "$d" "node node_modules/vitest/vitest.mjs run calc.test.mjs"
done
d=$(tooldir 3)
jsproj "$d" 6 test.mjs
capture "vitest-other.1" "$d" "node node_modules/vitest/vitest.mjs run calc.test.mjs"

# cproj DIR UNUSED: a file with an unused variable (and, for the other
# failure, an unused parameter), built with warnings as errors.
cproj() {
	cat >"$1/calc.c" <<EOF
int add(int a, int b) {
	int $2 = 0;
	return a + b;
}
EOF
}
for cc in clang gcc; do
	for i in 1 2; do
		d=$(newdir $i)
		cproj "$d" unused
		capture "$cc-werror.$i" "$d" "$cc -Wall -Wextra -Werror -c calc.c -o calc.o"
	done
	d=$(newdir 3)
	cproj "$d" spare
	capture "$cc-werror-other.1" "$d" "$cc -Wall -Wextra -Werror -c calc.c -o calc.o"
done
