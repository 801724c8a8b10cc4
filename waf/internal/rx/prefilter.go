//go:build !stdlib_rx

package rx

import (
	"regexp/syntax"
	"strings"
	"unicode"
)

// The literal prefilter (SecRxPreFilter On): before a regex runs, a cheap test says whether the input can
// match at all. It must never say no to an input the regex matches (the same verdicts, always), so the
// analysis below only ever weakens: whatever it cannot prove becomes "no constraint".
//
// Two facts are derived from the parsed pattern:
//   - minLen, the fewest characters a match has: an input with fewer bytes cannot match (every
//     character is at least one byte, in UTF-8 and in Latin-1 alike);
//   - needles, a set of ASCII strings of which every match contains at least one, compared ASCII
//     case-insensitively (a weaker test than the pattern's own case rules, never a stronger one).
//
// Only ASCII needles are kept: an ASCII byte is the same character whether the input is read as UTF-8,
// as Latin-1 (the operator's path for invalid UTF-8) or by Go's regexp (invalid bytes as U+FFFD).
// Case-insensitive letters whose fold orbit leaves ASCII (k matches the Kelvin sign U+212A, s matches
// U+017F) are never needles.

// maxSet bounds the strings an exact set holds (alternations and small classes multiply).
const maxSet = 16

// info is what the analysis knows of one node.
type info struct {
	exact   []string // exactOK: the node matches exactly one of these strings (ASCII, lower case)
	exactOK bool
	req     []string // reqOK: every match contains one of these (ASCII, lower case, none empty)
	reqOK   bool
}

var unknown = info{}

func exactly(ss ...string) info { return info{exact: ss, exactOK: true} }

// best is the most useful constraint a node gives on its own: its exact set (when no member is empty),
// else its required set.
func (i info) best() ([]string, bool) {
	if i.exactOK && len(i.exact) > 0 {
		for _, s := range i.exact {
			if s == "" {
				return i.req, i.reqOK
			}
		}
		return i.exact, true
	}
	return i.req, i.reqOK
}

// score ranks a required set: longer shortest member first, then fewer members.
func score(ss []string) (int, int) {
	shortest := 1 << 30
	for _, s := range ss {
		shortest = min(shortest, len(s))
	}
	return shortest, -len(ss)
}

func better(a []string, b []string, bOK bool) bool {
	if !bOK {
		return true
	}
	la, na := score(a)
	lb, nb := score(b)
	return la > lb || (la == lb && na > nb)
}

// foldSafe: an ASCII rune whose case-insensitive matches are all ASCII.
func foldSafe(r rune) bool {
	if r >= unicode.MaxASCII {
		return false
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f > unicode.MaxASCII {
			return false
		}
	}
	return true
}

func lowerASCII(r rune) byte {
	if r >= 'A' && r <= 'Z' {
		return byte(r) + 'a' - 'A'
	}
	return byte(r)
}

// char is one character of a literal: an exact one-byte set, or unknown.
func char(r rune, fold bool) info {
	if r >= unicode.MaxASCII || (fold && !foldSafe(r)) {
		return unknown
	}
	return exactly(string(lowerASCII(r)))
}

func analyse(re *syntax.Regexp) info {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return exactly("")
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		parts := make([]info, len(re.Rune))
		for i, r := range re.Rune {
			parts[i] = char(r, fold)
		}
		return concat(parts)
	case syntax.OpCharClass:
		return class(re.Rune)
	case syntax.OpCapture:
		return analyse(re.Sub[0])
	case syntax.OpPlus:
		return atLeastOnce(analyse(re.Sub[0]))
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return atLeastOnce(analyse(re.Sub[0]))
		}
		return unknown
	case syntax.OpConcat:
		parts := make([]info, len(re.Sub))
		for i, sub := range re.Sub {
			parts[i] = analyse(sub)
		}
		return concat(parts)
	case syntax.OpAlternate:
		return alternate(re.Sub)
	}
	// OpAnyChar, OpAnyCharNotNL, OpStar, OpQuest, OpNoMatch: nothing required.
	return unknown
}

func atLeastOnce(child info) info {
	req, ok := child.best()
	return info{req: req, reqOK: ok}
}

// class is a character class: an exact set when it is a few ASCII characters (a letter in both cases
// counts once).
func class(ranges []rune) info {
	seen := map[byte]bool{}
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if hi >= unicode.MaxASCII || hi-lo >= maxSet {
			return unknown
		}
		for r := lo; r <= hi; r++ {
			seen[lowerASCII(r)] = true
		}
		if len(seen) > maxSet/2 {
			return unknown
		}
	}
	out := make([]string, 0, len(seen))
	for b := range seen {
		out = append(out, string(b))
	}
	return exactly(out...)
}

func alternate(subs []*syntax.Regexp) info {
	out := info{exactOK: true, reqOK: true}
	for _, sub := range subs {
		i := analyse(sub)
		if out.exactOK && i.exactOK && len(out.exact)+len(i.exact) <= maxSet {
			out.exact = append(out.exact, i.exact...)
		} else {
			out.exactOK, out.exact = false, nil
		}
		if req, ok := i.best(); ok && out.reqOK {
			out.req = append(out.req, req...)
		} else {
			out.reqOK, out.req = false, nil
		}
	}
	return out
}

// concat joins adjacent exact parts into longer strings (their cross product, while small) and keeps
// the best required set among the runs and the inexact parts.
func concat(parts []info) info {
	var req []string
	reqOK := false
	consider := func(ss []string, ok bool) {
		if !ok || len(ss) == 0 {
			return
		}
		for _, s := range ss {
			if s == "" {
				return
			}
		}
		if better(ss, req, reqOK) {
			req, reqOK = ss, true
		}
	}
	run := []string{""}
	whole := true // every part exact and the product stayed small
	for _, p := range parts {
		if p.exactOK && len(run)*len(p.exact) <= maxSet {
			next := make([]string, 0, len(run)*len(p.exact))
			for _, a := range run {
				for _, b := range p.exact {
					next = append(next, a+b)
				}
			}
			run = next
			continue
		}
		consider(run, true)
		if p.exactOK {
			whole = false
			run = append([]string(nil), p.exact...)
			continue
		}
		whole = false
		consider(p.best())
		run = []string{""}
	}
	consider(run, true)
	if whole {
		return info{exact: dedupe(run), exactOK: true, req: req, reqOK: reqOK}
	}
	return info{req: req, reqOK: reqOK}
}

func dedupe(ss []string) []string {
	seen := make(map[string]bool, len(ss))
	out := ss[:0:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// minLength is the fewest characters a match of re has.
func minLength(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return minLength(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min * minLength(re.Sub[0])
	case syntax.OpConcat:
		n := 0
		for _, sub := range re.Sub {
			n += minLength(sub)
		}
		return n
	case syntax.OpAlternate:
		n := -1
		for _, sub := range re.Sub {
			if m := minLength(sub); n < 0 || m < n {
				n = m
			}
		}
		return max(n, 0)
	}
	return 0
}

// prefilter is the compiled test: minLen and a needle matcher (nil: none).
type prefilter struct {
	minLen int
	one    string   // a single needle
	many   *anyFold // several needles
}

// newPrefilter analyses expr (the operator's full pattern, flags included). A pattern it cannot parse
// gets no prefilter: the regex compile reports the error.
func newPrefilter(expr string) prefilter {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return prefilter{}
	}
	p := prefilter{minLen: minLength(re)}
	needles, ok := analyse(re).best()
	if !ok || len(needles) == 0 {
		return p
	}
	needles = dedupe(needles)
	if len(needles) == 1 {
		p.one = needles[0]
		return p
	}
	p.many = newAnyFold(needles)
	return p
}

// mayMatch is false only when the input cannot match.
func (p *prefilter) mayMatch(value string) bool {
	if len(value) < p.minLen {
		return false
	}
	switch {
	case p.one != "":
		return containsFold(value, p.one)
	case p.many != nil:
		return p.many.contains(value)
	}
	return true
}

// containsFold: whether s contains needle (ASCII, lower case), ASCII case-insensitively. The next
// position of the needle's first byte in each case is searched with IndexByte and kept until passed, so
// the input is scanned about twice, whatever it holds.
func containsFold(s, needle string) bool {
	lower := needle[0]
	upper := lower
	if lower >= 'a' && lower <= 'z' {
		upper = lower - 'a' + 'A'
	}
	last := len(s) - len(needle) // the last start that fits
	nextLower, nextUpper := -1, -1
	if upper == lower {
		nextUpper = len(s) // one case only
	}
	for i := 0; i <= last; {
		if nextLower < i {
			nextLower = index(s, lower, i)
		}
		if nextUpper < i {
			nextUpper = index(s, upper, i)
		}
		j := min(nextLower, nextUpper)
		if j > last {
			return false
		}
		if equalFoldASCII(s[j:j+len(needle)], needle) {
			return true
		}
		i = j + 1
	}
	return false
}

// index is the position of c in s at or after from; len(s) when absent.
func index(s string, c byte, from int) int {
	if k := strings.IndexByte(s[from:], c); k >= 0 {
		return from + k
	}
	return len(s)
}

// equalFoldASCII: a equals needle (lower case) when ASCII letters in a are lowered.
func equalFoldASCII(a, needle string) bool {
	for i := 0; i < len(needle); i++ {
		c := a[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != needle[i] {
			return false
		}
	}
	return true
}
