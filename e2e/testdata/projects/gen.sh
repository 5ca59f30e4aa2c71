#!/bin/sh
# Regenerates the archives of the real projects the end-to-end tests of
# realprojects_test.go run on, and their bugs, from the registries:
#
#   go-humanize 1.0.1  the Go module proxy (go mod download)
#   humanize 4.9.0     github.com/python-humanize/humanize, tag 4.9.0
#   ufo 1.6.3          github.com/unjs/ufo, tag v1.6.3
#
# Usage: gen.sh HUMANIZE_GIT_DIR UFO_GIT_DIR (clones of the two repositories).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
humanize_git=$1
ufo_git=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# archive DIR OUT writes every file of DIR as a txtar archive.
archive() {
	(cd "$1" && find . -type f ! -path './.git/*' | sed 's,^\./,,' | LC_ALL=C sort | while read -r f; do
		printf -- '-- %s --\n' "$f"
		cat "$f"
		[ -z "$(tail -c 1 "$f")" ] || echo
	done) > "$2"
}

# bug DIR NAME FILE SED writes NAME.patch: the change SED makes to FILE.
bug() {
	(cd "$1" && sed -i "$4" "$3" && git diff > "$here/$2" && git checkout -q .)
}

# go-humanize: the module's zip as the proxy serves it.
dir=$(GOFLAGS=-mod=mod go mod download -json github.com/dustin/go-humanize@v1.0.1 | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
cp -r "$dir" "$tmp/go-humanize" && chmod -R u+w "$tmp/go-humanize"
(cd "$tmp/go-humanize" && git init -q && git add -A && git -c user.name=gen -c user.email=gen@localhost commit -qm v1.0.1)
archive "$tmp/go-humanize" "$here/go-humanize/project.txtar"
bug "$tmp/go-humanize" go-humanize/ordinals.patch ordinals.go 's/if x%100 != 11 {/if x%10 != 11 {/'
bug "$tmp/go-humanize" go-humanize/comma.patch comma.go '0,/parts\[j\] = "00" + parts\[j\]/s//parts[j] = "0" + parts[j]/'
bug "$tmp/go-humanize" go-humanize/bytes.patch bytes.go 's/if val < 10 {/if val < 1 {/'
bug "$tmp/go-humanize" go-humanize/plural.patch english/words.go "s/if l >= 2 \&\& singular\[l-1\] == 'o'/if l >= 2 \&\& singular[l-1] == 'x'/"
bug "$tmp/go-humanize" go-humanize/si.patch si.go 's/3:   "k", \/\/ kilo/3:   "K", \/\/ kilo/'

# humanize: the tag's tree without its CI files and translations (the
# tests of translations skip without compiled catalogs, as they do in a
# fresh clone); pytest finds the package in src/ (pythonpath), and its
# version in the metadata an editable install would write.
mkdir "$tmp/humanize"
git -C "$humanize_git" archive 4.9.0 | tar -x -C "$tmp/humanize"
rm -rf "$tmp/humanize/.github" "$tmp/humanize/src/humanize/locale"
sed -i 's/^addopts = "--color=yes"$/&\npythonpath = ["src"]/' "$tmp/humanize/pyproject.toml"
mkdir "$tmp/humanize/src/humanize-4.9.0.dist-info"
printf 'Metadata-Version: 2.1\nName: humanize\nVersion: 4.9.0\n' > "$tmp/humanize/src/humanize-4.9.0.dist-info/METADATA"
(cd "$tmp/humanize" && git init -q && git add -A && git -c user.name=gen -c user.email=gen@localhost commit -qm 4.9.0)
archive "$tmp/humanize" "$here/humanize/project.txtar"
bug "$tmp/humanize" humanize/ordinal.patch src/humanize/number.py 's/if value % 100 in (11, 12, 13):/if value % 100 in (11, 12):/'
bug "$tmp/humanize" humanize/naturalsize.patch src/humanize/filesize.py 's/return "%d Byte" % bytes_/return "%d Bytes" % bytes_/'
bug "$tmp/humanize" humanize/naturaldelta.patch src/humanize/time.py 's/return _("a month")/return _("one month")/'

# ufo: the tag's tree without its CI files; npm test runs the tests alone
# (the project's own also lints and type-checks, with tools not installed).
mkdir "$tmp/ufo"
git -C "$ufo_git" archive v1.6.3 | tar -x -C "$tmp/ufo"
rm -rf "$tmp/ufo/.github"
sed -i 's/"test": "pnpm lint && vitest run --typecheck"/"test": "vitest run"/' "$tmp/ufo/package.json"
(cd "$tmp/ufo" && git init -q && git add -A && git -c user.name=gen -c user.email=gen@localhost commit -qm v1.6.3)
archive "$tmp/ufo" "$here/ufo/project.txtar"
bug "$tmp/ufo" ufo/parse.patch src/parse.ts 's/    path = path.replace(\/\\\/(?=\[A-Za-z\]:)\/, "");/    path = path.replace(\/\\\/(?=[a-z]:)\/, "");/'
bug "$tmp/ufo" ufo/query.patch src/query.ts 's/if (typeof value === "number" || typeof value === "boolean") {/if (typeof value === "number") {/'
bug "$tmp/ufo" ufo/utils.patch src/utils.ts 's/return \["\.\/", "\.\.\/"\]/return ["\.\/"]/'

# Each project's licence, beside its archive too.
cp "$tmp/go-humanize/LICENSE" "$here/go-humanize/LICENSE"
cp "$tmp/humanize/LICENCE" "$here/humanize/LICENCE"
cp "$tmp/ufo/LICENSE" "$here/ufo/LICENSE"
