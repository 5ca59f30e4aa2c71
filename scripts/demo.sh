#!/usr/bin/env bash
# The demo: orchestrate on a copy of the bundled example, in a temporary
# directory that is removed afterwards.
set -euo pipefail
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
demo=$(mktemp -d)
trap 'rm -rf "$demo"' EXIT
cd "$demo"
run() { echo; echo "\$ orchestrate $*"; "$bin" "$@"; }
run init
cp "$root/testdata/demo/issue_queue.md" .orchestrator/issue_queue.md
run session start
run status
run issue add --priority critical --auto-retry true --summary "go vet reports a copied lock" --verification "go vet ./..."
run issue set ISSUE-20241213-003 Status=skipped
run validate
run status
