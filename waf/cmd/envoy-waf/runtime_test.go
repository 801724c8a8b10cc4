package main

import (
	"math"
	"testing"

	"polycrate.local/envoy/waf/internal/limits"
)

// The container's limit becomes the soft limit only when GOMEMLIMIT is unset, and the cgroup is not read
// when it is set. Mutation: ignoring GOMEMLIMIT -> red (env-set), setting a limit of 0 -> red (unlimited).
func TestSoftMemoryLimit(t *testing.T) {
	cases := []struct {
		name      string
		env       string
		container int64
		want      int64
		set       bool
		read      bool // the cgroup is read
	}{
		{"pod", "", 512 << 20, limits.SoftLimit(512 << 20), true, true},
		{"unlimited", "", 0, 0, false, true},
		{"env-set", "1GiB", 512 << 20, 0, false, false},
		{"env-off", "off", 512 << 20, 0, false, false},
	}
	for _, c := range cases {
		read := false
		got, set := softMemoryLimit(c.env, func() int64 { read = true; return c.container })
		if got != c.want || set != c.set || read != c.read {
			t.Errorf("%s: %d %v (read %v), want %d %v (read %v)", c.name, got, set, read, c.want, c.set, c.read)
		}
	}
}

// GOGC from the environment always wins and is shown as given; under a soft limit the target is
// limits.GCPercent; otherwise Go's default, shown as "100". Mutation: showing "" for Go's default -> red
// (no-limit), setting over the environment -> red (env-gogc).
func TestGCTarget(t *testing.T) {
	cases := []struct {
		name     string
		env      string
		memLimit int64
		percent  int
		set      bool
		shown    string
	}{
		{"pod", "", 512 << 20, limits.GCPercent, true, "400"},
		{"no-limit", "", math.MaxInt64, 0, false, "100"},
		{"env-gogc", "150", 512 << 20, 0, false, "150"},
		{"env-off", "off", math.MaxInt64, 0, false, "off"},
	}
	for _, c := range cases {
		percent, set, shown := gcTarget(c.env, c.memLimit)
		if percent != c.percent || set != c.set || shown != c.shown {
			t.Errorf("%s: %d %v %q, want %d %v %q", c.name, percent, set, shown, c.percent, c.set, c.shown)
		}
	}
}
