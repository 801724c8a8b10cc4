package limits

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The smallest limit on the own cgroup or any ancestor. Mutation: reading the own cgroup only -> red
// (parent-limit).
func TestMemoryV2(t *testing.T) {
	cases := []struct {
		name   string
		own    string
		limits map[string]string
		want   int64
	}{
		{"own", "/", map[string]string{"": "536870912"}, 536870912},
		{"unlimited", "/", map[string]string{"": "max"}, 0},
		{"parent-limit", "/kubepods/pod1/c1", map[string]string{"kubepods/pod1": "268435456", "kubepods/pod1/c1": "max"}, 268435456},
		{"own-tighter", "/a/b", map[string]string{"a": "1073741824", "a/b": "134217728"}, 134217728},
	}
	for _, c := range cases {
		dir := t.TempDir()
		root := filepath.Join(dir, "cgroup")
		write(t, filepath.Join(root, "cgroup.controllers"), "cpu memory")
		for rel, v := range c.limits {
			write(t, filepath.Join(root, rel, "memory.max"), v)
		}
		write(t, filepath.Join(dir, "self"), "0::"+c.own)
		if got := Memory(root, filepath.Join(dir, "self")); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

func TestMemoryV1(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "cgroup")
	write(t, filepath.Join(root, "memory", "docker", "abc", "memory.limit_in_bytes"), "268435456")
	write(t, filepath.Join(root, "memory", "memory.limit_in_bytes"), "9223372036854771712") // unlimited
	write(t, filepath.Join(dir, "self"), "5:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/")
	if got := Memory(root, filepath.Join(dir, "self")); got != 268435456 {
		t.Errorf("v1: %d", got)
	}
	if got := Memory(filepath.Join(dir, "none"), filepath.Join(dir, "none")); got != 0 {
		t.Errorf("no cgroup: %d", got)
	}
	if SoftLimit(1000) != 800 {
		t.Error("soft limit is 80%")
	}
}

// The collector target goes up only under a soft limit, and never over GOGC from the environment.
// Mutation: ignoring the soft limit -> red (no-limit), ignoring GOGC -> red (env-gogc).
func TestGC(t *testing.T) {
	cases := []struct {
		name      string
		env       string
		softLimit int64
		want      int
		set       bool
	}{
		{"pod", "", 512 << 20, GCPercent, true},
		{"no-limit", "", math.MaxInt64, 0, false},
		{"env-gogc", "100", 512 << 20, 0, false},
		{"env-off", "off", 512 << 20, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, set := GC(c.env, c.softLimit)
			if got != c.want || set != c.set {
				t.Errorf("GC(%q, %d) = %d, %v; want %d, %v", c.env, c.softLimit, got, set, c.want, c.set)
			}
		})
	}
}
