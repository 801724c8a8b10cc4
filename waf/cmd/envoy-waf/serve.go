package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"

	"polycrate.local/envoy/waf/internal/audit"
	"polycrate.local/envoy/waf/internal/rx"
	"polycrate.local/envoy/waf/internal/settings"
)

const (
	// GracePeriod is how long open streams get after SIGTERM (the pod's grace period is 15 s).
	GracePeriod = 5 * time.Second
	// Service is the ext_proc service name, also answered by the health check.
	Service = "envoy.service.ext_proc.v3.ExternalProcessor"
)

// serve listens on s.Listen (and s.MetricsPort), serves the engine until SIGTERM or SIGINT, then drains.
// It returns nil after a drain, an error when a listener cannot open or the gRPC server stops by itself.
func serve(s settings.Settings, e engine, t tuning, log *audit.Writer) error {
	listener, err := net.Listen("tcp", s.Listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", s.Listen, err)
	}
	grpcServer, healthServer := newGRPCServer(s, e.waf)
	metricsServer, err := startMetrics(s.MetricsPort, e.metrics.Registry, log)
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- grpcServer.Serve(listener) }()
	// The rules are loaded and the listener accepts: from now on every stream gets a verdict.
	healthServer.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	healthServer.SetServingStatus(Service, healthpb.HealthCheckResponse_SERVING)
	log.Event("ready", map[string]any{
		"port":            listener.Addr().(*net.TCPAddr).Port,
		"mode":            s.Mode,
		"paranoia_level":  s.ParanoiaLevel,
		"gomaxprocs":      runtime.GOMAXPROCS(0),
		"gomemlimit":      t.memLimit,
		"gogc":            t.gogc,
		"rules_loaded_ms": e.loaded.Milliseconds(),
		"regex":           rx.Engine,
		"pid":             os.Getpid(),
	})

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	select {
	case sig := <-signals:
		log.Event("draining", map[string]any{"signal": sig.String(), "grace_seconds": GracePeriod.Seconds()})
	case err := <-served:
		return fmt.Errorf("serving: %w", err)
	}
	drain(grpcServer, healthServer, metricsServer)
	log.Event("stopped", nil)
	return nil
}

// maxRecvMsgSize is the largest gRPC message taken: Envoy sends a buffered body as one message, so twice
// the larger body limit plus 1 MiB, and never under 8 MiB.
func maxRecvMsgSize(bodyLimit, responseBodyLimit int) int {
	return max(8<<20, 2*max(bodyLimit, responseBodyLimit)+(1<<20))
}

// newGRPCServer is the gRPC server with the ext_proc service (waf) and the health service registered,
// health NOT_SERVING (overall and for Service) until serve has the listener accepting.
func newGRPCServer(s settings.Settings, waf extproc.ExternalProcessorServer) (*grpc.Server, *health.Server) {
	grpcServer := grpc.NewServer(
		// Envoy sends a buffered body as one message.
		grpc.MaxRecvMsgSize(maxRecvMsgSize(s.BodyLimit, s.ResponseBodyLimit)),
		// Envoy keeps its connections for long; pings from it are welcome.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
	)
	extproc.RegisterExternalProcessorServer(grpcServer, waf)
	healthServer := health.NewServer()
	healthServer.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	healthServer.SetServingStatus(Service, healthpb.HealthCheckResponse_NOT_SERVING)
	healthpb.RegisterHealthServer(grpcServer, healthServer)
	return grpcServer, healthServer
}

// startMetrics serves registry on :port at /metrics in the background (a failure after the listener opened
// is logged as metrics_failed). port 0 or less: no metrics server, nil.
func startMetrics(port int, registry *prometheus.Registry, log *audit.Writer) (*http.Server, error) {
	if port <= 0 {
		return nil, nil
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	metricsServer := &http.Server{Addr: ":" + strconv.Itoa(port), Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	metricsListener, err := net.Listen("tcp", metricsServer.Addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listen %s: %w", metricsServer.Addr, err)
	}
	go func() {
		if err := metricsServer.Serve(metricsListener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Event("metrics_failed", map[string]any{"error": err.Error()})
		}
	}()
	return metricsServer, nil
}

// drain stops in this order: health NOT_SERVING, no new streams while open ones get GracePeriod to finish
// (then they are cut), and the metrics server (nil: none) within a second.
func drain(grpcServer *grpc.Server, healthServer *health.Server, metricsServer *http.Server) {
	healthServer.Shutdown()
	stopped := make(chan struct{})
	go func() { grpcServer.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(GracePeriod):
		grpcServer.Stop()
	}
	if metricsServer != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = metricsServer.Shutdown(ctx) // a scrape in flight may be cut: harmless
	}
}
