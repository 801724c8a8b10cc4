package settings

import (
	"os"
	"path/filepath"
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
