package server

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/corazawaf/coraza/v3/experimental/plugins"
)

// counted is how often the test's transformation ran.
var counted atomic.Int64

func init() {
	plugins.RegisterTransformation("countedLowercase", func(input string) (string, bool, error) {
		counted.Add(1)
		return strings.ToLower(input), true, nil
	})
}

// The per-argument cut (third_party/coraza-issue-1681.patch): within a phase each value is transformed
// once, however many rules read it through the same chain, also from map-backed collections, which
// return their values in a new order on every read. Counted, not timed. Coraza v3.8.1 as released
// keyed the cache by position: here about one run per rule and argument (red: 1,000 runs for 100).
// Verdicts stay those of the rules: the last rule still sees its value transformed and matches it.
func TestEachValueTransformedOncePerPhase(t *testing.T) {
	const rules, args = 10, 100
	var directives []string
	for i := 0; i < rules; i++ {
		directives = append(directives, fmt.Sprintf(`SecRule ARGS_POST "@rx ^never$" "id:%d,phase:2,t:none,t:countedLowercase,pass,nolog"`, 100+i))
	}
	directives = append(directives, `SecRule ARGS_POST "@streq marker" "id:200,phase:2,t:none,t:countedLowercase,deny,status:403,log"`)
	w := waf(t, directives...)
	form := make([]string, 0, args)
	for i := 0; i < args-1; i++ {
		form = append(form, fmt.Sprintf("field%d=Value%d", i, i))
	}
	form = append(form, "last=MARKER")
	counted.Store(0)
	it := phase2(t, w, strings.Join(form, "&"))
	if it == nil || it.RuleID != 200 {
		t.Errorf("the transformed MARKER was not matched: %+v", it)
	}
	if n := counted.Load(); n != args {
		t.Errorf("%d transformations for %d values read by %d rules, want %d (one per value)", n, args, rules+1, args)
	}
}
