//go:build !stdlib_rx && !re2_cgo

package rx

const mode = "wasm2go"
