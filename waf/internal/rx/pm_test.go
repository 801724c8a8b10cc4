//go:build !stdlib_rx

package rx

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/corazawaf/coraza/v3/experimental/plugins/plugintypes"
	ahocorasick "github.com/petar-dambovaliev/aho-corasick"

	"polycrate.local/envoy/waf/internal/testsupport"
)

// captures is the part of a transaction the operator touches: whether the rule captures, and what.
type captures struct {
	plugintypes.TransactionState
	on     bool
	fields map[int]string
}

func (c *captures) Capturing() bool { return c.on }
func (c *captures) CaptureField(i int, v string) {
	if c.fields == nil {
		c.fields = map[int]string{}
	}
	c.fields[i] = v
}

func TestPM(t *testing.T) {
	tests := []struct {
		words, in string
		capture   bool
		want      bool
		fields    map[int]string
	}{
		{"wget curl", "/usr/bin/WGET http://x", false, true, nil},
		{"wget curl", "cur l", false, false, nil},
		{"wget curl", "", false, false, nil},
		{"WGET", "wget", false, true, nil},                    // the list is lower-cased, the input folded
		{"a  b", "", false, true, nil},                        // two spaces: an empty word, which matches every input
		{"\u00e9t\u00e9", "\u00c9T\u00c9", false, false, nil}, // non-ASCII matches only itself
		{"\u00e9t\u00e9", "l'\u00e9t\u00e9", false, true, nil},
		// A capturing rule gets the library's matches, as in Coraza (the longer word where two start).
		{"ab abc curl", "xabcx curl", true, true, map[int]string{0: "abc", 1: "curl"}},
		{"ab", "zz", true, false, nil},
	}
	for _, tc := range tests {
		op, err := newPM(plugintypes.OperatorOptions{Arguments: tc.words})
		if err != nil {
			t.Fatal(err)
		}
		tx := &captures{on: tc.capture}
		if got := op.Evaluate(tx, tc.in); got != tc.want {
			t.Errorf("@pm %q on %q = %v, want %v", tc.words, tc.in, got, tc.want)
		}
		if len(tx.fields) != len(tc.fields) {
			t.Errorf("@pm %q on %q captured %v, want %v", tc.words, tc.in, tx.fields, tc.fields)
		}
		for i, v := range tc.fields {
			if tx.fields[i] != v {
				t.Errorf("@pm %q on %q captured %v, want %v", tc.words, tc.in, tx.fields, tc.fields)
			}
		}
	}
}

func TestPMFromFile(t *testing.T) {
	root := fstest.MapFS{
		"rules/words.data": {Data: []byte("# a comment\n\n  Passwd  \nshadow\n")},
		"other/words.data": {Data: []byte("never\n")},
	}
	tests := []struct {
		name  string
		dirs  []string
		in    string
		want  bool
		error bool
	}{
		{"words.data", []string{"rules", "other"}, "/etc/PASSWD", true, false}, // the first directory that has it
		{"words.data", []string{"rules"}, "# a comment", false, false},         // comments are not words
		{"words.data", []string{"rules"}, "etc/shadow", true, false},
		{"words.data", []string{"missing", "other"}, "never", true, false},
		{"words.data", []string{"missing"}, "", false, true},
		{"words.data", nil, "", false, true},
	}
	for _, tc := range tests {
		op, err := newPMFromFile(plugintypes.OperatorOptions{Arguments: tc.name, Path: tc.dirs, Root: root})
		if (err != nil) != tc.error {
			t.Fatalf("%s in %q: error %v", tc.name, tc.dirs, err)
		}
		if err != nil {
			continue
		}
		if got := op.Evaluate(&captures{}, tc.in); got != tc.want {
			t.Errorf("%s in %q on %q = %v, want %v", tc.name, tc.dirs, tc.in, got, tc.want)
		}
	}
}

var pmArg = regexp.MustCompile(`"@(pm|pmFromFile|pmf) ((?:[^"\\]|\\.)*)"`)

// TestPMAgreesWithCoraza: for every @pm and @pmFromFile of the CRS and every payload of its regression
// corpus (as sent, decoded, lower and upper case), a rule that does not capture gets the answer Coraza's
// operator gives: the library built with Coraza's options on the same words, asked for a first match.
// Mutation: fold no case in anyFold -> red.
func TestPMAgreesWithCoraza(t *testing.T) {
	crs := testsupport.CRSDir(t)
	inputs := corpusInputs(t, crs)
	files, err := filepath.Glob(filepath.Join(crs, "rules", "*.conf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRS rules under %s", crs)
	}
	lists := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range pmArg.FindAllStringSubmatch(string(data), -1) {
			opts := plugintypes.OperatorOptions{Arguments: m[2], Path: []string{filepath.Join(crs, "rules")}, Root: os.DirFS("/")}
			opts.Path[0] = strings.TrimPrefix(opts.Path[0], "/")
			var op plugintypes.Operator
			if m[1] == "pm" {
				op, err = newPM(opts)
			} else {
				op, err = newPMFromFile(opts)
			}
			if err != nil {
				t.Fatal(err)
			}
			p := op.(*pm)
			builder := ahocorasick.NewAhoCorasickBuilder(ahocorasick.Opts{AsciiCaseInsensitive: true, MatchKind: ahocorasick.LeftMostLongestMatch, DFA: true})
			lib := builder.Build(wordsOf(t, m[1], m[2], opts))
			lists++
			for _, in := range inputs {
				want := len(in) >= p.minLen && lib.Iter(in).Next() != nil
				if got := op.Evaluate(&captures{}, in); got != want {
					t.Fatalf("@%s %.60q on %q: %v, Coraza's %v", m[1], m[2], in, got, want)
				}
				// A capturing rule: the same answer and the same TX.0-TX.9 as Coraza's operator.
				wantFields := map[int]string{}
				if len(in) >= p.minLen {
					iter := lib.Iter(in)
					for m := iter.Next(); m != nil && len(wantFields) < 10; m = iter.Next() {
						wantFields[len(wantFields)] = in[m.Start():m.End()]
					}
				}
				tx := &captures{on: true}
				if got := op.Evaluate(tx, in); got != (len(wantFields) > 0) || !maps.Equal(tx.fields, wantFields) {
					t.Fatalf("@%s %.60q capturing on %q: %v %v, Coraza's %v", m[1], m[2], in, got, tx.fields, wantFields)
				}
			}
		}
	}
	if lists < 30 {
		t.Fatalf("only %d @pm operators in the CRS", lists)
	}
}

// wordsOf reads a word list as Coraza's operators do.
func wordsOf(t *testing.T, op, args string, opts plugintypes.OperatorOptions) []string {
	t.Helper()
	if op == "pm" {
		return strings.Split(strings.ToLower(args), " ")
	}
	data, err := readData(args, opts.Path, opts.Root)
	if err != nil {
		t.Fatal(err)
	}
	var words []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && l[0] != '#' {
			words = append(words, strings.ToLower(l))
		}
	}
	return words
}
