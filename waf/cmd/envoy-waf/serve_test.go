package main

import (
	"context"
	"testing"

	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"polycrate.local/envoy/waf/internal/settings"
)

// A buffered body arrives as one gRPC message: the limit is twice the larger body limit plus 1 MiB, never
// under 8 MiB. Mutation: reading only the request body limit -> red (response-larger).
func TestMaxRecvMsgSize(t *testing.T) {
	cases := []struct {
		name               string
		bodyLimit, respond int
		want               int
	}{
		{"defaults", 131072, 65536, 8 << 20},
		{"request-larger", 8 << 20, 1 << 20, 17 << 20},
		{"response-larger", 1 << 20, 8 << 20, 17 << 20},
		{"at-the-floor", 7 << 19, 0, 8 << 20},
		{"zero", 0, 0, 8 << 20},
	}
	for _, c := range cases {
		if got := maxRecvMsgSize(c.bodyLimit, c.respond); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// The gRPC server carries ext_proc and health, health NOT_SERVING until serve marks it; drain turns it
// NOT_SERVING again and stops the server. Mutation: registering health SERVING -> red (before), skipping
// healthServer.Shutdown in drain -> red (after).
func TestHealthAroundServing(t *testing.T) {
	grpcServer, healthServer := newGRPCServer(settings.Settings{}, extproc.UnimplementedExternalProcessorServer{})
	info := grpcServer.GetServiceInfo()
	for _, name := range []string{Service, healthpb.Health_ServiceDesc.ServiceName} {
		if _, ok := info[name]; !ok {
			t.Errorf("service %s not registered: %v", name, info)
		}
	}
	status := func(when string, want healthpb.HealthCheckResponse_ServingStatus) {
		t.Helper()
		for _, name := range []string{"", Service} {
			got, err := healthServer.Check(context.Background(), &healthpb.HealthCheckRequest{Service: name})
			if err != nil || got.GetStatus() != want {
				t.Errorf("%s: %q is %v (%v), want %v", when, name, got.GetStatus(), err, want)
			}
		}
	}
	status("before", healthpb.HealthCheckResponse_NOT_SERVING)
	healthServer.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	healthServer.SetServingStatus(Service, healthpb.HealthCheckResponse_SERVING)
	status("serving", healthpb.HealthCheckResponse_SERVING)
	drain(grpcServer, healthServer, nil)
	status("after", healthpb.HealthCheckResponse_NOT_SERVING)
}
