#!/bin/sh
# The mul gate: sh tests/mul_test.sh
got=$(sh calc.sh mul 3 4)
if [ "$got" != 12 ]; then
	echo "mul_test.sh: mul 3 4: got $got, want 12"
	exit 1
fi
echo "ok: mul 3 4 = 12"
