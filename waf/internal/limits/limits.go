// Package limits reads the container's memory limit from its cgroup, for GOMEMLIMIT.
//
// A pod's memory limit is a cgroup limit (v2 memory.max, v1 memory.limit_in_bytes), not less visible
// memory: Go's collector, unaware of it, lets the heap grow to twice the live data and the kernel kills
// the container under load. With a soft limit below the cgroup's, the collector works harder as the heap
// nears it instead. (GOMAXPROCS needs no help: the Go runtime reads the CPU quota itself since Go 1.25.)
package limits

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Share is the part of the container's limit the Go heap may use; the rest is for stacks, the binary,
// and what the runtime does not count.
const Share = 0.8

// v1Unlimited: cgroup v1 reports "no limit" as a huge page-rounded number.
const v1Unlimited = 1 << 62

func read(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// ancestors are root/relative and each parent up to root: a limit anywhere above applies too.
func ancestors(root, relative string) []string {
	var parts []string
	for _, p := range strings.Split(strings.Trim(relative, "/"), "/") {
		if p != "" && p != ".." {
			parts = append(parts, p)
		}
	}
	out := make([]string, 0, len(parts)+1)
	for depth := len(parts); depth >= 0; depth-- {
		out = append(out, filepath.Join(append([]string{root}, parts[:depth]...)...))
	}
	return out
}

// ownCgroup is this process's cgroup path: the v2 line (`0::/path`) when controller is "", else the v1
// line listing controller. Inside a cgroup namespace the path is "/".
func ownCgroup(procSelfCgroup, controller string) string {
	for _, line := range strings.Split(read(procSelfCgroup), "\n") {
		_, rest, _ := strings.Cut(line, ":")
		controllers, path, _ := strings.Cut(rest, ":")
		if controller == "" && controllers == "" {
			return path
		}
		if controller != "" {
			for _, c := range strings.Split(controllers, ",") {
				if c == controller {
					return path
				}
			}
		}
	}
	return "/"
}

// Memory is the smallest memory limit in bytes on this process's cgroup or its ancestors; 0: none.
func Memory(root, procSelfCgroup string) int64 {
	var limit int64
	consider := func(text string) {
		n, err := strconv.ParseInt(text, 10, 64)
		if err == nil && n > 0 && n < v1Unlimited && (limit == 0 || n < limit) {
			limit = n
		}
	}
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil { // v2
		for _, dir := range ancestors(root, ownCgroup(procSelfCgroup, "")) {
			consider(read(filepath.Join(dir, "memory.max"))) // "max" does not parse: no limit
		}
		return limit
	}
	base := filepath.Join(root, "memory") // v1
	for _, dir := range ancestors(base, ownCgroup(procSelfCgroup, "memory")) {
		consider(read(filepath.Join(dir, "memory.limit_in_bytes")))
	}
	return limit
}

// SoftLimit is the GOMEMLIMIT for a container limit (0: none).
func SoftLimit(container int64) int64 {
	return int64(float64(container) * Share)
}

// GCPercent is the collector's target (GOGC) the service sets when the heap has a soft limit. The CRS's
// compiled rules and automata are most of the live heap and never change, while every request leaves
// garbage: at Go's default (100) the collector re-marked those rules each time the garbage reached their
// size, about a quarter of the WAF's CPU on a browser GET at one connection. At 400 it runs a quarter as
// often (make bench-waf, waf/BUILD.md: 0.72x the WAF's CPU per GET), and the soft limit still bounds the
// heap: near it the collector runs as often as it must.
const GCPercent = 400

// GC is the collector target to set, from GOGC in the environment and the heap's soft limit in force
// (math.MaxInt64: none): set is false when the environment chose, or when there is no soft limit (then a
// higher target would let the heap grow unbounded, so Go's default stays).
func GC(envGOGC string, softLimit int64) (percent int, set bool) {
	if envGOGC != "" || softLimit <= 0 || softLimit == math.MaxInt64 {
		return 0, false
	}
	return GCPercent, true
}
