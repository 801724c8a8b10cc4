//go:build stdlib_rx

// Package rx: this build keeps Coraza's own @rx (Go's regexp).
package rx

// Engine names the regex engine this build uses.
var Engine = "go-regexp"

// ShortInput has no effect in this build (Go's regexp for every input); the engine benchmarks set it.
var ShortInput = 0
