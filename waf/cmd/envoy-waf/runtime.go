package main

import (
	"runtime"
	"runtime/debug"
	"strconv"
	"time"

	"polycrate.local/envoy/waf/internal/audit"
	"polycrate.local/envoy/waf/internal/limits"
	"polycrate.local/envoy/waf/internal/server"
	"polycrate.local/envoy/waf/internal/settings"
)

// Where the container's memory limit is read from (internal/limits.Memory).
const (
	cgroupRoot     = "/sys/fs/cgroup"
	procSelfCgroup = "/proc/self/cgroup"
)

// tuning is what the Go runtime runs with, as the ready line reports it.
type tuning struct {
	memLimit int64  // the heap's soft limit in force, however set (math.MaxInt64: none)
	gogc     string // the collector target: GOGC from the environment, the one set here, or Go's default "100"
}

// tuneRuntime sets GOMAXPROCS from workers (0: the runtime's default), the heap's soft limit from the
// container's memory limit unless GOMEMLIMIT is set, and then GOGC (internal/limits.GC) unless the
// environment sets it. getenv is os.Getenv.
func tuneRuntime(workers int, getenv func(string) string) tuning {
	if workers > 0 {
		runtime.GOMAXPROCS(workers)
	}
	if limit, set := softMemoryLimit(getenv("GOMEMLIMIT"), func() int64 { return limits.Memory(cgroupRoot, procSelfCgroup) }); set {
		debug.SetMemoryLimit(limit)
	}
	memLimit := debug.SetMemoryLimit(-1) // the limit in force, however set
	percent, set, gogc := gcTarget(getenv("GOGC"), memLimit)
	if set {
		debug.SetGCPercent(percent)
	}
	return tuning{memLimit: memLimit, gogc: gogc}
}

// softMemoryLimit is the heap's soft limit to set: none when GOMEMLIMIT is set (Go applied it) or the
// container has no memory limit; otherwise limits.SoftLimit of it. container is read only when needed.
func softMemoryLimit(envGOMEMLIMIT string, container func() int64) (limit int64, set bool) {
	if envGOMEMLIMIT != "" {
		return 0, false
	}
	if bytes := container(); bytes > 0 {
		return limits.SoftLimit(bytes), true
	}
	return 0, false
}

// gcTarget is the collector target to set under the soft limit memLimit (limits.GC) and how the ready line
// shows the target in force: the one set, GOGC from the environment, or "100" (Go's default) when unset.
func gcTarget(envGOGC string, memLimit int64) (percent int, set bool, shown string) {
	if percent, set := limits.GC(envGOGC, memLimit); set {
		return percent, true, strconv.Itoa(percent)
	}
	if envGOGC == "" {
		return 0, false, "100"
	}
	return 0, false, envGOGC
}

// engine is the loaded WAF: the ext_proc service on the settings, its metrics, how long the rules took.
type engine struct {
	waf     *server.Server
	metrics *server.Metrics
	loaded  time.Duration
}

// buildEngine builds the engine from the settings (server.New: the directives, the CRS, extra_directives,
// the warm-up), logging to log.
func buildEngine(s settings.Settings, log *audit.Writer) (engine, error) {
	metrics := server.NewMetrics()
	started := time.Now()
	waf, err := server.New(s, log, metrics)
	if err != nil {
		return engine{}, err
	}
	return engine{waf: waf, metrics: metrics, loaded: time.Since(started)}, nil
}
