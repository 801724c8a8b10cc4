package main

import (
	"errors"
	"flag"
	"io"
	"testing"
)

// The flags are --config and --check, nothing else, and --config is required whatever else is given.
// Mutation: dropping the empty-config check -> red (none, check-only); renaming a flag -> red.
func TestParseFlags(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		want    options
		wantErr error // nil: parsed
		anyErr  bool  // an error from the flag package itself
	}{
		{"config", []string{"--config", "/etc/envoy-waf/waf.yaml"}, options{config: "/etc/envoy-waf/waf.yaml"}, nil, false},
		{"config-equals", []string{"-config=/w.yaml"}, options{config: "/w.yaml"}, nil, false},
		{"check", []string{"--check", "--config", "/w.yaml"}, options{config: "/w.yaml", check: true}, nil, false},
		{"check-after", []string{"--config", "/w.yaml", "--check"}, options{config: "/w.yaml", check: true}, nil, false},
		{"none", nil, options{}, errConfigRequired, false},
		{"empty-config", []string{"--config", ""}, options{}, errConfigRequired, false},
		{"check-only", []string{"--check"}, options{}, errConfigRequired, false},
		{"unknown", []string{"--config", "/w.yaml", "--listen", ":1"}, options{}, nil, true},
		{"config-without-value", []string{"--config"}, options{}, nil, true},
	}
	for _, c := range cases {
		fs := flag.NewFlagSet("envoy-waf", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		got, err := parseFlags(fs, c.args)
		switch {
		case c.anyErr:
			if err == nil || errors.Is(err, errConfigRequired) {
				t.Errorf("%s: error %v, want the flag package's", c.name, err)
			}
		case !errors.Is(err, c.wantErr):
			t.Errorf("%s: error %v, want %v", c.name, err, c.wantErr)
		case got != c.want:
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// The required-config message is the one line users and tests have always seen after "envoy-waf: ".
func TestConfigRequiredMessage(t *testing.T) {
	want := "--config FILE is required (the settings YAML, e.g. /etc/envoy-waf/waf.yaml)"
	if errConfigRequired.Error() != want {
		t.Errorf("message %q, want %q", errConfigRequired.Error(), want)
	}
}
