package server

import (
	"testing"

	"github.com/corazawaf/coraza/v3"
)

// getStatus runs a GET with headers and a query through phases 1 and 2 and returns the interruption's
// status (0 when it passes).
func getStatus(t testing.TB, w coraza.WAF, uri string, headers ...[2]string) int {
	t.Helper()
	tx := w.NewTransaction()
	defer func() { _ = tx.Close() }()
	tx.ProcessURI(uri, "GET", "HTTP/1.1")
	for _, h := range headers {
		tx.AddRequestHeader(h[0], h[1])
	}
	it := tx.ProcessRequestHeaders()
	if it == nil {
		var err error
		if it, err = tx.ProcessRequestBody(); err != nil {
			t.Fatal(err)
		}
	}
	if it == nil {
		return 0
	}
	return it.Status
}

// A keyed read returns every value under its key: one value comes in a single allocation
// (third_party/coraza-request-costs.patch), several as before. Red when the one-value path takes a key
// with two values.
func TestKeyedReadsReturnEveryValue(t *testing.T) {
	w := waf(t, `SecRule REQUEST_HEADERS:X-Dup "@streq b" "id:1,phase:1,deny,status:403"`)
	cases := []struct {
		name    string
		headers [][2]string
		want    int
	}{
		{"one value", [][2]string{{"X-Dup", "b"}}, 403},
		{"the second of two", [][2]string{{"X-Dup", "a"}, {"x-dup", "b"}}, 403},
		{"neither", [][2]string{{"X-Dup", "a"}, {"X-Dup", "c"}}, 0},
	}
	for _, c := range cases {
		if got := getStatus(t, w, "/", c.headers...); got != c.want {
			t.Errorf("%s: status %d, want %d", c.name, got, c.want)
		}
	}
}

// A single-value collection read whole is memoised per phase like a map, and a later read sees its change:
// MATCHED_VAR changes with every match. Red when Single.Set does not count the change (rule 4 would see
// rule 1's value).
func TestSingleValueMemoSeesAChange(t *testing.T) {
	w := waf(t,
		`SecRule ARGS_GET:a "@streq one" "id:1,phase:1,pass,nolog"`,
		`SecRule MATCHED_VAR "@streq one" "id:2,phase:1,pass,nolog"`,
		`SecRule ARGS_GET:b "@streq two" "id:3,phase:1,pass,nolog"`,
		`SecRule MATCHED_VAR "@streq two" "id:4,phase:1,deny,status:403"`,
	)
	if got := getStatus(t, w, "/?a=one&b=two"); got != 403 {
		t.Fatalf("rule 4 did not see MATCHED_VAR change after rule 3: status %d", got)
	}
	if got := getStatus(t, w, "/?a=one&b=three"); got != 0 {
		t.Fatalf("status %d with no second match", got)
	}
}

// A rule's exceptions compare keys as lowered strings, as before the patch: upper-case and non-ASCII
// names, the Kelvin sign that lowers to an ASCII k, and regex exceptions on the lowered key. Red when
// names are compared as they are, or a regex sees the key unlowered.
func TestExceptionsIgnoreCase(t *testing.T) {
	w := waf(t,
		`SecRule REQUEST_HEADERS "@streq attack" "id:1,phase:1,deny,status:403"`,
		`SecRuleUpdateTargetById 1 "!REQUEST_HEADERS:X-SKIP"`,
		`SecRuleUpdateTargetById 1 "!REQUEST_HEADERS:X-ÉTÉ"`,
		"SecRuleUpdateTargetById 1 \"!REQUEST_HEADERS:\u212a\"",
		`SecRuleUpdateTargetById 1 "!REQUEST_HEADERS:/^x-re/"`,
	)
	cases := []struct {
		header string
		want   int
	}{
		{"x-skip", 0},
		{"X-Skip", 0},
		{"x-été", 0},
		{"k", 0},
		{"X-Regex", 0},
		{"X-Skip-Not", 403},
		{"X-Other", 403},
		{"x-et", 403},
	}
	for _, c := range cases {
		if got := getStatus(t, w, "/", [2]string{c.header, "attack"}); got != c.want {
			t.Errorf("header %q: status %d, want %d", c.header, got, c.want)
		}
	}
}

// ctl's by-tag actions reach every rule with the tag, whichever of its tags it is and wherever it is in the
// rules, and no other (RuleGroup.WithTag's index). Red when the index misses a rule's later tags, or is
// empty.
func TestCtlByTag(t *testing.T) {
	w := waf(t,
		`SecRule ARGS_GET:off "@streq 1" "id:1,phase:1,pass,nolog,ctl:ruleRemoveTargetByTag=skip-me;ARGS:x"`,
		`SecRule ARGS_GET:drop "@streq 1" "id:2,phase:1,pass,nolog,ctl:ruleRemoveByTag=skip-me"`,
		`SecRule ARGS "@streq attack" "id:10,phase:2,pass,nolog,tag:'skip-me',tag:'skip-me',setvar:tx.hit10=1"`,
		`SecRule ARGS "@streq attack" "id:11,phase:2,pass,nolog,tag:'other',setvar:tx.hit11=1"`,
		`SecRule ARGS "@streq attack" "id:12,phase:2,pass,nolog,tag:'first',tag:'skip-me',setvar:tx.hit12=1"`,
		`SecRule TX:hit10 "@eq 1" "id:90,phase:2,deny,status:410"`,
		`SecRule TX:hit12 "@eq 1" "id:91,phase:2,deny,status:412"`,
		`SecRule TX:hit11 "@eq 1" "id:92,phase:2,deny,status:411"`,
	)
	cases := []struct {
		uri  string
		want int
	}{
		{"/?x=attack", 410},              // every rule sees ARGS:x
		{"/?off=1&x=attack", 411},        // 10 and 12 lose ARGS:x, 11 keeps it
		{"/?off=1&x=fine&y=attack", 410}, // only ARGS:x was removed
		{"/?drop=1&x=attack", 411},       // 10 and 12 removed
	}
	for _, c := range cases {
		if got := getStatus(t, w, c.uri); got != c.want {
			t.Errorf("%s: status %d, want %d", c.uri, got, c.want)
		}
	}
}
