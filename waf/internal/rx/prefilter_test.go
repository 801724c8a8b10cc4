//go:build !stdlib_rx

package rx

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"testing"

	"polycrate.local/envoy/waf/internal/testsupport"
)

func TestPrefilterNeedles(t *testing.T) {
	tests := []struct {
		pattern string
		minLen  int
		needles []string // sorted; nil: none
	}{
		{`union\s+select`, 12, []string{"select"}},                // the longer run wins
		{`(?i)(?:select|union)\b`, 5, []string{"elect", "union"}}, // s also matches U+017F
		{`abc`, 3, []string{"abc"}},
		{`a.*b`, 2, []string{"a"}},
		{`[Ss][Ee][Ll]`, 3, []string{"sel"}},
		{`x?`, 0, nil},
		{`(?:foo|)bar`, 3, []string{"bar", "foobar"}},
		{`(?:foo|.)`, 1, nil},              // one branch requires nothing
		{`(?i)kill`, 4, []string{"ill"}},   // k also matches U+212A: never a needle
		{`(?i)sleep`, 5, []string{"leep"}}, // s also matches U+017F
		{`caf\x{e9}s`, 5, []string{"caf"}}, // non-ASCII is never a needle
		{`^$`, 0, nil},
		{`(?:ab){2,}`, 4, []string{"ab"}},
		{`<script`, 7, []string{"<script"}},
	}
	for _, tc := range tests {
		t.Run(tc.pattern, func(t *testing.T) {
			p := newPrefilter("(?sm)" + tc.pattern)
			if p.minLen != tc.minLen {
				t.Errorf("minLen = %d, want %d", p.minLen, tc.minLen)
			}
			var got []string
			switch {
			case p.one != "":
				got = []string{p.one}
			case p.many != nil:
				got = needlesOf(tc.pattern)
			}
			sort.Strings(got)
			if strings.Join(got, ",") != strings.Join(tc.needles, ",") {
				t.Errorf("needles = %q, want %q", got, tc.needles)
			}
		})
	}
}

func needlesOf(pattern string) []string {
	p := newPrefilter("(?sm)" + pattern)
	if p.many == nil {
		return nil
	}
	re := mustParse("(?sm)" + pattern)
	needles, _ := analyse(re).best()
	return dedupe(needles)
}

func TestContainsFold(t *testing.T) {
	tests := []struct {
		s, needle string
		want      bool
	}{
		{"xx SeLeCt yy", "select", true},
		{"selec", "select", false},
		{"sssssssselect", "select", true},
		{"SSSSSSSSSSSSSS", "select", false},
		{"a<ScRiPt>", "<script", true},
		{"", "a", false},
		{"\u212aill", "kill", false}, // the prefilter never gets a needle with k under (?i)
	}
	for _, tc := range tests {
		if got := containsFold(tc.s, tc.needle); got != tc.want {
			t.Errorf("containsFold(%q, %q) = %v", tc.s, tc.needle, got)
		}
	}
}

// TestPrefilterNeverHidesAMatch is the prefilter's safety property on the real rules: for every @rx
// pattern of the CRS and every payload of its regression corpus (as sent, decoded, lower and upper
// case), an input the regex matches is never skipped. Mutation: drop foldSafe's orbit check -> red
// (the Kelvin and long-s inputs below).
func TestPrefilterNeverHidesAMatch(t *testing.T) {
	crs := testsupport.CRSDir(t)
	patterns := crsPatterns(t, crs)
	inputs := corpusInputs(t, crs)
	inputs = append(inputs, "\u212aill", "\u017fleep(5)", "union \u017felect", "<\u017fcript>")
	checked, skipped := 0, 0
	for _, pattern := range patterns {
		expr := "(?sm)" + pattern
		re, err := regexp.Compile(expr)
		if err != nil {
			continue // byte patterns (Latin-1) are covered by the corpus run
		}
		p := newPrefilter(expr)
		for _, in := range inputs {
			if !p.mayMatch(in) {
				skipped++
				if re.MatchString(in) {
					t.Fatalf("prefilter of %q skips %q, which matches", pattern, in)
				}
			}
			checked++
		}
	}
	if len(patterns) < 250 || checked == 0 || skipped*2 < checked {
		t.Fatalf("%d patterns, %d checks, %d skipped: the prefilter should skip most", len(patterns), checked, skipped)
	}
}

var rxArg = regexp.MustCompile(`"@rx ((?:[^"\\]|\\.)*)"`)

func crsPatterns(t *testing.T, crs string) []string {
	files, err := filepath.Glob(filepath.Join(crs, "rules", "*.conf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRS rules under %s (set CRS_DIR)", crs)
	}
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range rxArg.FindAllStringSubmatch(string(data), -1) {
			out = append(out, strings.ReplaceAll(m[1], `\"`, `"`))
		}
	}
	return out
}

var corpusField = regexp.MustCompile(`^\s*(?:uri|data|[A-Za-z-]+):\s*['"]?(.*?)['"]?\s*$`)

func corpusInputs(t *testing.T, crs string) []string {
	var files []string
	err := filepath.Walk(filepath.Join(crs, "tests", "regression", "tests"), func(path string, _ os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(path, ".yaml") {
			files = append(files, path)
		}
		return err
	})
	if err != nil || len(files) == 0 {
		t.Fatalf("no regression corpus under %s", crs)
	}
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for i, f := range files {
		if i%12 != 0 { // a twelfth of the files (about 1,600 inputs): the test stays a few seconds
			continue
		}
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			m := corpusField.FindStringSubmatch(sc.Text())
			if m == nil || len(m[1]) > 4096 {
				continue
			}
			v := m[1]
			add(v)
			add(strings.ToLower(v))
			add(strings.ToUpper(v))
			if d, err := urlDecode(v); err == nil {
				add(d)
				add(strings.ToLower(d))
			}
		}
		_ = fh.Close()
	}
	return out
}

func urlDecode(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '+':
			b.WriteByte(' ')
		case s[i] == '%' && i+2 < len(s):
			var v byte
			for _, c := range []byte(s[i+1 : i+3]) {
				switch {
				case c >= '0' && c <= '9':
					v = v*16 + c - '0'
				case c >= 'a' && c <= 'f':
					v = v*16 + c - 'a' + 10
				case c >= 'A' && c <= 'F':
					v = v*16 + c - 'A' + 10
				default:
					return "", os.ErrInvalid
				}
			}
			b.WriteByte(v)
			i += 2
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

func mustParse(expr string) *syntax.Regexp {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		panic(err)
	}
	return re
}
