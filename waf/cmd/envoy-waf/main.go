// Command envoy-waf is the WAF's ext_proc service: `envoy-waf --config /etc/envoy-waf/waf.yaml`.
//
// One process: it loads the rules once, then serves the ext_proc and gRPC health services on `listen`
// and Prometheus metrics on metrics_port. Health is SERVING only once the rules are loaded and the
// service takes streams, and NOT_SERVING again while it drains. SIGTERM/SIGINT drain: no new streams,
// open ones get GracePeriod to finish, then the process exits 0. Bad settings or rules exit 1 before
// anything listens, with one line naming the problem.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"

	"polycrate.local/envoy/waf/internal/audit"
	"polycrate.local/envoy/waf/internal/limits"
	"polycrate.local/envoy/waf/internal/rx"
	"polycrate.local/envoy/waf/internal/server"
	"polycrate.local/envoy/waf/internal/settings"
)

const (
	// GracePeriod is how long open streams get after SIGTERM (the pod's grace period is 15 s).
	GracePeriod = 5 * time.Second
	// Service is the ext_proc service name, also answered by the health check.
	Service = "envoy.service.ext_proc.v3.ExternalProcessor"
)

func main() {
	config := flag.String("config", "", "settings YAML (mounted from a ConfigMap)")
	check := flag.Bool("check", false, "only check the settings and build the engine from them (the CRS plus extra_directives, "+
		"as startup does): print the settings as JSON (defaults filled in) and exit; exit 0 means the service would start")
	flag.Parse()
	log := audit.New(os.Stdout)
	if *config == "" {
		fmt.Fprintln(os.Stderr, "envoy-waf: --config FILE is required (the settings YAML, e.g. /etc/envoy-waf/waf.yaml)")
		os.Exit(2)
	}
	if *check {
		s, err := checkSettings(*config)
		if err != nil {
			fmt.Fprintln(os.Stderr, "envoy-waf:", err)
			os.Exit(1)
		}
		if err := json.NewEncoder(os.Stdout).Encode(s); err != nil {
			os.Exit(1)
		}
		return
	}
	if err := run(*config, log); err != nil {
		log.Event("failed", map[string]any{"error": err.Error()})
		fmt.Fprintln(os.Stderr, "envoy-waf:", err)
		os.Exit(1)
	}
}

// checkSettings loads the settings and builds the engine exactly as run does (server.New: the directives,
// the CRS, extra_directives, the warm-up), without listening: a pass means the service would start.
func checkSettings(config string) (settings.Settings, error) {
	s, err := settings.Load(config)
	if err != nil {
		return settings.Settings{}, err
	}
	if _, err := server.New(s, audit.New(io.Discard), server.NewMetrics()); err != nil {
		return settings.Settings{}, err
	}
	return s, nil
}

func run(config string, log *audit.Writer) error {
	s, err := settings.Load(config)
	if err != nil {
		return err
	}
	if s.Workers > 0 {
		runtime.GOMAXPROCS(s.Workers)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		if container := limits.Memory("/sys/fs/cgroup", "/proc/self/cgroup"); container > 0 {
			debug.SetMemoryLimit(limits.SoftLimit(container))
		}
	}
	memLimit := debug.SetMemoryLimit(-1) // the limit in force, however set
	gogc := os.Getenv("GOGC")            // "" is Go's default, 100
	if percent, set := limits.GC(gogc, memLimit); set {
		debug.SetGCPercent(percent)
		gogc = strconv.Itoa(percent)
	} else if gogc == "" {
		gogc = "100"
	}
	metrics := server.NewMetrics()
	started := time.Now()
	waf, err := server.New(s, log, metrics)
	if err != nil {
		return err
	}
	loaded := time.Since(started)
	listener, err := net.Listen("tcp", s.Listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", s.Listen, err)
	}
	grpcServer := grpc.NewServer(
		// Envoy sends a buffered body as one message.
		grpc.MaxRecvMsgSize(max(8<<20, 2*max(s.BodyLimit, s.ResponseBodyLimit)+(1<<20))),
		// Envoy keeps its connections for long; pings from it are welcome.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
	)
	extproc.RegisterExternalProcessorServer(grpcServer, waf)
	healthServer := health.NewServer()
	healthServer.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	healthServer.SetServingStatus(Service, healthpb.HealthCheckResponse_NOT_SERVING)
	healthpb.RegisterHealthServer(grpcServer, healthServer)

	var metricsServer *http.Server
	if s.MetricsPort > 0 {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(metrics.Registry, promhttp.HandlerOpts{}))
		metricsServer = &http.Server{Addr: ":" + strconv.Itoa(s.MetricsPort), Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		metricsListener, err := net.Listen("tcp", metricsServer.Addr)
		if err != nil {
			return fmt.Errorf("metrics listen %s: %w", metricsServer.Addr, err)
		}
		go func() {
			if err := metricsServer.Serve(metricsListener); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Event("metrics_failed", map[string]any{"error": err.Error()})
			}
		}()
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
		"gomemlimit":      memLimit,
		"gogc":            gogc,
		"rules_loaded_ms": loaded.Milliseconds(),
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
	// Drain: NOT_SERVING, stop taking streams, let open ones finish (bounded).
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
	log.Event("stopped", nil)
	return nil
}
