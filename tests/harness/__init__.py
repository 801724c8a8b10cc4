"""A real Kubernetes control plane on this machine, for the tests and the molecule `cluster-local` scenario.

etcd, kube-apiserver, kube-controller-manager and kwok, built from their Go modules (tools/build-go.sh),
run as host processes on loopback. There is no kubelet and no CNI: kwok plays every pod, except the two
that matter, which the harness runs for real (see kubelet.py); the harness also binds pods to nodes (no
kube-scheduler) and plays the LoadBalancer provider (see loadbalancer.py).
"""
