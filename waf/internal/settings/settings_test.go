package settings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func crs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "rules"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"REQUEST-901-INITIALIZATION.conf", "REQUEST-942-APPLICATION-ATTACK-SQLI.conf", "RESPONSE-951-DATA-LEAKAGES-SQL.conf"} {
		if err := os.WriteFile(filepath.Join(dir, "rules", f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestDefaults(t *testing.T) {
	s, err := Parse([]byte("crs_dir: " + crs(t) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Mode != "block" || s.ParanoiaLevel != 1 || s.BodyLimit != 131072 || s.Listen != "0.0.0.0:9002" || s.MetricsPort != 9090 {
		t.Fatalf("defaults: %+v", s)
	}
}

// TestDefaultContentTypes: unset, allowed_request_content_types is the CRS's list and every +json type (the
// block leaves the key out unless the user sets it). Mutation waf-json-suffix-default: the default without
// JSONSuffixTypes -> red.
func TestDefaultContentTypes(t *testing.T) {
	s, err := Parse([]byte("crs_dir: " + crs(t) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := append(append([]string(nil), CRSContentTypes...), "application/*+json")
	if strings.Join(s.AllowedRequestContentTypes, " ") != strings.Join(want, " ") {
		t.Fatalf("default content types %v, want %v", s.AllowedRequestContentTypes, want)
	}
	d, err := s.Directives()
	if err != nil {
		t.Fatal(err)
	}
	// The CRS's own list goes to 900220 as the CRS writes it; the +json entry is a rule, never a listed type.
	crsList := "setvar:'tx.allowed_request_content_type=|application/x-www-form-urlencoded| |multipart/form-data| |text/xml| |application/xml| |application/soap+xml| |application/json|'"
	if !strings.Contains(d, crsList) || !strings.Contains(d, "id:200007,") || strings.Contains(d, "|application/*+json|") {
		t.Errorf("directives of the default content types:\n%s", d)
	}
	// A list of the user's own without the entry: no +json type is added to it.
	s.AllowedRequestContentTypes = []string{"application/json"}
	if d, _ = s.Directives(); strings.Contains(d, "id:200007,") {
		t.Error("200007 rendered for a list without application/*+json")
	}
}

// TestJSONMediaTypes: which Content-Type values the engine parses as JSON by their +json suffix (rule
// 200006, lowercased as the engine's t:lowercase does; application/json itself is rule 200001's), and
// which media type rule 200007 adds to the allowed list for them. Mutation waf-json-suffix-parsed: rule
// 200006 without its requestBodyProcessor=JSON -> red.
func TestJSONMediaTypes(t *testing.T) {
	re := regexp.MustCompile(JSONSuffixContentType)
	tests := []struct {
		contentType string
		mediaType   string // the group 200007 adds, "" when the pattern must not match
	}{
		{"application/vnd.api+json", "application/vnd.api+json"},
		{"application/merge-patch+json; charset=utf-8", "application/merge-patch+json"},
		{"application/strategic-merge-patch+json", "application/strategic-merge-patch+json"},
		{"application/cloudevents+json;charset=utf-8", "application/cloudevents+json"},
		{"application/vnd.github.v3+json ; q=1", "application/vnd.github.v3+json"},
		{"application/problem+json\t", "application/problem+json"},
		{"application/json", ""},            // rule 200001's
		{"application/json-seq", ""},        // JSON text sequences: not one JSON document
		{"application/geo+json-seq", ""},    // the same, with a suffix
		{"application/x+jsonp", ""},         // JSONP is script
		{"application/*+json", ""},          // the list's entry is no media type a client may send
		{"application/vnd.my_app+json", ""}, // outside Coraza's pattern: refused by 920420, never unparsed
		{"text/x+json", ""},                 // not application/
		{"multipart/form-data; boundary=a+json", ""},
		{"application/x-www-form-urlencoded;boundary=\"application/vnd.x+json\"", ""},
	}
	for _, tt := range tests {
		got := ""
		if m := re.FindStringSubmatch(strings.ToLower(tt.contentType)); m != nil {
			got = m[1]
		}
		if got != tt.mediaType {
			t.Errorf("%q: matched %q, want %q", tt.contentType, got, tt.mediaType)
		}
	}
	s := Defaults()
	s.CRSDir = crs(t)
	d, err := s.Directives()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`SecRule REQUEST_HEADERS:Content-Type "` + JSONSuffixContentType + `" "id:200006,phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=JSON"`,
		`SecRule REQUEST_HEADERS:Content-Type "@rx ` + JSONSuffixContentType + `" "id:200007,`,
	} {
		if !strings.Contains(d, want) {
			t.Errorf("directives lack %s", want)
		}
	}
	// 200007 comes after 900220 sets the list (it appends to it) and before the CRS reads it.
	if i, j, k := strings.Index(d, "id:900220,"), strings.Index(d, "id:200007,"), strings.Index(d, "Include "); !(i < j && j < k) {
		t.Errorf("200007 at %d, 900220 at %d, the CRS at %d", j, i, k)
	}
}

// Unknown keys and wrong kinds are errors naming the key. Mutation: skipping the unknown-key check -> red.
func TestRejects(t *testing.T) {
	dir := crs(t)
	cases := map[string]string{
		"paranoia_levl: 2":                            "unknown settings [paranoia_levl]",
		"mode: enforce":                               `mode must be block or detect`,
		"paranoia_level: 5":                           "paranoia_level must be 1 to 4",
		"paranoia_level: '2'":                         "paranoia_level must be an integer",
		"validate_utf8: 'no'":                         "validate_utf8 must be true or false",
		"allowed_methods: [get]":                      `"get" is not an upper-case HTTP method`,
		"allowed_methods: []":                         "at least one method",
		"allowed_request_content_types: ['a/b; c=d']": "no parameters",
		"body_limit_action: drop":                     "body_limit_action must be reject or partial",
		"response_body_limit: 0":                      "response_body_limit must be a number of bytes above 0",
		"body_limit: 1073741824":                      "body_limit must be a number of bytes from 1 to 1 GiB - 1",
		"response_body_limit: 1073741824":             "response_body_limit must be a number of bytes above 0 and below 1 GiB",
		"response_body_limit: true":                   "response_body_limit must be an integer",
		"workers: 65":                                 "workers must be an integer from 1 to 64",
		"workers: 1.5":                                "workers must be an integer",
		"exclude_rule_tags: ['a\"b']":                 "is not a rule tag",
		"block_status: 200":                           "block_status must be an HTTP error status",
		"max_multipart_parts: 0":                      "max_multipart_parts must be an integer from 1 to 1000",
		"max_multipart_parts: 1001":                   "max_multipart_parts must be an integer from 1 to 1000",
		"body_inspections: -1":                        "body_inspections must be an integer from 1 to 64",
		"body_queue_timeout_ms: 0":                    "body_queue_timeout_ms must be an integer from 1 to 600000",
	}
	for doc, want := range cases {
		_, err := Parse([]byte("crs_dir: " + dir + "\n" + doc + "\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", doc, err, want)
		}
	}
	if _, err := Parse([]byte("crs_dir: /nonexistent\n")); err == nil || !strings.Contains(err.Error(), "no CRS rules/") {
		t.Errorf("missing CRS: %v", err)
	}
}

// The directives carry the settings. Mutation: dropping the 900200 SecAction -> red.
func TestDirectivesCarryTheSettings(t *testing.T) {
	s := Defaults()
	s.CRSDir = crs(t)
	s.AllowedMethods = []string{"GET", "PUT"}
	s.ValidateUTF8 = false
	s.ExcludeRuleIDs = []int{942100}
	s.ExcludeRuleTags = []string{"attack-xss"}
	s.ExtraDirectives = "SecRule REMOTE_ADDR \"@ipMatch 192.0.2.1\" \"id:1,phase:1,deny\""
	d, err := s.Directives()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"setvar:'tx.allowed_methods=GET PUT'",
		"setvar:tx.crs_validate_utf8_encoding=0",
		"|application/json|",
		"SecRuleEngine On",
		"SecRuleRemoveById 942100",
		`SecRuleRemoveByTag "attack-xss"`,
		"@ipMatch 192.0.2.1",
		"REQUEST-942-APPLICATION-ATTACK-SQLI.conf",
		"SecResponseBodyAccess Off",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("directives lack %q", want)
		}
	}
	if strings.Contains(d, "RESPONSE-951") {
		t.Error("response rules included with inspect_response off")
	}
	s.InspectResponse, s.Mode = true, "detect"
	d, _ = s.Directives()
	if !strings.Contains(d, "RESPONSE-951") || !strings.Contains(d, "SecRuleEngine DetectionOnly") {
		t.Error("inspect_response/detect not carried")
	}
}

// Every key decodes into its own field (a value other than its default), and each field's bounds hold at
// both ends. Mutation: a wrong yaml tag on any field -> red.
func TestEveryKeyDecodes(t *testing.T) {
	dir := crs(t)
	tests := []struct {
		doc   string
		check func(Settings) bool
	}{
		{"mode: detect", func(s Settings) bool { return s.Mode == "detect" }},
		{"paranoia_level: 4", func(s Settings) bool { return s.ParanoiaLevel == 4 }},
		{"inbound_anomaly_threshold: 1", func(s Settings) bool { return s.InboundAnomalyThreshold == 1 }},
		{"allowed_methods: [GET, PROPFIND]", func(s Settings) bool { return strings.Join(s.AllowedMethods, " ") == "GET PROPFIND" }},
		{"allowed_request_content_types: [application/json]", func(s Settings) bool { return len(s.AllowedRequestContentTypes) == 1 }},
		{"validate_utf8: false", func(s Settings) bool { return !s.ValidateUTF8 }},
		{"exclude_rule_ids: [942100, 1]", func(s Settings) bool { return len(s.ExcludeRuleIDs) == 2 && s.ExcludeRuleIDs[0] == 942100 }},
		{"exclude_rule_ids:", func(s Settings) bool { return len(s.ExcludeRuleIDs) == 0 }}, // null: none
		{"exclude_rule_tags: [attack-xss]", func(s Settings) bool { return s.ExcludeRuleTags[0] == "attack-xss" }},
		{"extra_directives: |\n  SecAction \"id:1,pass\"", func(s Settings) bool { return strings.HasPrefix(s.ExtraDirectives, "SecAction") }},
		{"setup_directives: SecAction", func(s Settings) bool { return s.SetupDirectives == "SecAction" }},
		{"body_limit: 1", func(s Settings) bool { return s.BodyLimit == 1 }},
		{"body_limit: 1073741823", func(s Settings) bool { return s.BodyLimit == 1<<30-1 }},
		{"body_limit_action: partial", func(s Settings) bool { return s.BodyLimitAction == "partial" }},
		{"inspect_response: true", func(s Settings) bool { return s.InspectResponse }},
		{"response_body_limit: 1073741823", func(s Settings) bool { return s.ResponseBodyLimit == 1<<30-1 }},
		{"block_status: 400", func(s Settings) bool { return s.BlockStatus == 400 }},
		{"block_status: 599", func(s Settings) bool { return s.BlockStatus == 599 }},
		{"listen: 127.0.0.1:1", func(s Settings) bool { return s.Listen == "127.0.0.1:1" }},
		{"metrics_port: 0", func(s Settings) bool { return s.MetricsPort == 0 }},
		{"metrics_port: 65535", func(s Settings) bool { return s.MetricsPort == 65535 }},
		{"workers: 64", func(s Settings) bool { return s.Workers == 64 }},
		{"max_multipart_parts: 1", func(s Settings) bool { return s.MaxMultipartParts == 1 }},
		{"max_multipart_parts: 1000", func(s Settings) bool { return s.MaxMultipartParts == 1000 }},
		{"body_inspections: 64", func(s Settings) bool { return s.BodyInspections == 64 }},
		{"body_queue_timeout_ms: 1", func(s Settings) bool { return s.BodyQueueTimeoutMS == 1 }},
		{"body_queue_timeout_ms: 600000", func(s Settings) bool { return s.BodyQueueTimeoutMS == 600000 }},
	}
	covered := map[string]bool{"crs_dir": true}
	for _, tc := range tests {
		s, err := Parse([]byte("crs_dir: " + dir + "\n" + tc.doc + "\n"))
		if err != nil {
			t.Errorf("%s: %v", tc.doc, err)
			continue
		}
		if !tc.check(s) {
			t.Errorf("%s: decoded as %+v", tc.doc, s)
		}
		if s.CRSDir != dir {
			t.Errorf("%s: crs_dir lost", tc.doc)
		}
		covered[strings.SplitN(tc.doc, ":", 2)[0]] = true
	}
	for _, key := range Keys() {
		if !covered[key] {
			t.Errorf("no case for %s", key)
		}
	}
}

// A value of the wrong kind is an error naming the key and what it must be, for every kind; so are
// unknown keys (all of them, sorted) and a document that is not a mapping. Mutation: checkKinds skipping
// the tag check -> red (yaml.v3 names a line and a Go type, and takes 1 for true in no case here).
func TestWrongKindsNameTheKey(t *testing.T) {
	dir := crs(t)
	tests := map[string]string{
		"mode: 3":                          `mode must be a string, not "3"`,
		"listen: [a]":                      "listen must be a string, not a list",
		"workers:":                         `workers must be an integer, not ""`,
		"body_limit: 1.5e3":                `body_limit must be an integer, not "1.5e3"`,
		"metrics_port: {a: 1}":             "metrics_port must be an integer, not a mapping",
		"inspect_response: yes":            `inspect_response must be true or false, not "yes"`,
		"validate_utf8: 1":                 `validate_utf8 must be true or false, not "1"`,
		"allowed_methods: GET":             `allowed_methods must be a list of strings, not "GET"`,
		"allowed_methods: [GET, 1]":        `allowed_methods: "1" is not a string`,
		"exclude_rule_ids: ['942100']":     `exclude_rule_ids: "942100" is not an integer`,
		"exclude_rule_tags: [[a]]":         "exclude_rule_tags: a list is not a string",
		"zeta: 1\nalpha: 2":                "unknown settings [alpha zeta]; known: [allowed_methods",
		"mode: block\nmode: detect":        `mapping key "mode" already defined`,
		"body_limit: 99999999999999999999": `body_limit must be an integer, not "99999999999999999999"`,
	}
	for doc, want := range tests {
		_, err := Parse([]byte("crs_dir: " + dir + "\n" + doc + "\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", doc, err, want)
		}
	}
	for doc, want := range map[string]string{"[a, b]": "expected a mapping of settings", "a: [": "not YAML", "": "no CRS rules/"} {
		if _, err := Parse([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", doc, err, want)
		}
	}
}

// grammarTable is testdata/grammar.json: per settings key, the values config.schema.json accepts and refuses.
type grammarTable struct {
	Values map[string]struct {
		Accept []string `json:"accept"`
		Refuse []string `json:"refuse"`
	} `json:"values"`
}

func readGrammarTable(path string) (grammarTable, error) {
	var table grammarTable
	data, err := os.ReadFile(path)
	if err != nil {
		return table, fmt.Errorf("reading the grammar table: %w", err)
	}
	if err := json.Unmarshal(data, &table); err != nil {
		return table, fmt.Errorf("decoding %s: %w", path, err)
	}
	return table, nil
}

// withValue is the defaults over crsDir with key (a settings file key) set to the one-item list [value], as the
// block renders it. Fresh defaults each time: decoding into a slice reuses its array, which copies share.
func withValue(crsDir, key, value string) (Settings, error) {
	s := Defaults()
	s.CRSDir = crsDir
	doc, err := json.Marshal(map[string][]string{key: {value}})
	if err != nil {
		return s, fmt.Errorf("encoding %s: %w", key, err)
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields() // a key of the table that is no setting must fail, not pass unchecked
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("decoding %s: %w", key, err)
	}
	return s, nil
}

// Check gives the schema's verdict on every value of the table the block's unit test runs through
// config.schema.json (tests/unit/test_waf_grammar.py), so the service and the block cannot drift apart.
// Mutation: tagRe back to `^[^"\\\n]+$` (newlines only) -> red for the tab, carriage return and control
// characters.
func TestGrammarMatchesTheSchema(t *testing.T) {
	table, err := readGrammarTable(filepath.Join("testdata", "grammar.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := crs(t)
	if len(table.Values) == 0 {
		t.Fatal("the grammar table has no values")
	}
	for key, values := range table.Values {
		for _, tc := range []struct {
			values []string
			accept bool
		}{{values.Accept, true}, {values.Refuse, false}} {
			for _, value := range tc.values {
				s, err := withValue(dir, key, value)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Check(); (err == nil) != tc.accept {
					t.Errorf("%s %q: the schema accepts it: %v; Check: %v", key, value, tc.accept, err)
				}
			}
		}
	}
}
