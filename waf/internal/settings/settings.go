// Package settings reads the WAF's settings file (mounted from the block's ConfigMap) and turns it into
// the SecLang directives the engine loads. Unknown keys and values of the wrong kind are errors that
// name the key: a typo must never fall back to a default silently.
package settings

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// CRSVersion is the OWASP CRS release the directives are written for (crs_setup_version).
const CRSVersion = "4.28.0"

// MaxWorkers bounds `workers` (GOMAXPROCS): far more than a node's CPUs only costs scheduling.
const MaxWorkers = 64

// MaxArguments is the engine's SecArgumentsLimit (a request reaching it is refused, rules 200004/200005),
// and the most max_multipart_parts may be.
const MaxArguments = 1000

// RESTMethods is the default allowed_methods: CRS's own default is GET HEAD POST OPTIONS; a WAF in front
// of REST APIs passes their verbs too.
var RESTMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// CRSContentTypes is CRS's default tx.allowed_request_content_type (rule 900220 in crs-setup.conf.example).
var CRSContentTypes = []string{
	"application/x-www-form-urlencoded",
	"multipart/form-data",
	"text/xml",
	"application/xml",
	"application/soap+xml",
	"application/json",
}

// JSONSuffixTypes, in allowed_request_content_types, allows every media type the engine parses as JSON by
// its +json suffix (jsonSuffixType: application/merge-patch+json, application/vnd.api+json, ...). A list
// cannot name them all: vendors mint their own (application/vnd.github+json). Allowing them is as safe as
// allowing application/json because every such body is parsed as JSON (rule 200006, whatever the list
// says) and one that does not parse is refused (200002): CRS's bypass warning (crs-setup.conf.example,
// 900220) is about types that engage no body processor, which this never allows. Types with the suffix
// that the pattern does not take (an underscore, +json-seq) stay refused by 920420, never unparsed.
const JSONSuffixTypes = "application/*+json"

// DefaultContentTypes is the default allowed_request_content_types: the CRS's list and the +json types.
var DefaultContentTypes = append(append([]string(nil), CRSContentTypes...), JSONSuffixTypes)

// jsonSuffixType is a media type that declares JSON syntax by its +json suffix (RFC 6839), as Coraza's
// recommended configuration (its optional rule 200006) matches it, without parameters.
const jsonSuffixType = `application/[a-z0-9.-]+[+]json`

// JSONSuffixContentType is the Content-Type pattern (lowercased value) the engine parses as JSON besides
// application/json (rule 200001): a +json type alone or before its parameters, never +json-seq. Its group
// is the media type, as 920420 compares it (rule 200007).
const JSONSuffixContentType = `^(` + jsonSuffixType + `)[ \t]*(?:;|$)`

// methodRe, mediaRe and tagRe are config.schema.json's $defs http_method, media_type and rule_tag patterns,
// character for character, so the service accepts exactly what the block renders: tests/unit/test_waf_grammar.py
// compares them and runs testdata/grammar.json through the schema, as TestGrammarMatchesTheSchema runs it
// through Check.
var (
	// An HTTP method as CRS compares it (case-sensitive, space-separated list).
	methodRe = regexp.MustCompile(`^[A-Z][A-Z-]{0,31}$`)
	// A media type without parameters, lower case (CRS lowercases the request's before comparing), or
	// JSONSuffixTypes.
	mediaRe = regexp.MustCompile(`^(?:[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*|application/[*][+]json)$`)
	// A rule tag as SecRuleRemoveByTag takes it inside double quotes, without control characters: a newline or
	// carriage return would end the directive, and none belongs in a tag.
	tagRe = regexp.MustCompile(`^[^"\\\x00-\x1f]+$`)
)

// Settings is the whole settings file. Field names are the file's keys.
type Settings struct {
	CRSDir                     string   `json:"crs_dir" yaml:"crs_dir"`
	Mode                       string   `json:"mode" yaml:"mode"` // block | detect (DetectionOnly: log, never block)
	ParanoiaLevel              int      `json:"paranoia_level" yaml:"paranoia_level"`
	InboundAnomalyThreshold    int      `json:"inbound_anomaly_threshold" yaml:"inbound_anomaly_threshold"`
	AllowedMethods             []string `json:"allowed_methods" yaml:"allowed_methods"`
	AllowedRequestContentTypes []string `json:"allowed_request_content_types" yaml:"allowed_request_content_types"`
	ValidateUTF8               bool     `json:"validate_utf8" yaml:"validate_utf8"` // CRS 920250: invalid UTF-8 in the path, argument names and values
	ExcludeRuleIDs             []int    `json:"exclude_rule_ids" yaml:"exclude_rule_ids"`
	ExcludeRuleTags            []string `json:"exclude_rule_tags" yaml:"exclude_rule_tags"`
	ExtraDirectives            string   `json:"extra_directives" yaml:"extra_directives"`
	// Before the CRS rules, after this file's CRS setup: where crs-setup.conf's SecActions and runtime
	// exclusions go (the corpus harness; the block renders its curated exclusions here from paranoia
	// level 2 on, waf.curated_exclusions). Not a key of the block's config.
	SetupDirectives   string `json:"setup_directives" yaml:"setup_directives"`
	BodyLimit         int    `json:"body_limit" yaml:"body_limit"`                   // request body bytes inspected
	BodyLimitAction   string `json:"body_limit_action" yaml:"body_limit_action"`     // reject (413) | partial (inspect the first BodyLimit bytes)
	InspectResponse   bool   `json:"inspect_response" yaml:"inspect_response"`       // CRS response rules (RESPONSE-95x) on headers and body
	ResponseBodyLimit int    `json:"response_body_limit" yaml:"response_body_limit"` // response body bytes inspected; the rest passes uninspected
	BlockStatus       int    `json:"block_status" yaml:"block_status"`
	Listen            string `json:"listen" yaml:"listen"`
	MetricsPort       int    `json:"metrics_port" yaml:"metrics_port"`
	Workers           int    `json:"workers" yaml:"workers"` // GOMAXPROCS; 0: the runtime's default (the container's CPU quota)
	// A multipart body with more parts is refused (413) before the engine: Coraza's SecArgumentsLimit does
	// not count multipart parts, and each part costs the CRS about half a millisecond of CPU.
	MaxMultipartParts int `json:"max_multipart_parts" yaml:"max_multipart_parts"`
	// Request bodies inspected at once (0: GOMAXPROCS): headers-only requests never wait for a slot, so a
	// burst of expensive bodies cannot starve them.
	BodyInspections int `json:"body_inspections" yaml:"body_inspections"`
	// How long a body may wait for an inspection slot before it is refused (503, fail-closed). A backstop:
	// Envoy's message timeout (the block's default 250ms) usually ends the wait first, and the body is
	// then dropped uninspected with its stream, Envoy answering per its failure mode.
	BodyQueueTimeoutMS int `json:"body_queue_timeout_ms" yaml:"body_queue_timeout_ms"`
}

// Defaults are the settings of an empty file (crs_dir aside).
func Defaults() Settings {
	return Settings{
		Mode:                       "block",
		ParanoiaLevel:              1,
		InboundAnomalyThreshold:    5,
		AllowedMethods:             append([]string(nil), RESTMethods...),
		AllowedRequestContentTypes: append([]string(nil), DefaultContentTypes...),
		ValidateUTF8:               true,
		BodyLimit:                  131072,
		BodyLimitAction:            "reject",
		ResponseBodyLimit:          65536,
		BlockStatus:                403,
		Listen:                     "0.0.0.0:9002",
		MetricsPort:                9090,
		MaxMultipartParts:          500,
		BodyQueueTimeoutMS:         30000,
	}
}

// Keys are the known settings keys (the fields' yaml tags), sorted.
func Keys() []string {
	t := reflect.TypeFor[Settings]()
	keys := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		keys = append(keys, t.Field(i).Tag.Get("yaml"))
	}
	sort.Strings(keys)
	return keys
}

// kinds are the YAML tags a value must carry for a field of each Go type, and how the error names it.
var kinds = map[reflect.Type]struct{ tag, what, item, itemWhat string }{
	reflect.TypeFor[string]():   {"!!str", "a string", "", ""},
	reflect.TypeFor[int]():      {"!!int", "an integer", "", ""},
	reflect.TypeFor[bool]():     {"!!bool", "true or false", "", ""},
	reflect.TypeFor[[]string](): {"!!seq", "a list of strings", "!!str", "a string"},
	reflect.TypeFor[[]int]():    {"!!seq", "a list of integers", "!!int", "an integer"},
}

// checkKinds refuses unknown keys and values of the wrong kind, naming the key: yaml.v3 alone would name
// a line and a Go type, or (into a bool) take YAML 1.1's yes/no. A list may be null (empty).
func checkKinds(doc *yaml.Node) error {
	types := map[string]reflect.Type{}
	t := reflect.TypeFor[Settings]()
	for i := range t.NumField() {
		types[t.Field(i).Tag.Get("yaml")] = t.Field(i).Type
	}
	var unknown []string
	for i := 0; i+1 < len(doc.Content); i += 2 {
		key, value := doc.Content[i].Value, doc.Content[i+1]
		typ, known := types[key]
		if !known {
			unknown = append(unknown, key)
			continue
		}
		kind := kinds[typ]
		if kind.item != "" && value.ShortTag() == "!!null" {
			continue
		}
		if value.ShortTag() != kind.tag {
			return fmt.Errorf("%s must be %s, not %s", key, kind.what, shown(value))
		}
		for _, item := range value.Content {
			if item.ShortTag() != kind.item {
				return fmt.Errorf("%s: %s is not %s", key, shown(item), kind.itemWhat)
			}
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("unknown settings %v; known: %v", unknown, Keys())
	}
	return nil
}

// shown is a value as an error message quotes it.
func shown(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	return fmt.Sprintf("%q", n.Value)
}

// Load reads and checks a settings file.
func Load(path string) (Settings, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Settings{}, fmt.Errorf("reading settings: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return Settings{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Parse decodes a settings document and checks it.
func Parse(data []byte) (Settings, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Settings{}, fmt.Errorf("not YAML: %w", err)
	}
	s := Defaults()
	if len(doc.Content) == 0 || doc.Content[0].ShortTag() == "!!null" {
		return s, s.Check() // an empty file: the defaults
	}
	if doc.Content[0].Kind != yaml.MappingNode {
		return Settings{}, errors.New("expected a mapping of settings")
	}
	if err := checkKinds(doc.Content[0]); err != nil {
		return Settings{}, err
	}
	// Over the defaults: a key not in the file keeps its default. KnownFields: an unknown key is refused
	// here too, should checkKinds ever miss one.
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return Settings{}, fmt.Errorf("decoding settings: %w", err)
	}
	return s, s.Check()
}

// Check validates the values (the CRS compares several of them as space- or |-separated strings: a value
// with a space or a | in it would widen the list silently).
func (s Settings) Check() error {
	if s.Mode != "block" && s.Mode != "detect" {
		return fmt.Errorf("mode must be block or detect, not %q", s.Mode)
	}
	if s.ParanoiaLevel < 1 || s.ParanoiaLevel > 4 {
		return errors.New("paranoia_level must be 1 to 4")
	}
	if s.InboundAnomalyThreshold < 1 {
		return errors.New("inbound_anomaly_threshold must be 1 or more")
	}
	if len(s.AllowedMethods) == 0 {
		return errors.New("allowed_methods must name at least one method")
	}
	for _, m := range s.AllowedMethods {
		if !methodRe.MatchString(m) {
			return fmt.Errorf("allowed_methods: %q is not an upper-case HTTP method such as PUT", m)
		}
	}
	if len(s.AllowedRequestContentTypes) == 0 {
		return errors.New("allowed_request_content_types must name at least one media type")
	}
	for _, m := range s.AllowedRequestContentTypes {
		if !mediaRe.MatchString(m) {
			return fmt.Errorf("allowed_request_content_types: %q is not a lower-case media type such as application/json (no parameters)", m)
		}
	}
	for _, id := range s.ExcludeRuleIDs {
		if id < 1 {
			return fmt.Errorf("exclude_rule_ids: %d is not a rule id", id)
		}
	}
	for _, tag := range s.ExcludeRuleTags {
		if !tagRe.MatchString(tag) {
			return fmt.Errorf("exclude_rule_tags: %q is not a rule tag (no quotes, backslashes or control characters)", tag)
		}
	}
	// Below 1 GiB: the engine is given one byte more (Directives) and refuses a limit above 1 GiB.
	if s.BodyLimit < 1 || s.BodyLimit >= 1<<30 {
		return fmt.Errorf("body_limit must be a number of bytes from 1 to 1 GiB - 1, not %d", s.BodyLimit)
	}
	if s.BodyLimitAction != "reject" && s.BodyLimitAction != "partial" {
		return errors.New("body_limit_action must be reject or partial")
	}
	if s.ResponseBodyLimit < 1 || s.ResponseBodyLimit >= 1<<30 {
		return fmt.Errorf("response_body_limit must be a number of bytes above 0 and below 1 GiB, not %d", s.ResponseBodyLimit)
	}
	if s.BlockStatus < 400 || s.BlockStatus > 599 {
		return fmt.Errorf("block_status must be an HTTP error status (400-599), not %d", s.BlockStatus)
	}
	if s.MetricsPort < 0 || s.MetricsPort > math.MaxUint16 {
		return fmt.Errorf("metrics_port must be a port (0: no metrics), not %d", s.MetricsPort)
	}
	if s.Workers < 0 || s.Workers > MaxWorkers {
		return fmt.Errorf("workers must be an integer from 1 to %d, not %d", MaxWorkers, s.Workers)
	}
	if s.MaxMultipartParts < 1 || s.MaxMultipartParts > MaxArguments {
		return fmt.Errorf("max_multipart_parts must be an integer from 1 to %d, not %d", MaxArguments, s.MaxMultipartParts)
	}
	if s.BodyInspections < 0 || s.BodyInspections > MaxWorkers {
		return fmt.Errorf("body_inspections must be an integer from 1 to %d (0: as many as workers), not %d", MaxWorkers, s.BodyInspections)
	}
	if s.BodyQueueTimeoutMS < 1 || s.BodyQueueTimeoutMS > 600000 {
		return fmt.Errorf("body_queue_timeout_ms must be an integer from 1 to 600000, not %d", s.BodyQueueTimeoutMS)
	}
	if _, err := os.Stat(filepath.Join(s.CRSDir, "rules", "REQUEST-901-INITIALIZATION.conf")); err != nil {
		return fmt.Errorf("crs_dir %s: no CRS rules/ there", s.CRSDir)
	}
	return nil
}

// XMLContentType is the Content-Type pattern (lowercased value) the engine parses as XML.
const XMLContentType = `^(?:application(?:/soap\+|/)|text/)xml`

// ResponseMediaTypes are the response media types whose bodies the engine reads: the recommended text
// types plus JSON (API error responses leak SQL and stack traces there too).
var ResponseMediaTypes = []string{"text/plain", "text/html", "text/xml", "application/json"}

// Directives is the whole engine configuration: engine settings, a CRS setup, the CRS rules, exclusions.
func (s Settings) Directives() (string, error) {
	engine := "On"
	if s.Mode == "detect" {
		engine = "DetectionOnly"
	}
	// CRS compares the request's media type with this string (920420, @within): the +json entry is no media
	// type, so it becomes a rule that adds the request's own +json type (200007) instead.
	var types []string
	jsonSuffix := false
	for _, m := range s.AllowedRequestContentTypes {
		if m == JSONSuffixTypes {
			jsonSuffix = true
			continue
		}
		types = append(types, "|"+m+"|")
	}
	if len(types) == 0 {
		// Only application/*+json: the engine refuses an empty setvar, and CRS would fill in its own list for
		// an unset one. No media type 920420 captures holds a space, so this allows none by itself.
		types = []string{"| |"}
	}
	lines := []string{
		"SecRuleEngine " + engine,
		"SecRequestBodyAccess On",
		// The server trims bodies to body_limit itself (and answers 413 for reject); one byte more here
		// because the engine flags a body of exactly its limit as INBOUND_DATA_ERROR.
		fmt.Sprintf("SecRequestBodyLimit %d", s.BodyLimit+1),
		fmt.Sprintf("SecRequestBodyInMemoryLimit %d", s.BodyLimit+1),
		"SecRequestBodyLimitAction ProcessPartial",
		fmt.Sprintf("SecArgumentsLimit %d", MaxArguments),
		// Skip a regex on input that cannot match (too short, a required literal missing): the same
		// verdicts, far less CPU on large bodies.
		"SecRxPreFilter On",
		// XML and JSON bodies are parsed, so the CRS sees their values; the server refuses XML with a DTD
		// before this (xmlguard).
		fmt.Sprintf(`SecRule REQUEST_HEADERS:Content-Type "%s" "id:200000,phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=XML"`, XMLContentType),
		`SecRule REQUEST_HEADERS:Content-Type "^application/json" "id:200001,phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=JSON"`,
		// Every +json type too, allowed or not: a type a user allows must never be read as raw text (a JSON
		// attack would pass the rules that read values), and one that is refused stays refused by 920420.
		fmt.Sprintf(`SecRule REQUEST_HEADERS:Content-Type "%s" "id:200006,phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=JSON"`, JSONSuffixContentType),
		// A body that does not parse is refused (an empty one, a DELETE with a Content-Type, is never
		// parsed). logdata: the parser's reason in the log, never the body.
		`SecRule REQBODY_ERROR "!@eq 0" "id:200002,phase:2,t:none,log,deny,status:400,msg:'Failed to parse request body.',logdata:'%{reqbody_error_msg}'"`,
		// The engine drops arguments past SecArgumentsLimit (no rule would see them: an attack in argument
		// 1001 would pass), so a request that reaches the limit is refused. Before the CRS in each phase:
		// it is also refused before the CRS spends its time on a thousand arguments.
		`SecRule ARGUMENTS_LIMIT_REACHED "@eq 1" "id:200004,phase:1,t:none,log,deny,status:400,msg:'Argument limit reached; request rejected (GET/PATH args)'"`,
		`SecRule ARGUMENTS_LIMIT_REACHED "@eq 1" "id:200005,phase:2,t:none,log,deny,status:400,msg:'Argument limit reached; request rejected (POST args)'"`,
	}
	lines = append(lines, s.responseDirectives()...)
	lines = append(lines,
		"SecAuditEngine Off",
		// CRS setup (what crs-setup.conf.example does, with the settings filled in).
		`SecDefaultAction "phase:1,log,auditlog,pass"`,
		`SecDefaultAction "phase:2,log,auditlog,pass"`,
		fmt.Sprintf(`SecAction "id:900000,phase:1,pass,t:none,nolog,setvar:tx.blocking_paranoia_level=%d"`, s.ParanoiaLevel),
		fmt.Sprintf(`SecAction "id:900110,phase:1,pass,t:none,nolog,setvar:tx.inbound_anomaly_score_threshold=%d,setvar:tx.outbound_anomaly_score_threshold=4"`, s.InboundAnomalyThreshold),
		fmt.Sprintf(`SecAction "id:900200,phase:1,pass,t:none,nolog,setvar:'tx.allowed_methods=%s'"`, strings.Join(s.AllowedMethods, " ")),
		fmt.Sprintf(`SecAction "id:900220,phase:1,pass,t:none,nolog,setvar:'tx.allowed_request_content_type=%s'"`, strings.Join(types, " ")),
	)
	if jsonSuffix {
		// After 900220, before 920420 reads the list (REQUEST-920, later in phase 1): the request's own
		// media type, lowercased as 920420 compares it, when it is one that 200006 parses as JSON.
		lines = append(lines, fmt.Sprintf(`SecRule REQUEST_HEADERS:Content-Type "@rx %s" "id:200007,phase:1,t:none,t:lowercase,pass,nolog,capture,setvar:'tx.allowed_request_content_type=%%{tx.allowed_request_content_type} |%%{tx.1}|'"`, JSONSuffixContentType))
	}
	lines = append(lines,
		fmt.Sprintf(`SecAction "id:900950,phase:1,pass,t:none,nolog,setvar:tx.crs_validate_utf8_encoding=%d"`, b2i(s.ValidateUTF8)),
		fmt.Sprintf(`SecAction "id:900990,phase:1,pass,t:none,nolog,tag:'OWASP_CRS',ver:'OWASP_CRS/%s',setvar:tx.crs_setup_version=%s"`, CRSVersion, strings.ReplaceAll(CRSVersion, ".", "")),
	)
	if s.SetupDirectives != "" {
		lines = append(lines, s.SetupDirectives)
	}
	request, err := filepath.Glob(filepath.Join(s.CRSDir, "rules", "REQUEST-*.conf"))
	if err != nil {
		return "", fmt.Errorf("listing CRS rules: %w", err)
	}
	files := request
	if s.InspectResponse {
		response, err := filepath.Glob(filepath.Join(s.CRSDir, "rules", "RESPONSE-*.conf"))
		if err != nil {
			return "", fmt.Errorf("listing CRS rules: %w", err)
		}
		files = append(files, response...)
	}
	sort.Strings(files)
	for _, f := range files {
		lines = append(lines, "Include "+f)
	}
	for _, id := range s.ExcludeRuleIDs {
		lines = append(lines, fmt.Sprintf("SecRuleRemoveById %d", id))
	}
	for _, tag := range s.ExcludeRuleTags {
		lines = append(lines, fmt.Sprintf(`SecRuleRemoveByTag "%s"`, tag))
	}
	if s.ExtraDirectives != "" {
		lines = append(lines, s.ExtraDirectives)
	}
	return strings.Join(lines, "\n") + "\n", nil
}

func (s Settings) responseDirectives() []string {
	if !s.InspectResponse {
		return []string{"SecResponseBodyAccess Off"}
	}
	return []string{
		"SecResponseBodyAccess On",
		"SecResponseBodyMimeType " + strings.Join(ResponseMediaTypes, " "),
		// The server hands over at most response_body_limit bytes; the engine must never refuse a response.
		fmt.Sprintf("SecResponseBodyLimit %d", s.ResponseBodyLimit+1),
		"SecResponseBodyLimitAction ProcessPartial",
		`SecDefaultAction "phase:3,log,auditlog,pass"`,
		`SecDefaultAction "phase:4,log,auditlog,pass"`,
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
