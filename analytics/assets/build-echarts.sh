#!/bin/sh
# build-echarts.sh: rebuild the committed echarts.min.js (with its checksum file,
# license and notice) from the pinned releases on the npm registry: the parts of
# Apache ECharts that echarts-entry.js names, bundled and minified with esbuild.
# Only needed to change versions or parts: builds use the committed copy and never
# run this. The build is reproducible: the same pins give the same bytes, which
# must have the pinned checksum.
# Idempotent: does nothing when the file is already there with the pinned checksum.
# Needs npm and sha256sum; writes nothing else outside a temp dir.
set -eu

ECHARTS_VERSION=5.6.0
ZRENDER_VERSION=5.6.1
TSLIB_VERSION=2.3.0
ESBUILD_VERSION=0.25.12
ECHARTS_SHA256=d6761e4e489a9ee6e6f5c03fac84d05f4b17a238d2675fc35b4723704e20b958

dir=$(cd "$(dirname "$0")" && pwd)
out="$dir/echarts.min.js"

sum() { sha256sum "$1" | cut -d' ' -f1; }

if [ -f "$out" ] && [ "$(sum "$out")" = "$ECHARTS_SHA256" ]; then
	echo "build-echarts.sh: echarts@$ECHARTS_VERSION is already in place" >&2
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cp "$dir/echarts-entry.js" "$tmp/entry.js"
(cd "$tmp" && echo '{"private":true}' >package.json &&
	npm install --silent --no-audit --no-fund --no-save \
		"echarts@$ECHARTS_VERSION" "zrender@$ZRENDER_VERSION" "tslib@$TSLIB_VERSION" "esbuild@$ESBUILD_VERSION" >/dev/null &&
	./node_modules/.bin/esbuild entry.js --bundle --minify --format=iife --target=es2017 \
		--legal-comments=none --log-level=warning \
		"--banner:js=/*! Apache ECharts $ECHARTS_VERSION with zrender $ZRENDER_VERSION: the parts analytics.html uses (echarts-entry.js), bundled with esbuild $ESBUILD_VERSION. Licensed to the Apache Software Foundation (ASF) under one or more contributor license agreements (see echarts.NOTICE); the ASF licenses this file to you under the Apache License, Version 2.0 (see echarts.LICENSE). */" \
		--outfile=echarts.min.js)

got=$(sum "$tmp/echarts.min.js")
if [ "$got" != "$ECHARTS_SHA256" ]; then
	echo "build-echarts.sh: the build of echarts@$ECHARTS_VERSION has sha256 $got, want $ECHARTS_SHA256" >&2
	exit 1
fi

# Rename into place so that a failed run never leaves half a file to be embedded.
cp "$tmp/echarts.min.js" "$out.tmp"
mv "$out.tmp" "$out"
cp "$tmp/node_modules/echarts/LICENSE" "$dir/echarts.LICENSE"
cp "$tmp/node_modules/echarts/NOTICE" "$dir/echarts.NOTICE"
(cd "$dir" && sha256sum echarts.min.js >echarts.min.js.sha256)
echo "build-echarts.sh: echarts@$ECHARTS_VERSION -> $out" >&2
