#!/bin/sh
# The add gate: sh tests/add_test.sh
got=$(sh calc.sh add 2 3)
if [ "$got" != 5 ]; then
	echo "add_test.sh: add 2 3: got $got, want 5"
	exit 1
fi
echo "ok: add 2 3 = 5"
