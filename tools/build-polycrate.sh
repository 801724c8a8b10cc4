#!/usr/bin/env bash
# Build the published Polycrate CLI v0.23.3, unmodified, from the source archive in ../shared/polycrate into
# DEST/polycrate (.tools/bin). Its tests run the block the way users do: `polycrate run envoy install`.
# Only the Go module proxy is used. Rebuilt only when the archive (its sha256) or the Go version changes.
# Usage: tools/build-polycrate.sh DEST [ARCHIVE]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "${1:?destination folder}"
dest=$(cd "$1" && pwd)
archive=${2:-$here/../../shared/polycrate/polycrate-v0.23.3.tar.gz}
version=0.23.3
# The archive SOURCES.md names (git archive of tag v0.23.3, commit 1cabcfc).
sha256=d7168ed9b5abfdf4f5819d0e3b4653efb0064ebd0745d1491d02b51d2a3924bb
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly

if [[ ! -f $archive ]]; then
  echo "build-polycrate: $archive is missing (Polycrate's source, see ../shared/polycrate/SOURCES.md)" >&2
  exit 1
fi
have=$(sha256sum "$archive" | cut -d' ' -f1)
if [[ $have != "$sha256" ]]; then
  echo "build-polycrate: $archive has sha256 $have, expected $sha256 (v$version)" >&2
  exit 1
fi
# The release's own ldflags (.goreleaser.yaml): the version also names the container image Polycrate runs.
ldflags="-s -w -X polycrate/cmd.version=$version -X polycrate/cmd.commit=1cabcfcf808fa25a9513ece3adfd6da256bdb494 -X polycrate/cmd.builtBy=envoy-block"
stamp=$( (go version; echo "$sha256 $ldflags") | sha256sum | cut -c1-16)
mkdir -p "$dest/../stamps"
stampfile=$(cd "$dest/../stamps" && pwd)/polycrate
if [[ -x $dest/polycrate && -f $stampfile && $(cat "$stampfile") == "$stamp" ]]; then
  echo "go build polycrate: up to date"
  exit 0
fi
start=$SECONDS
src=$(cd "$dest/.." && pwd)/src
rm -rf "$src/polycrate-$version"
mkdir -p "$src"
tar -xzf "$archive" -C "$src"
# go.mod's replace directives name folders outside the archive; nothing requires those modules, so Go
# ignores them.
(cd "$src/polycrate-$version" && go build -trimpath -ldflags "$ldflags" -o "$dest/polycrate" .)
echo "$stamp" >"$stampfile"
echo "go build polycrate: $((SECONDS - start)) s"
