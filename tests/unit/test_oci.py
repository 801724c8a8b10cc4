"""The image tooling's pure parts (tools/oci): which files of a build context count, and how Polycrate's
Dockerfile.goreleaser becomes the stand-in's Containerfile.

Mutation checks (done once): matching .dockerignore patterns against the file name only (not the folders
above it) turned test_context_files_follow_dockerignore red; keeping the download step turned
test_polycrate_containerfile_keeps_what_it_can red."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from tools.oci import OCIError, context_files, digest, images

ARCHIVE = images.shared_dir() / "polycrate" / f"polycrate-v{images.POLYCRATE_VERSION}.tar.gz"


def test_context_files_follow_dockerignore(tmp_path: Path) -> None:
    for name in ("go.mod", "cmd/envoy-waf/main.go", "bin/envoy-waf", "internal/x/__pycache__/a.pyc", "server.test"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name, encoding="utf-8")
    (tmp_path / ".dockerignore").write_text("# outputs\nbin\n*.test\n**/__pycache__\n", encoding="utf-8")
    names = [str(p.relative_to(tmp_path)) for p in context_files(tmp_path)]
    assert names == [".dockerignore", "cmd/envoy-waf/main.go", "go.mod"]


def test_the_waf_context_leaves_build_outputs_out() -> None:
    """A locally built waf/bin/envoy-waf neither goes into the image build nor forces a rebuild."""
    waf = Path(__file__).resolve().parents[2] / "waf"
    assert not [p for p in context_files(waf) if p.relative_to(waf).parts[0] == "bin"]


def test_digest_changes_with_content_only(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("1", encoding="utf-8")
    first = digest([("a", tmp_path / "a")], "arg")
    assert digest([("a", tmp_path / "a")], "arg") == first
    (tmp_path / "a").write_text("2", encoding="utf-8")
    assert digest([("a", tmp_path / "a")], "arg") != first


@pytest.mark.skipif(not ARCHIVE.exists(), reason="../shared/polycrate is not there")
def test_polycrate_containerfile_keeps_what_it_can() -> None:
    with tarfile.open(ARCHIVE) as tar:
        member = tar.extractfile(f"polycrate-{images.POLYCRATE_VERSION}/Dockerfile.goreleaser")
        assert member is not None
        original = member.read().decode()
    derived = images.polycrate_containerfile(original)
    assert derived.startswith("FROM python:3.11-slim\n")
    for gone in ("docker:dind", "dl.k8s.io", "get.helm.sh", "helm plugin install", "ansible-galaxy"):
        assert gone not in derived
    assert "COPY image-bin/kubectl image-bin/helm /usr/local/bin/" in derived
    # The apt step, the pip steps, hack/ and the binary are kept as written.
    for kept in ("build-essential", "pip install --no-cache-dir -r python-requirements.txt", "poly-utils"):
        assert kept in derived
    assert 'ENTRYPOINT ["polycrate"]' in derived
    with pytest.raises(OCIError, match="not the one"):
        images.polycrate_containerfile(original.replace("ansible-galaxy", "galaxy-cli"))


def test_the_node_has_envoy_under_the_block_default_tag(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cluster tests install the default config: its proxy image (config.schema.json's image.proxy.tag,
    newer than v1.9.1's own pin) is among the node's images beside each release's pin."""
    fake = Path("/nonexistent/envoy-gateway")
    monkeypatch.setattr(images, "envoy_gateway_binaries", lambda: {"v1.9.1": fake})
    refs = images.node_image_refs()
    assert images.default_proxy_tag() == "distroless-v1.39.6"
    assert f"{images.ENVOY_REPOSITORY}:distroless-v1.39.6" in refs
    assert f"{images.ENVOY_REPOSITORY}:distroless-v1.39.1" in refs  # v1.9.1's pin: the upgrade scenarios
    assert len(refs) == len(set(refs))
