#!/usr/bin/env bash
# gen3.sh captures, into corpus/, the real runs the third set of rules
# (sig-v3) was made from: a service whose log has ISO 8601 times,
# "name[pid]" without a colon, request UUIDs and a port it really bound,
# and a build that makes its work directories with random names of capital
# letters and digits. It rewrites only its own captures (named svc-iso*,
# upper-dirs*) and their lines of corpus/runs.tsv.
#
# Usage: signature/testdata/gen3.sh   (a few seconds; needs python3)
set -u
cd "$(dirname "$0")"
out=$PWD/corpus
own='^(svc-iso|upper-dirs)'
grep -Ev "$own" "$out/runs.tsv" >"$out/runs.tsv.new" || true
mv "$out/runs.tsv.new" "$out/runs.tsv"
rm -f "$out"/svc-iso*.txt "$out"/upper-dirs*.txt
PYTHON=${PYTHON:-/usr/bin/python3}

. ./capture.sh

# svc DIR ERROR: a service that binds an ephemeral port, takes a request
# and fails it with ERROR, logging as services do.
svc() {
	cat >"$1/svc.py" <<EOF
import datetime, os, socket, sys, uuid

def log(level, msg):
    print(f"{datetime.datetime.now(datetime.timezone.utc).isoformat()} svc[{os.getpid()}] {level} {msg}", flush=True)

s = socket.socket()
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
log("INFO", f"listening on 127.0.0.1:{port}")
req = uuid.uuid4()
log("INFO", f"request {req} accepted")
log("ERROR", f"request {req} failed: $2")
sys.exit(1)
EOF
}

for i in 1 2; do
	d=$(newdir $i)
	svc "$d" "upstream refused the connection"
	capture "svc-iso.$i" "$d" "$PYTHON svc.py"
done
d=$(newdir 3)
svc "$d" "the upstream timed out"
capture "svc-iso-other.1" "$d" "$PYTHON svc.py"

# upper DIR MISSING: a build that makes a work directory with a random name
# of capitals and digits, as some build tools do, and misses MISSING in it.
upper() {
	cat >"$1/build.sh" <<EOF
w=work/build-\$(tr -dc 'A-Z0-9' </dev/urandom | head -c 8)
mkdir -p "\$w"
echo "building in \$PWD/\$w"
echo "error: \$PWD/\$w/$2: no such file or directory" >&2
exit 1
EOF
}
for i in 1 2; do
	d=$(newdir $i)
	upper "$d" "main.o"
	capture "upper-dirs.$i" "$d" "sh build.sh"
done
d=$(newdir 3)
upper "$d" "util.o"
capture "upper-dirs-other.1" "$d" "sh build.sh"
