// Command envoy-waf is the WAF's ext_proc service: `envoy-waf --config /etc/envoy-waf/waf.yaml`.
//
// One process: it loads the rules once, then serves the ext_proc and gRPC health services on `listen`
// and Prometheus metrics on metrics_port. Health is SERVING only once the rules are loaded and the
// service takes streams, and NOT_SERVING again while it drains. SIGTERM/SIGINT drain: no new streams,
// open ones get GracePeriod to finish, then the process exits 0. Bad settings or rules exit 1 before
// anything listens, with one line naming the problem.
//
// This file only wires: the flags are in flags.go, the Go runtime and the engine in runtime.go, the
// listeners, the health service, the signals and the drain in serve.go.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"polycrate.local/envoy/waf/internal/audit"
	"polycrate.local/envoy/waf/internal/settings"
)

func main() {
	opts, err := parseFlags(flag.CommandLine, os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "envoy-waf:", err)
		os.Exit(2)
	}
	if opts.check {
		s, err := checkSettings(opts.config)
		if err != nil {
			fmt.Fprintln(os.Stderr, "envoy-waf:", err)
			os.Exit(1)
		}
		if err := json.NewEncoder(os.Stdout).Encode(s); err != nil {
			os.Exit(1)
		}
		return
	}
	log := audit.New(os.Stdout)
	if err := run(opts.config, log); err != nil {
		log.Event("failed", map[string]any{"error": err.Error()})
		fmt.Fprintln(os.Stderr, "envoy-waf:", err)
		os.Exit(1)
	}
}

// checkSettings loads the settings and builds the engine exactly as run does (buildEngine), without
// listening: a pass means the service would start.
func checkSettings(config string) (settings.Settings, error) {
	s, err := settings.Load(config)
	if err != nil {
		return settings.Settings{}, err
	}
	if _, err := buildEngine(s, audit.New(io.Discard)); err != nil {
		return settings.Settings{}, err
	}
	return s, nil
}

// run serves on the settings in config until a signal drains it: the settings, then the runtime and the
// engine, then the listeners.
func run(config string, log *audit.Writer) error {
	s, err := settings.Load(config)
	if err != nil {
		return err
	}
	tuned := tuneRuntime(s.Workers, os.Getenv)
	e, err := buildEngine(s, log)
	if err != nil {
		return err
	}
	return serve(s, e, tuned, log)
}
