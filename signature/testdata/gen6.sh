#!/usr/bin/env bash
# gen6.sh captures, into corpus/, real runs of failures whose runs split
# into several signatures before: a Go panic in checkouts of one module
# named at random as worktrees are (wt-a-0XIPUPMY, wt-b-L3KwvTd9), signed
# without a working directory, as "orchestrate signature" with no --root
# signs them (the root is found in the output); and a service's log whose
# level is padded ("INFO  svc[20667]:", Python's %(levelname)-5s) or
# followed by a tab. Each has same pairs and different pairs; a last group
# keeps an index in an indented line of go test ("shard[3]:") apart from
# another. It rewrites only its own captures (named wt-*, log-*) and their
# lines of corpus/runs.tsv.
#
# Usage: signature/testdata/gen6.sh   (a few seconds; needs go and python3)
set -u
cd "$(dirname "$0")"
out=$PWD/corpus
own='^(wt|log)-'
grep -Ev "$own" "$out/runs.tsv" >"$out/runs.tsv.new" || true
mv "$out/runs.tsv.new" "$out/runs.tsv"
rm -f "$out"/wt-*.txt "$out"/log-*.txt
PYTHON=${PYTHON:-/usr/bin/python3}

. ./capture.sh

# module DIR INDEX: a Go module, github.com/example/ledger, whose package
# ledger reads a slice of three at INDEX (a panic), from a test and from a
# command.
module() {
	mkdir -p "$1/ledger" "$1/cmd/ledger"
	printf 'module github.com/example/ledger\n\ngo 1.21\n' >"$1/go.mod"
	cat >"$1/ledger/ledger.go" <<EOF
// Package ledger reads entries.
package ledger

// Entry returns the entry at i.
func Entry(entries []int, i int) int {
	return entries[i]
}

// Last returns the last entry, miscounted.
func Last(entries []int) int {
	return Entry(entries, $2)
}
EOF
	cat >"$1/ledger/ledger_test.go" <<'EOF'
package ledger

import "testing"

func TestLast(t *testing.T) {
	if got := Last([]int{1, 2, 3}); got != 3 {
		t.Errorf("Last = %d; want 3", got)
	}
}
EOF
	cat >"$1/cmd/ledger/main.go" <<'EOF'
package main

import (
	"fmt"

	"github.com/example/ledger/ledger"
)

func main() {
	fmt.Println(ledger.Last([]int{1, 2, 3}))
}
EOF
}

# checkout N NAME: a checkout named NAME-<8 random letters and digits>, in a
# scratch directory under $HOME (under /tmp, <tmp> would hide the name).
checkout() {
	mktemp -d "$(newdir "$1")/$2-XXXXXXXX"
}

# capture_noroot NAME DIR CMD: capture, with no working directory in
# corpus/runs.tsv: the output's own paths give the checkout's root.
capture_noroot() {
	local name=$1 dir=$2 cmd=$3 rc
	(cd "$dir" && sh -c "$cmd") >"$out/$name.txt" 2>&1
	rc=$?
	printf '%s\t%d\t\t%s\n' "$name" "$rc" "$HOME" >>"$out/runs.tsv"
	echo "$name: exit $rc" >&2
}

for wt in wt-a wt-b; do
	d=$(checkout 2 "$wt")
	module "$d" 5
	capture_noroot "wt-test.$wt" "$d" "go test -count=1 ./..."
	capture_noroot "wt-run.$wt" "$d" "go run ./cmd/ledger"
	capture_noroot "wt-test-v.$wt" "$d" "go test -count=1 -v ./ledger"
done
d=$(checkout 2 wt-c)
module "$d" 4
capture_noroot "wt-test-other.wt-c" "$d" "go test -count=1 ./..."
capture_noroot "wt-run-other.wt-c" "$d" "go run ./cmd/ledger"

# svc DIR FORMAT ERROR: a service that logs with Python's logging in
# FORMAT, takes a request and fails it with ERROR.
svc() {
	cat >"$1/svc.py" <<EOF
import logging, sys

logging.basicConfig(stream=sys.stdout, level=logging.DEBUG, format="$2")
log = logging.getLogger("svc")
log.info("starting")
log.debug("cache warmed")
log.warning("slow upstream")
log.error("request failed: $3")
sys.exit(1)
EOF
}

padded='%(asctime)s %(levelname)-5s %(name)s[%(process)d]: %(message)s'
tabbed='%(asctime)s\t%(levelname)s\t%(name)s[%(process)d]\t%(message)s'
for i in 1 2; do
	d=$(newdir $i)
	svc "$d" "$padded" "upstream refused the connection"
	capture "log-padded.$i" "$d" "$PYTHON svc.py"
	d=$(newdir $i)
	svc "$d" "$tabbed" "upstream refused the connection"
	capture "log-tab.$i" "$d" "$PYTHON svc.py"
done
d=$(newdir 3)
svc "$d" "$padded" "the upstream timed out"
capture "log-padded-other.1" "$d" "$PYTHON svc.py"
d=$(newdir 3)
svc "$d" "$tabbed" "the upstream timed out"
capture "log-tab-other.1" "$d" "$PYTHON svc.py"

# shard DIR INDEX: a go test that reports a bad shard at INDEX, indented
# under its test, in a line that reads as name[N]: after two fields.
shard() {
	printf 'module shard\n\ngo 1.21\n' >"$1/go.mod"
	cat >"$1/shard_test.go" <<EOF
package shard

import "testing"

func TestShards(t *testing.T) {
	t.Logf("checking shards")
	t.Errorf("shard[$2]: checksum mismatch")
}
EOF
}
for i in 1 2; do
	d=$(newdir $i)
	shard "$d" 3
	capture "log-index.$i" "$d" "go test -count=1 ."
done
d=$(newdir 3)
shard "$d" 4
capture "log-index-other.1" "$d" "go test -count=1 ."
