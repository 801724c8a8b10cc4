package server

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/corazawaf/coraza/v3"
	"github.com/corazawaf/coraza/v3/types"
)

// phase2 runs a form POST through directives and returns the interruption of phase 2, if any.
func phase2(t testing.TB, w coraza.WAF, form string) *types.Interruption {
	t.Helper()
	tx := w.NewTransaction()
	defer func() { _ = tx.Close() }()
	tx.ProcessURI("/form", "POST", "HTTP/1.1")
	tx.AddRequestHeader("Content-Type", "application/x-www-form-urlencoded")
	if it := tx.ProcessRequestHeaders(); it != nil {
		t.Fatalf("interrupted on headers: %+v", it)
	}
	if _, _, err := tx.WriteRequestBody([]byte(form)); err != nil {
		t.Fatal(err)
	}
	it, err := tx.ProcessRequestBody()
	if err != nil {
		t.Fatal(err)
	}
	return it
}

func waf(t testing.TB, directives ...string) coraza.WAF {
	t.Helper()
	w, err := coraza.NewWAF(coraza.NewWAFConfig().WithDirectives(strings.Join(append([]string{"SecRuleEngine On", "SecRequestBodyAccess On"}, directives...), "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// The field memo (third_party/coraza-field-memo.patch) must never hand a rule a stale collection: a rule
// reading TX whole after an earlier rule of the same phase changed it sees the change. Red when the memo
// ignores the collection's version.
func TestFieldMemoSeesAChangeWithinThePhase(t *testing.T) {
	w := waf(t,
		`SecAction "id:1,phase:2,pass,nolog,setvar:tx.first=one"`,
		`SecRule TX "@streq one" "id:2,phase:2,pass,nolog,setvar:tx.second=two"`,
		`SecRule TX "@streq two" "id:3,phase:2,deny,status:403,log"`,
	)
	if it := phase2(t, w, "a=b"); it == nil || it.RuleID != 3 {
		t.Fatalf("rule 3 did not see tx.second, set after rule 2 read TX: %+v", it)
	}
}

// A rule's exceptions filter its own read only: a later rule reading the same collection whole still sees
// every value, and an earlier whole read does not undo the exception.
func TestFieldMemoKeepsExceptionsPerRule(t *testing.T) {
	w := waf(t,
		`SecRule ARGS "@rx ^never$" "id:9,phase:2,pass,nolog"`,
		`SecRule ARGS "@streq attack" "id:10,phase:2,deny,status:403,log"`,
		`SecRuleUpdateTargetById 10 "!ARGS:safe"`,
		`SecRule ARGS "@streq attack2" "id:11,phase:2,deny,status:403,log"`,
	)
	if it := phase2(t, w, "safe=attack&other=fine"); it != nil {
		t.Errorf("the exception of rule 10 was not applied: %+v", it)
	}
	if it := phase2(t, w, "safe=attack2&other=fine"); it == nil || it.RuleID != 11 {
		t.Errorf("rule 11 did not see ARGS:safe (filtered for rule 10 only): %+v", it)
	}
	if it := phase2(t, w, "safe=fine&other=attack"); it == nil || it.RuleID != 10 {
		t.Errorf("rule 10 did not see ARGS:other: %+v", it)
	}
}

// Reading a collection whole costs nothing per further rule: 40 more rules reading ARGS and ARGS_NAMES of
// 200 fields allocate about what one does (v3.8.1 as released built 2 x 200 MatchData and their slices for
// every rule: about 40 KiB more per rule). Counted in bytes, not timed.
func TestFieldMemoReadsACollectionOncePerPhase(t *testing.T) {
	form := make([]string, 200)
	for i := range form {
		form[i] = fmt.Sprintf("field%d=value%d", i, i)
	}
	body := strings.Join(form, "&")
	allocated := func(rules int) float64 {
		var directives []string
		for i := 0; i < rules; i++ {
			directives = append(directives, fmt.Sprintf(`SecRule ARGS|ARGS_NAMES "@rx ^never$" "id:%d,phase:2,pass,nolog"`, 100+i))
		}
		w := waf(t, directives...)
		_ = phase2(t, w, body) // warm: pools, the transformation cache's memory
		const runs = 20
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := 0; i < runs; i++ {
			_ = phase2(t, w, body)
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / runs
	}
	one, many := allocated(1), allocated(41)
	t.Logf("bytes allocated per request: %.0f with 1 rule, %.0f with 41", one, many)
	if per := (many - one) / 40; per > 1024 {
		t.Errorf("%.0f bytes allocated per further rule reading ARGS|ARGS_NAMES of 200 fields, want at most 1 KiB", per)
	}
}
