package main

import (
	"errors"
	"flag"
	"fmt"
)

// errConfigRequired is the one settings error the flags themselves can have: no --config. main exits 2 on
// it, as the flag package does on a flag it does not know.
var errConfigRequired = errors.New("--config FILE is required (the settings YAML, e.g. /etc/envoy-waf/waf.yaml)")

// options is what the command line asks for.
type options struct {
	config string // the settings YAML
	check  bool   // only check the settings and the engine built from them, print the settings, exit
}

// parseFlags defines the command's flags on fs and parses args with them. On flag.CommandLine (ExitOnError)
// a bad flag or -h exits inside Parse, as before; on a ContinueOnError set (the tests) it is returned.
func parseFlags(fs *flag.FlagSet, args []string) (options, error) {
	var o options
	fs.StringVar(&o.config, "config", "", "settings YAML (mounted from a ConfigMap)")
	fs.BoolVar(&o.check, "check", false, "only check the settings and build the engine from them (the CRS plus extra_directives, "+
		"as startup does): print the settings as JSON (defaults filled in) and exit; exit 0 means the service would start")
	if err := fs.Parse(args); err != nil {
		return options{}, fmt.Errorf("flags: %w", err)
	}
	if o.config == "" {
		return options{}, errConfigRequired
	}
	return o, nil
}
