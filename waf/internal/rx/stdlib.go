//go:build stdlib_rx

// Package rx: this build keeps Coraza's own @rx (Go's regexp).
package rx

// Engine names the regex engine this build uses.
var Engine = "go-regexp"
