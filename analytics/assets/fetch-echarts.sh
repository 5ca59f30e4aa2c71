#!/bin/sh
# fetch-echarts.sh: replace the committed echarts.min.js (with its checksum file,
# license and notice) by the pinned release from the npm registry. Only needed to
# change versions: builds use the committed copy and never run this.
# Idempotent: does nothing when the file is already there with the pinned checksum.
# Needs npm and sha256sum; writes nothing else outside a temp dir.
set -eu

ECHARTS_VERSION=5.6.0
ECHARTS_SHA256=bf4a223524e40b77c304bec67e1222cf551f14880cf42c69dc046558e11c07b1

dir=$(cd "$(dirname "$0")" && pwd)
out="$dir/echarts.min.js"

sum() { sha256sum "$1" | cut -d' ' -f1; }

if [ -f "$out" ] && [ "$(sum "$out")" = "$ECHARTS_SHA256" ]; then
	echo "fetch-echarts.sh: echarts@$ECHARTS_VERSION is already in place" >&2
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd "$tmp" && npm pack --silent "echarts@$ECHARTS_VERSION" >/dev/null)
tar -xzf "$tmp/echarts-$ECHARTS_VERSION.tgz" -C "$tmp" package/dist/echarts.min.js package/LICENSE package/NOTICE

got=$(sum "$tmp/package/dist/echarts.min.js")
if [ "$got" != "$ECHARTS_SHA256" ]; then
	echo "fetch-echarts.sh: echarts@$ECHARTS_VERSION dist/echarts.min.js has sha256 $got, want $ECHARTS_SHA256" >&2
	exit 1
fi

# Rename into place so that a failed run never leaves half a file to be embedded.
cp "$tmp/package/dist/echarts.min.js" "$out.tmp"
mv "$out.tmp" "$out"
cp "$tmp/package/LICENSE" "$dir/echarts.LICENSE"
cp "$tmp/package/NOTICE" "$dir/echarts.NOTICE"
(cd "$dir" && sha256sum echarts.min.js >echarts.min.js.sha256)
echo "fetch-echarts.sh: echarts@$ECHARTS_VERSION -> $out" >&2
