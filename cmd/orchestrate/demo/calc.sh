#!/bin/sh
# calc: a tiny calculator with two bugs, for orchestrate's demo.
#   sh calc.sh add 2 3   prints 5, once fixed
#   sh calc.sh mul 3 4   prints 12, once fixed

add() { echo $(($1 - $2)); }
mul() { echo $(($1 + $2)); }

"$@"
