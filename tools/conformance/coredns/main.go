// Command coredns is CoreDNS with the plugins the Gateway API conformance suite's UDP backend names in its
// Corefile (conformance/base/manifests.yaml): the real node's own CoreDNS (tools/go/coredns) lacks log and
// whoami, and an unknown plugin stops CoreDNS at start, which keeps the suite's infra namespace from ever
// turning ready.
package main

import (
	_ "github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/whoami"
)

func main() {
	coremain.Run()
}
