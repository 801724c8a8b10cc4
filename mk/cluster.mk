# The real node and the clusters made of it (tests/harness): the node's own proof, the cluster scenarios on one
# and on three nodes, molecule, Polycrate's container mode and the Gateway API conformance suite.
.PHONY: node-test cluster-test cluster-test-nodes cluster-suite molecule molecule-cluster container-mode-test mutation-node conformance conformance-core conformance-publish

## node-test: prove the real node: kubelet, containerd, runc, CNI, kube-proxy, scheduler, CoreDNS, kube-router, MetalLB
# The real node (tests/harness/node.py: kubelet, containerd, runc, CNI, kube-proxy, kube-scheduler, kube-router,
# CoreDNS) in a network and mount namespace of its own, with the images `make images` built: Ready node, a
# Deployment with real probes, a Service through kube-proxy and CoreDNS, no image pulled; a real MetalLB (L2)
# assigning, refusing and announcing LoadBalancer addresses (tests/node/test_metallb.py).
node-test: $(STAMP) tools node-images $(NODE_DEPS)
	@dir=$$(mktemp -d) && trap 'rm -rf $$dir' EXIT && \
	  $(BIN)/python -m tests.harness --dir $$dir --images -- $(BIN)/pytest -s tests/node

## cluster-test: the cluster scenarios on the real node with the real controller, proxies and WAF as pods
# The playbooks against the real single-node cluster (tests/harness: control plane and a real node in a network
# and mount namespace the pytest process enters), the controller, certgen, proxies and WAF as pods from the
# images built here. Two sessions side by side (CLUSTER_WORKERS, pytest-xdist), each with a control plane and a
# node of its own in its own namespaces, a test file at a time on each (a file's shared install stays on one):
# the scenarios mostly wait on the cluster, so two halve the wall time for about 2 GiB more memory. No image
# may be pulled (checked at the end of each session). The tests marked three_nodes run in cluster-test-nodes.
CLUSTER_WORKERS ?= 2
cluster-test: $(STAMP) $(WAF_STAMP) tools node-images $(REGISTRY) $(IMAGE_STAMP) $(NODE_DEPS)
	$(BIN)/pytest -n $(CLUSTER_WORKERS) --dist loadfile --durations=12 -m "not three_nodes" tests/cluster

## cluster-test-nodes: three real nodes behind MetalLB: the edge and a node loss, a drain, policies across nodes
# One session with three real nodes on one L2 segment (tests/harness/lan.py), two zones, a real MetalLB (L2): the
# tests marked three_nodes (pyproject.toml's markers). The proxy rollouts and the patch upgrade are among them,
# not on one node: a surge and a handover across nodes.
cluster-test-nodes: $(STAMP) $(WAF_STAMP) tools node-images $(REGISTRY) $(IMAGE_STAMP) $(NODE_DEPS)
	HARNESS_NODES=3 $(BIN)/pytest --durations=8 -m three_nodes tests/cluster

## molecule: the real playbooks through molecule against the real node
# The real playbooks against the real single-node cluster (tests/harness), through molecule (converge, idempotence,
# verify, uninstall check), which runs inside the harness's namespace.
molecule: $(STAMP) tools node-images $(NODE_DEPS)
	@dir=$$(mktemp -d) && trap 'rm -rf $$dir' EXIT && \
	  $(BIN)/python -m tests.harness --dir $$dir --images -- $(BIN)/molecule test -s default

## container-mode-test: the block's life cycle through Polycrate in container mode
# The block's life cycle through Polycrate in container mode (its default): dockerd 20.10 started by the test,
# the stand-in image, the real node (tests/harness): `-p tests.cluster.conftest` enters its namespaces. The test
# marked container_mode, which unit-go leaves out.
container-mode-test: images tools $(REGISTRY) $(DOCKERD) $(NODE_DEPS)
	$(BIN)/pytest -p tests.cluster.conftest -m container_mode tests/polycrate

## mutation-node: the mutations judged on the real node (tools/mutate.py --node); minutes each, not in make test
# Each breaks one network policy rule in the builder, installs the block on a real node under default-deny and
# requires tests/cluster/test_real_flows.py's enforced matrix to go red (about 5 min each, two at a time).
mutation-node: $(STAMP) tools node-images $(REGISTRY) $(NODE_DEPS)
	$(BIN)/python tools/mutate.py --node

# The block installed on the real node by its install playbook, network policies on in a default-deny cluster,
# then the suite against each GatewayClass (tests/conformance, docs/conformance.md): upstream's report format into
# $(ARTIFACTS)/conformance/<class>-report.yaml. Fails when eg-dedicated falls short of Envoy Gateway's v1.9.0
# report; eg-shared is reported (docs/conformance.md explains its failures).
CONFORMANCE_RUN := PYTHONPATH=$(PKG):. $(BIN)/python -m tests.conformance
## conformance: the Gateway API conformance suite on the block's own install, eg-dedicated and eg-shared (reports)
conformance: $(STAMP) $(WAF_STAMP) tools node-images conformance-images $(REGISTRY) $(NODE_DEPS)
	$(CONFORMANCE_RUN) --out $(ARTIFACTS)/conformance

## conformance-publish: copy make conformance's reports into docs/conformance/ (same content, yamllint's layout)
conformance-publish: $(STAMP)
	PYTHONPATH=$(PKG):. $(BIN)/python -m tests.conformance.publish $(ARTIFACTS)/conformance docs/conformance

## conformance-core: the conformance core tests of the three profiles on eg-dedicated (in make test)
conformance-core: $(STAMP) $(WAF_STAMP) tools node-images conformance-images $(REGISTRY) $(NODE_DEPS)
	$(BIN)/pytest -q tests/conformance
	$(CONFORMANCE_RUN) --core --class eg-dedicated --out $(ARTIFACTS)/conformance-core

## molecule-cluster: molecule against your own cluster (KUBECONFIG); not part of make test
# Against a real cluster: needs KUBECONFIG, helm on PATH and registry access. Not part of `make test`.
molecule-cluster: $(STAMP)
	@if [ -z "$$KUBECONFIG" ]; then echo "molecule-cluster SKIPPED: set KUBECONFIG to a real cluster (kind, k3d, any)"; exit 0; fi
	$(BIN)/molecule test -s cluster

## cluster-suite: node-test, cluster-test, the three-node scenarios, molecule and container mode
cluster-suite:
	$(BIN)/python tools/jobs.py $(CLUSTER_JOB) $(NODES_JOB) $(NODE_JOB)
