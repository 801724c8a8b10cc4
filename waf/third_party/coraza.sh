#!/bin/sh
# Lays out third_party/coraza: Coraza at VERSION from the Go module proxy, its module hash checked against
# SUM (the go.sum line of that version), with the PATCHES below applied in order. go.mod replaces
# github.com/corazawaf/coraza/v3 with that folder (waf/BUILD.md, "The per-argument cut").
#
# Why patches: Coraza's cost grows with rules x arguments, and several of its costs are waste that no option
# or build tag in v3.8.1 (the newest release) turns off. Its per-phase transformation cache is
# keyed by the argument's position, which map-backed collections change on every call (upstream issue
# https://github.com/corazawaf/coraza/issues/1681, open): coraza-issue-1681.patch keys it by the value, in
# a row per value. And every rule's read of a whole collection built a new MatchData per value:
# coraza-field-memo.patch memoises the read while the collection is unchanged. And every rule filled the
# RULE collection, which the CRS never reads: coraza-rule-collection.patch fills it only once something can
# read it. And per-rule work on every request (exceptions lowering keys into new strings, single values
# rebuilt per read, ctl's by-tag actions scanning every rule): coraza-request-costs.patch. None changes a
# verdict (each patch's header says why). Moving to a new Coraza release: update VERSION and SUM (and
# go.mod's require), and drop a patch once upstream has the fix. The build fails here when the module or a patch
# does not match.
set -eu
VERSION=v3.8.1
SUM=h1:dMV55FbMR2vOks/acrT43RShR+VkzU6jwp+XPdxay8o=
here=$(cd "$(dirname "$0")" && pwd)
out="$here/coraza"
stamp="$out/.patched"
# Applied in this order; each is a unified diff with a header saying what it changes and why.
PATCHES="coraza-issue-1681.patch coraza-field-memo.patch coraza-rule-collection.patch coraza-request-costs.patch"
want="$VERSION $SUM $(for patch in $PATCHES; do cat "$here/$patch"; done | cat "$0" - | sha256sum | cut -d' ' -f1)" # this script and the patches
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    touch "$stamp" # up to date: newer than the script and the patches, so make stops asking
    exit 0
fi
# Outside any module (no replace applies); the hash is checked here against SUM, the same pin go.sum holds,
# so the checksum database is not needed.
info=$(cd / && GOFLAGS=-modcacherw GOSUMDB=off go mod download -json "github.com/corazawaf/coraza/v3@$VERSION")
got=$(printf '%s\n' "$info" | sed -n 's/^[[:space:]]*"Sum": "\(.*\)",*$/\1/p')
dir=$(printf '%s\n' "$info" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
if [ "$got" != "$SUM" ]; then
    echo "coraza.sh: github.com/corazawaf/coraza/v3@$VERSION has hash '$got', expected $SUM" >&2
    exit 1
fi
rm -rf "$out"
cp -R "$dir" "$out"
chmod -R u+w "$out"
# Only what the build compiles (Go sources, go.mod/go.sum, templates) and the licence: no CI or tool
# configuration (the block's linters would read its YAML), docs, tests, nested modules or workspace.
rm -rf "$out/testing" "$out/examples" "$out/docs"
find "$out" -name testdata -type d -prune -exec rm -rf {} +
find "$out" -type f ! -name '*.go' ! -name '*.tmpl' ! -name go.mod ! -name go.sum ! -name LICENSE -delete
find "$out" -type f -name '*_test.go' -delete
# git apply outside any repository (the ceiling stops it finding the block's): it patches like patch(1),
# and refuses a patch that does not apply cleanly.
for patch in $PATCHES; do
    (cd "$out" && GIT_CEILING_DIRECTORIES="$here" git apply -p1 "$here/$patch")
done
printf '%s\n' "$want" >"$stamp"
