"""A real Kubernetes cluster on this machine (one node or several), for the cluster tests, molecule and trying
the block.

etcd, kube-apiserver and kube-controller-manager (controlplane.py), and a real node (node.py): containerd +
runc, the bridge CNI, the kubelet, kube-proxy, kube-scheduler, kube-router (NetworkPolicy) and CoreDNS as a
pod, each built from its pinned Go module (tools/build-go.sh) or Debian's package, all inside a network and
mount namespace of the harness's own. Pods run from images built here (`make images`) and imported, never
pulled. A real MetalLB in L2 mode is the LoadBalancer provider (metallb.py); kube-proxy serves the addresses it
assigns. Entry point: `python -m tests.harness` (__main__.py).
"""
