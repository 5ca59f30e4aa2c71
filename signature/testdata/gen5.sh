#!/usr/bin/env bash
# gen5.sh captures, into corpus/, real runs of a program that fails with
# one volatile token in its message, one token a group: a request UUID, a
# port it really bound, an ISO 8601 time, a syslog time, a PID in
# "name[PID]:" and in "name[PID]", and an object's address. Each group has
# two runs of one failure (a same pair: only the token differs) and one
# run of another failure (a different pair: the message differs too). A
# PID in "name[PID]" without a colon is one where a log line's time comes
# before it; elsewhere "name[N]" is an index, and a last group shows it
# kept: the same failure at another index is another failure. It
# rewrites only its own captures (named tok-*) and their lines of
# corpus/runs.tsv.
#
# Usage: signature/testdata/gen5.sh   (a few seconds; needs python3)
set -u
cd "$(dirname "$0")"
out=$PWD/corpus
own='^tok-'
grep -Ev "$own" "$out/runs.tsv" >"$out/runs.tsv.new" || true
mv "$out/runs.tsv.new" "$out/runs.tsv"
rm -f "$out"/tok-*.txt
PYTHON=${PYTHON:-/usr/bin/python3}

. ./capture.sh

# fails DIR TOKEN ERROR: a program that prints ERROR with TOKEN in it and
# exits 1.
fails() {
	cat >"$1/fails.py" <<EOF
import datetime, os, socket, sys, time, uuid

def token(kind):
    if kind == "uuid":
        return f"request {uuid.uuid4()}"
    if kind == "port":
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen()
        return f"listening on 127.0.0.1:{s.getsockname()[1]}"
    if kind == "iso":
        return datetime.datetime.now(datetime.timezone.utc).isoformat()
    if kind == "syslog":
        return time.strftime("%b %d %H:%M:%S") + " build-host cache"
    if kind == "pid-colon":
        return f"worker[{os.getpid()}]:"
    if kind == "pid-bare":
        return f"{datetime.datetime.now(datetime.timezone.utc).isoformat()} worker[{os.getpid()}]"
    if kind.startswith("index"):
        return f"values[{kind[len('index'):]}]"
    if kind == "hex":
        return f"{object()!r}"

print("starting the cache check", flush=True)
print(f"{token('$2')} error: $3", file=sys.stderr, flush=True)
sys.exit(1)
EOF
}

for kind in uuid port iso syslog pid-colon pid-bare hex; do
	for i in 1 2; do
		d=$(newdir $i)
		fails "$d" "$kind" "the cache index is corrupt"
		capture "tok-$kind.$i" "$d" "$PYTHON fails.py"
		sleep 1.1 # another second, for the times
	done
	d=$(newdir 3)
	fails "$d" "$kind" "the cache index is full"
	capture "tok-$kind-other.1" "$d" "$PYTHON fails.py"
done
for i in 1 2; do
	d=$(newdir $i)
	fails "$d" index3 "the cache index is corrupt"
	capture "tok-index.$i" "$d" "$PYTHON fails.py"
done
d=$(newdir 3)
fails "$d" index4 "the cache index is corrupt"
capture "tok-index-other.1" "$d" "$PYTHON fails.py"
