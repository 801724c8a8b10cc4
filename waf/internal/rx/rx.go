//go:build !stdlib_rx

// Package rx replaces Coraza's @rx operator with RE2 (github.com/wasilibs/go-re2) for every input: linear
// time like Go's regexp, but faster on the CRS's large alternations, long inputs and short ones alike
// (measured, BUILD.md). With SecRxPreFilter On a literal prefilter (prefilter.go) first skips the regex on
// input that cannot match. Built with `-tags re2_cgo` it calls Debian's libre2 through cgo;
// without, go-re2's WebAssembly build of RE2 compiled to Go (no cgo). `-tags stdlib_rx` keeps Coraza's
// own operator (Go's regexp), for comparison (make bench-waf). The package also replaces @pm and
// @pmFromFile (pm.go: the same answers without the library's per-call allocations); stdlib_rx keeps
// Coraza's own for those too.
//
// Semantics follow Coraza's operator: the pattern is compiled with (?sm) (dot matches newline, ^ and $
// per line), captures fill TX.0-TX.9 when the rule captures. go-re2 documents that RE2 in UTF-8 mode may
// stop at an invalid UTF-8 byte, which would let a stray byte hide what follows it from a rule: input
// that is not valid UTF-8 is matched by the same pattern compiled for Latin-1 (every byte a character),
// which reads all of it. Patterns that match raw bytes (\xNN above 0x7f) are Latin-1 only, as Coraza
// itself does for them.
package rx

import (
	"fmt"
	"regexp"
	"strconv"
	"unicode/utf8"

	"github.com/corazawaf/coraza/v3/experimental/plugins"
	"github.com/corazawaf/coraza/v3/experimental/plugins/plugintypes"
	re2 "github.com/wasilibs/go-re2"
	"github.com/wasilibs/go-re2/experimental"
)

// Engine names the regex engine this build uses (in the ready line and the bench report).
var Engine = "re2-" + mode

func init() {
	plugins.RegisterOperator("rx", newRX)
}

// ShortInput is the input length below which Go's own regexp runs instead of RE2; 0, the shipped value,
// is RE2 for every input: measured on the bench's shapes (BUILD.md), the cgo crossing costs less than Go's
// matcher even on short arguments. A variable only so that the engine benchmarks can compare thresholds
// (read when a rule is compiled); the service never sets it.
var ShortInput = 0

// prefilterMax is the input length from which the prefilter is skipped: on long input RE2's own scan is
// cheaper than the literal search (measured on the 128 KiB body), and the crossing it saves is noise.
const prefilterMax = 4096

type operator struct {
	std    *regexp.Regexp // nil: a byte pattern
	utf8   *re2.Regexp    // nil: a byte pattern, Latin-1 only
	latin1 *re2.Regexp
	pf     *prefilter // SecRxPreFilter On: skip the regex on input that cannot match; nil: off
}

func newRX(options plugintypes.OperatorOptions) (plugintypes.Operator, error) {
	expr := "(?sm)" + options.Arguments
	latin1, err := experimental.CompileLatin1(expr)
	if err != nil {
		return nil, fmt.Errorf("@rx %q: %w", options.Arguments, err)
	}
	op := &operator{latin1: latin1}
	if options.RxPreFilterEnabled {
		pf := newPrefilter(expr)
		op.pf = &pf
	}
	if !matchesBytes(options.Arguments) {
		if op.utf8, err = re2.Compile(expr); err != nil {
			return nil, fmt.Errorf("@rx %q: %w", options.Arguments, err)
		}
		if ShortInput > 0 {
			if op.std, err = regexp.Compile(expr); err != nil {
				return nil, fmt.Errorf("@rx %q: %w", options.Arguments, err)
			}
		}
	}
	return op, nil
}

func (o *operator) Evaluate(tx plugintypes.TransactionState, value string) bool {
	if o.pf != nil && len(value) < prefilterMax && !o.pf.mayMatch(value) {
		return false // cannot match: the regex would say no, and no capture happens either way
	}
	var match []int
	switch {
	case o.std != nil && len(value) < ShortInput:
		if !tx.Capturing() {
			return o.std.MatchString(value)
		}
		match = o.std.FindStringSubmatchIndex(value)
	default:
		re := o.latin1
		if o.utf8 != nil && utf8.ValidString(value) {
			re = o.utf8
		}
		if !tx.Capturing() {
			return re.MatchString(value)
		}
		match = re.FindStringSubmatchIndex(value)
	}
	if match == nil {
		return false
	}
	for i := 0; i < len(match)/2 && i < 9; i++ {
		if match[2*i] >= 0 {
			tx.CaptureField(i, value[match[2*i]:match[2*i+1]])
		} else {
			tx.CaptureField(i, "")
		}
	}
	return true
}

// matchesBytes reports whether a pattern has a \xNN (or \x{NN}) escape above 0x7f: it matches raw
// bytes, not characters.
func matchesBytes(expr string) bool {
	for i := 0; i+3 < len(expr); i++ {
		if expr[i] != '\\' {
			continue
		}
		if expr[i+1] == '\\' {
			i++ // an escaped backslash
			continue
		}
		if expr[i+1] != 'x' {
			continue
		}
		hex := expr[i+2 : i+4]
		if expr[i+2] == '{' {
			end := i + 3
			for end < len(expr) && expr[end] != '}' {
				end++
			}
			hex = expr[i+3 : end]
		}
		if n, err := strconv.ParseUint(hex, 16, 32); err == nil && n > 0x7f && n <= 0xff {
			return true
		}
	}
	return false
}
