package server

import (
	"os"
	"os/exec"
	"testing"

	"github.com/corazawaf/coraza/v3/experimental/plugins/plugintypes"
	"github.com/corazawaf/coraza/v3/types"
)

// The RULE collection is filled only once something reads it (third_party/coraza-rule-collection.patch):
// each case runs in a fresh process of this test binary, because the switch is process-wide and only ever
// turns on.
func TestRuleCollection(t *testing.T) {
	if name := os.Getenv("WAF_RULECOL_CASE"); name != "" {
		ruleCollectionCases[name](t)
		return
	}
	for name := range ruleCollectionCases {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", "^TestRuleCollection$", "-test.v")
			cmd.Env = append(os.Environ(), "WAF_RULECOL_CASE="+name)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s in a fresh process: %v\n%s", name, err, out)
			}
		})
	}
}

func ruleOf(tx types.Transaction, key string) []string {
	return tx.(plugintypes.TransactionState).Variables().Rule().Get(key)
}

var ruleCollectionCases = map[string]func(t *testing.T){
	// The CRS reads no RULE: nothing fills it (red when rules fill it regardless, the cost this saves).
	// A read through the API turns filling on for later rules.
	"crs-does-not-fill": func(t *testing.T) {
		w := engine(t, nil)
		tx := w.NewTransaction()
		tx.ProcessURI("/catalogue?q=blue", "GET", "HTTP/1.1")
		tx.AddRequestHeader("Host", "bench.example.com")
		tx.ProcessRequestHeaders()
		if got := ruleOf(tx, "id"); len(got) != 0 {
			t.Errorf("RULE:id is %q after the CRS alone, want it unfilled", got)
		}
		if _, err := tx.ProcessRequestBody(); err != nil {
			t.Fatal(err)
		}
		if got := ruleOf(tx, "id"); len(got) == 0 {
			t.Error("RULE:id stays unfilled after a read through the API")
		}
		_ = tx.Close()
	},
	// A macro naming RULE (here in setvar) sees the rule's own values (red when compiling the macro does
	// not turn filling on).
	"macro-reads": func(t *testing.T) {
		w := waf(t,
			`SecRule ARGS:a "@streq x" "id:7,phase:2,pass,nolog,msg:'seen %{ARGS.a}',setvar:tx.seen=%{rule.id}/%{rule.msg}"`,
			`SecRule TX:seen "@streq 7/seen x" "id:8,phase:2,deny,status:403,log"`,
		)
		if it := phase2(t, w, "a=x"); it == nil || it.RuleID != 8 {
			t.Errorf("rule 8 did not see %%{rule.id}/%%{rule.msg} of rule 7: %+v", it)
		}
	},
	// A rule targeting RULE reads the values of the rule it runs in (red when such a rule does not turn
	// filling on).
	"variable-reads": func(t *testing.T) {
		w := waf(t, `SecRule RULE:id "@streq 9" "id:9,phase:2,deny,status:403,log"`)
		if it := phase2(t, w, "a=x"); it == nil || it.RuleID != 9 {
			t.Errorf("rule 9 did not see RULE:id: %+v", it)
		}
	},
}
