#!/bin/sh
# fetch-echarts.sh: put the pinned echarts.min.js beside this script, for go:embed.
# Idempotent: does nothing when the file is already there with the pinned checksum.
# Needs npm (the npm registry) and sha256sum; writes nothing else outside a temp dir.
set -eu

ECHARTS_VERSION=5.6.0
ECHARTS_SHA256=bf4a223524e40b77c304bec67e1222cf551f14880cf42c69dc046558e11c07b1

dir=$(cd "$(dirname "$0")" && pwd)
out="$dir/echarts.min.js"

sum() { sha256sum "$1" | cut -d' ' -f1; }

if [ -f "$out" ] && [ "$(sum "$out")" = "$ECHARTS_SHA256" ]; then
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd "$tmp" && npm pack --silent "echarts@$ECHARTS_VERSION" >/dev/null)
tar -xzf "$tmp/echarts-$ECHARTS_VERSION.tgz" -C "$tmp" package/dist/echarts.min.js

got=$(sum "$tmp/package/dist/echarts.min.js")
if [ "$got" != "$ECHARTS_SHA256" ]; then
	echo "fetch-echarts.sh: echarts@$ECHARTS_VERSION dist/echarts.min.js has sha256 $got, want $ECHARTS_SHA256" >&2
	exit 1
fi

# Rename into place so that a failed run never leaves half a file to be embedded.
cp "$tmp/package/dist/echarts.min.js" "$out.tmp"
mv "$out.tmp" "$out"
echo "fetch-echarts.sh: echarts@$ECHARTS_VERSION -> $out" >&2
