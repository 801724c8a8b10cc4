# The virtualenvs (each rebuilt only when its pins change) and the Debian packages, one rule per package.
.PHONY: image-venv

# The WAF service has its own environment (it is its own package and image).
WAF_VENV := .venv-waf
WAF_BIN := $(CURDIR)/$(WAF_VENV)/bin
WAF_STAMP := $(WAF_VENV)/.installed-$(shell sha256sum waf/requirements.txt | cut -c1-12)
# Polycrate's image Python (container mode): its lock as the image installs it, plus test tools only.
IMAGE_VENV := .venv-image
IMAGE_LOCK := ../shared/polycrate/image-python-requirements.lock
IMAGE_BIN := $(CURDIR)/$(IMAGE_VENV)/bin
# Without ../shared (a clone alone) the targets that need it stop at the first file missing from it; `make help`
# and `make render` work.
IMAGE_STAMP := $(IMAGE_VENV)/.installed-$(shell cat $(IMAGE_LOCK) requirements-image-tests.txt 2>/dev/null | sha256sum | cut -c1-12)

$(STAMP): requirements.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --disable-pip-version-check --no-input -q -r requirements.txt
	@rm -f $(VENV)/.installed-* && touch $@

$(WAF_STAMP): waf/requirements.txt
	@test -x $(WAF_BIN)/python || $(PYTHON) -m venv $(WAF_VENV)
	$(WAF_BIN)/pip install --disable-pip-version-check --no-input -q -r waf/requirements.txt
	@rm -f $(WAF_VENV)/.installed-* && touch $@

# The lock first, alone, as the image does; then the test tools constrained by it (pip fails rather than move one).
$(IMAGE_STAMP): $(IMAGE_LOCK) requirements-image-tests.txt
	@test -x $(IMAGE_BIN)/python || $(PYTHON) -m venv $(IMAGE_VENV)
	$(IMAGE_BIN)/pip install --disable-pip-version-check --no-input -q -r $(IMAGE_LOCK)
	$(IMAGE_BIN)/pip install --disable-pip-version-check --no-input -q -c $(IMAGE_LOCK) -r requirements-image-tests.txt
	@rm -f $(IMAGE_VENV)/.installed-* && touch $@

## image-venv: the block's Python as Polycrate's image has it (.venv-image), for the second unit pass
image-venv: $(IMAGE_STAMP)

# Debian packages: one package per rule, keyed on a file that package installs, so a machine that already has
# one of them still gets the others (a fresh clone with buildah but no docker.io once failed with
# `unshare: failed to execute dockerd`).
apt = apt-get install -y -q --no-install-recommends $(1) >/dev/null 2>&1 || \
  { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends $(1) >/dev/null; }
# The local OCI registry the cluster tests serve the real charts from (CNCF distribution).
REGISTRY := /usr/bin/docker-registry
$(REGISTRY): ; $(call apt,docker-registry)
LIBRE2 := /usr/include/re2/re2.h
$(LIBRE2): ; $(call apt,libre2-dev)
PKG_CONFIG := /usr/bin/pkg-config
$(PKG_CONFIG): ; $(call apt,pkg-config)
# curl with HTTP/2 drives the WAF's body-buffer tests over h2c.
CURL := /usr/bin/curl
$(CURL): ; $(call apt,curl)
# wrk drives make bench-waf's load (not needed by make test).
WRK := /usr/bin/wrk
$(WRK): ; $(call apt,wrk)
# Images without a Docker engine (tools/oci): buildah (vfs, chroot isolation), crun, mmdebstrap; dockerd 20.10
# for Polycrate's container mode.
BUILDAH := /usr/bin/buildah
$(BUILDAH): ; $(call apt,buildah)
CRUN := /usr/bin/crun
$(CRUN): ; $(call apt,crun)
MMDEBSTRAP := /usr/bin/mmdebstrap
$(MMDEBSTRAP): ; $(call apt,mmdebstrap)
DOCKERD := /usr/sbin/dockerd
$(DOCKERD): ; $(call apt,docker.io)
OCI_DEPS := $(BUILDAH) $(CRUN) $(MMDEBSTRAP)
# The real node (tests/harness/node.py): runc's seccomp (cgo), kube-proxy's and kube-router's iptables, ipset
# and conntrack, the bridge/host-local/loopback/portmap CNI plugins.
LIBSECCOMP := /usr/include/seccomp.h
$(LIBSECCOMP): ; $(call apt,libseccomp-dev)
IPTABLES := /usr/sbin/iptables
$(IPTABLES): ; $(call apt,iptables)
IPSET := /usr/sbin/ipset
$(IPSET): ; $(call apt,ipset)
CONNTRACK := /usr/sbin/conntrack
$(CONNTRACK): ; $(call apt,conntrack)
CNI_PLUGINS := /usr/lib/cni/bridge
$(CNI_PLUGINS): ; $(call apt,containernetworking-plugins)
NODE_DEPS := $(IPTABLES) $(IPSET) $(CONNTRACK) $(CNI_PLUGINS)
