//go:build !stdlib_rx

package rx

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/corazawaf/coraza/v3/experimental/plugins"
	"github.com/corazawaf/coraza/v3/experimental/plugins/plugintypes"
	ahocorasick "github.com/petar-dambovaliev/aho-corasick"
)

// @pm and @pmFromFile (phrase match: does the input contain any of a list of words, ASCII
// case-insensitively) are Coraza's operators with one change: a rule that does not capture, which is
// every CRS rule using them, gets its answer from anyFold (one table lookup per byte, no allocation)
// instead of the general Aho-Corasick library, whose iterator and match allocations were 5% of the
// engine's CPU on the GET and the 800-field JSON, plus the collector's work after them. A capturing
// rule (the CRS has several, for their logdata) keeps the library: it reports the leftmost-longest matches
// into TX.0-TX.9 exactly as Coraza does. It is asked only once anyFold found a word: an input with none has
// no match and no capture either way, and on a benign GET that skipped a hundred iterator allocations.
// The word lists are read as Coraza reads them (lower-cased; pm: split on spaces; pmFromFile: one word
// a line, blank lines and # comments skipped), so the answers are the same (TestPMAgreesWithCoraza).
func init() {
	plugins.RegisterOperator("pm", newPM)
	plugins.RegisterOperator("pmFromFile", newPMFromFile)
	plugins.RegisterOperator("pmf", newPMFromFile)
}

type pm struct {
	any     *anyFold
	matcher ahocorasick.AhoCorasick // capturing rules only
	minLen  int
}

// compiled is what one word list builds, shared by the rules that use the same list.
type compiled struct {
	any     *anyFold
	matcher ahocorasick.AhoCorasick
}

func newPM(options plugintypes.OperatorOptions) (plugintypes.Operator, error) {
	data := strings.ToLower(options.Arguments)
	return build(options.Memoizer, "pm:"+data, strings.Split(data, " "), true)
}

func newPMFromFile(options plugintypes.OperatorOptions) (plugintypes.Operator, error) {
	data, err := readData(options.Arguments, options.Path, options.Root)
	if err != nil {
		return nil, err
	}
	var words []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || l[0] == '#' {
			continue
		}
		words = append(words, strings.ToLower(l))
	}
	return build(options.Memoizer, "pmFromFile:"+strings.Join(options.Path, ",")+options.Arguments, words, false)
}

func build(m plugintypes.Memoizer, key string, words []string, dfa bool) (plugintypes.Operator, error) {
	compile := func() (any, error) {
		b := ahocorasick.NewAhoCorasickBuilder(ahocorasick.Opts{AsciiCaseInsensitive: true, MatchKind: ahocorasick.LeftMostLongestMatch, DFA: dfa})
		return compiled{any: newAnyFold(words), matcher: b.Build(words)}, nil
	}
	var c any
	if m != nil {
		c, _ = m.Do("polycrate-waf/"+key, compile) // compile never fails
	} else {
		c, _ = compile()
	}
	built, ok := c.(compiled)
	if !ok {
		return nil, fmt.Errorf("@pm %q: the memoizer holds another kind of value under its key", key)
	}
	return &pm{any: built.any, matcher: built.matcher, minLen: minWordLen(words)}, nil
}

// minWordLen is the shortest word's length (0 with an empty word, which matches every input).
func minWordLen(words []string) int {
	n := 0
	for i, w := range words {
		if i == 0 || len(w) < n {
			n = len(w)
		}
	}
	return n
}

func (o *pm) Evaluate(tx plugintypes.TransactionState, value string) bool {
	if len(value) < o.minLen {
		return false
	}
	found := o.any.contains(value)
	if !found || !tx.Capturing() {
		return found
	}
	iter := o.matcher.Iter(value)
	n := 0
	for m := iter.Next(); m != nil && n < 10; m = iter.Next() {
		tx.CaptureField(n, value[m.Start():m.End()])
		n++
	}
	return n > 0
}

// readData finds a data file as Coraza's operators do: an absolute path as is, else the first of dirs
// (the rule file's directory first) that holds it.
func readData(name string, dirs []string, root fs.FS) ([]byte, error) {
	if path.IsAbs(name) {
		return fs.ReadFile(root, name)
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("@pmFromFile %q: no directory to look in", name)
	}
	var err error
	for _, dir := range dirs {
		var data []byte
		if data, err = fs.ReadFile(root, path.Join(dir, name)); err == nil {
			return data, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	return nil, fmt.Errorf("@pmFromFile %q: %w", name, err)
}
