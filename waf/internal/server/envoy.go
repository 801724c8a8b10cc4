package server

import (
	"net"
	"strconv"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/protobuf/types/known/structpb"
)

// headerValue is a header's value as Envoy sends it: Envoy >= 1.27 sends raw_value (bytes); value is then
// empty.
func headerValue(h *corev3.HeaderValue) string {
	if len(h.GetRawValue()) > 0 {
		return string(h.GetRawValue())
	}
	return h.GetValue()
}

// attributes merges the Envoy attributes of every filter namespace in the message.
func attributes(msg *extproc.ProcessingRequest) map[string]*structpb.Value {
	out := map[string]*structpb.Value{}
	for _, s := range msg.GetAttributes() {
		for k, v := range s.GetFields() {
			out[k] = v
		}
	}
	return out
}

// address splits an Envoy address attribute ("1.2.3.4:5", "[::1]:5"); port, when given, wins.
func address(attrs map[string]*structpb.Value, name, portName string) (string, int) {
	host, port := "", 0
	if v, ok := attrs[name]; ok {
		text := v.GetStringValue()
		if h, p, err := net.SplitHostPort(text); err == nil {
			host = h
			port, _ = strconv.Atoi(p) // not a number: no port, as when Envoy sends none
		} else {
			host = text
		}
	}
	if v, ok := attrs[portName]; ok {
		if n := int(v.GetNumberValue()); n > 0 {
			port = n
		} else if n, err := strconv.Atoi(v.GetStringValue()); err == nil {
			port = n
		}
	}
	return host, port
}
