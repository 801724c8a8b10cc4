//go:build !stdlib_rx

package rx

import (
	"math/rand"
	"regexp"
	"strings"
	"testing"

	ahocorasick "github.com/petar-dambovaliev/aho-corasick"

	"polycrate.local/envoy/waf/internal/testsupport"
)

func TestAnyFold(t *testing.T) {
	tests := []struct {
		needles []string
		in      string
		want    bool
	}{
		{[]string{"select", "union"}, "1 UnIoN 2", true},
		{[]string{"select", "union"}, "unio selec", false},
		{[]string{"select", "union"}, "", false},
		{[]string{"he", "she", "his", "hers"}, "ushers", true},
		{[]string{"he", "she", "his", "hers"}, "sh ih", false},
		{[]string{"abcd", "bc"}, "xabcx", true},       // found through a failure link, inside a longer needle's path
		{[]string{"abcd", "bcx"}, "abcx", true},       // the longer needle fails midway, the shorter one completes
		{[]string{"aab", "ab"}, "aaab", true},         // repeated prefix
		{[]string{"<script", "on"}, "<SCRIPT>", true}, // punctuation and case
		{[]string{"<script", "on"}, "<scrip", false},
		{[]string{"1=1", "--"}, "a-b-c", false},
		{[]string{"1=1", "--"}, "a--", true},
		{[]string{"k", "z"}, "\u212a", false}, // a byte above 0x7f is in no needle
		{[]string{"a", "b"}, "\xffB", true},
	}
	for _, tc := range tests {
		if got := newAnyFold(tc.needles).contains(tc.in); got != tc.want {
			t.Errorf("needles %q in %q = %v, want %v", tc.needles, tc.in, got, tc.want)
		}
	}
}

// naiveAny is the definition: some needle occurs, ASCII case-insensitively.
func naiveAny(needles []string, in string) bool {
	for _, n := range needles {
		if containsFold(in, n) {
			return true
		}
	}
	return false
}

// TestAnyFoldAgreesOnRandomInput: the automaton against the definition, on needles and inputs drawn from
// a small alphabet (so needles overlap, share prefixes and suffixes, and occur often).
func TestAnyFoldAgreesOnRandomInput(t *testing.T) {
	r := rand.New(rand.NewSource(26))
	const alphabet = "abcAB-=\x00\xff"
	word := func(lo, hi int, lower bool) string {
		b := make([]byte, lo+r.Intn(hi-lo+1))
		for i := range b {
			c := alphabet[r.Intn(len(alphabet))]
			if lower {
				c = alphabet[r.Intn(5)] // needles: ASCII, lower case
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
			}
			b[i] = c
		}
		return string(b)
	}
	hits := 0
	for i := 0; i < 3000; i++ {
		needles := make([]string, 2+r.Intn(6))
		for j := range needles {
			needles[j] = word(1, 4, true)
		}
		a := newAnyFold(needles)
		for k := 0; k < 20; k++ {
			in := word(0, 12, false)
			want := naiveAny(needles, in)
			if got := a.contains(in); got != want {
				t.Fatalf("needles %q in %q = %v, want %v", needles, in, got, want)
			}
			if want {
				hits++
			}
		}
	}
	if hits < 10000 || hits > 50000 {
		t.Fatalf("%d of 60000 inputs matched: the draw tests too little of one side", hits)
	}
}

// TestAnyFoldAgreesWithTheLibrary: on every CRS pattern with several needles and the regression corpus's
// payloads, the automaton answers what the Aho-Corasick library it replaced answered (the same verdicts).
func TestAnyFoldAgreesWithTheLibrary(t *testing.T) {
	crs := testsupport.CRSDir(t)
	inputs := corpusInputs(t, crs)
	sets := 0
	for _, pattern := range crsPatterns(t, crs) {
		expr := "(?sm)" + pattern
		if _, err := regexp.Compile(expr); err != nil {
			continue
		}
		p := newPrefilter(expr)
		if p.many == nil {
			continue
		}
		sets++
		needles, _ := analyse(mustParse(expr)).best()
		needles = dedupe(needles)
		builder := ahocorasick.NewAhoCorasickBuilder(ahocorasick.Opts{AsciiCaseInsensitive: true, MatchKind: ahocorasick.StandardMatch, DFA: true})
		lib := builder.Build(needles)
		for _, in := range inputs {
			want := lib.Iter(in).Next() != nil
			if got := p.many.contains(in); got != want {
				t.Fatalf("pattern %q, input %q: automaton %v, library %v", pattern, in, got, want)
			}
		}
	}
	if sets < 50 {
		t.Fatalf("only %d CRS patterns with several needles: the analysis or the corpus is not what it was", sets)
	}
}

func BenchmarkAnyFold(b *testing.B) {
	needles := []string{"select", "union", "insert", "update", "delete", "drop", "exec", "sleep", "benchmark"}
	a := newAnyFold(needles)
	in := strings.Repeat("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) ", 3)
	b.ReportAllocs()
	for b.Loop() {
		if a.contains(in) {
			b.Fatal("no needle in the input")
		}
	}
}
