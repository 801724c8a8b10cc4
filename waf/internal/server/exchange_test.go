package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"polycrate.local/envoy/waf/internal/audit"
	"polycrate.local/envoy/waf/internal/settings"
	"polycrate.local/envoy/waf/internal/testsupport"
)

// kind names a response the way the table below expects it.
func kind(r *extproc.ProcessingResponse) string {
	switch v := r.GetResponse().(type) {
	case *extproc.ProcessingResponse_RequestHeaders:
		return "request-headers"
	case *extproc.ProcessingResponse_RequestBody:
		return "request-body"
	case *extproc.ProcessingResponse_ResponseHeaders:
		return "response-headers"
	case *extproc.ProcessingResponse_ResponseBody:
		return "response-body"
	case *extproc.ProcessingResponse_ImmediateResponse:
		return fmt.Sprintf("immediate %d", v.ImmediateResponse.GetStatus().GetCode())
	}
	return "none"
}

func bodyChunk(data string, end bool) *extproc.ProcessingRequest {
	return &extproc.ProcessingRequest{Request: &extproc.ProcessingRequest_RequestBody{
		RequestBody: &extproc.HttpBody{Body: []byte(data), EndOfStream: end}}}
}

func respHeaders(code, contentType string, end bool) *extproc.ProcessingRequest {
	hs := []*corev3.HeaderValue{{Key: ":status", RawValue: []byte(code)}, {Key: "content-type", RawValue: []byte(contentType)}}
	return &extproc.ProcessingRequest{Request: &extproc.ProcessingRequest_ResponseHeaders{
		ResponseHeaders: &extproc.HttpHeaders{Headers: &corev3.HeaderMap{Headers: hs}, EndOfStream: end}}}
}

func respBody(data string) *extproc.ProcessingRequest {
	return &extproc.ProcessingRequest{Request: &extproc.ProcessingRequest_ResponseBody{
		ResponseBody: &extproc.HttpBody{Body: []byte(data), EndOfStream: true}}}
}

var (
	getBenign = headers("GET", "/search?q=envoy", nil, true, "")
	getAttack = headers("GET", "/?id=1'%20OR%20'1'='1", nil, true, "")
	postJSON  = headers("POST", "/api", map[string]string{"content-type": "application/json"}, false, "")
	trailers  = &extproc.ProcessingRequest{Request: &extproc.ProcessingRequest_RequestTrailers{RequestTrailers: &extproc.HttpTrailers{}}}
	sqlLeak   = "<html><body>You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version</body></html>"
)

// step is one message of a stream and what the exchange must answer: the response's kind, and whether
// the stream is over after it (the verdict out and nothing left to inspect).
type step struct {
	msg  *extproc.ProcessingRequest
	want string
	done bool
}

// The exchange's state machine, message by message, with response inspection off and on: which answer
// each message gets, and when the stream ends. Mutation: decided() ignoring inspect_response -> red (the
// stream ends before the response is inspected).
func TestExchangeStateMachine(t *testing.T) {
	servers := map[bool]*Server{}
	for _, inspect := range []bool{false, true} {
		s := settings.Defaults()
		s.CRSDir = testsupport.CRSDir(t)
		s.InspectResponse = inspect
		s.BodyLimit = 1024
		srv, err := New(s, audit.New(io.Discard), NewMetrics())
		if err != nil {
			t.Fatal(err)
		}
		servers[inspect] = srv
	}
	tests := []struct {
		name    string
		inspect bool
		steps   []step
	}{
		{"benign GET decided on its headers", false, []step{{getBenign, "request-headers", true}}},
		{"attack GET blocked on its headers", false, []step{{getAttack, "immediate 403", true}}},
		{"blocked request ends the stream even with responses inspected", true, []step{{getAttack, "immediate 403", true}}},
		{"body in chunks, decided on the last", false, []step{
			{postJSON, "request-headers", false},
			{bodyChunk(`{"name": `, false), "request-body", false},
			{bodyChunk(`"widget"}`, true), "request-body", true},
		}},
		{"attack in the body", false, []step{
			{postJSON, "request-headers", false},
			{bodyChunk(`{"q": "<script>alert(1)</script>"}`, true), "immediate 403", true},
		}},
		{"body past the limit with reject", false, []step{
			{postJSON, "request-headers", false},
			{bodyChunk(strings.Repeat("a", 1000), false), "request-body", false},
			{bodyChunk(strings.Repeat("a", 100), true), "immediate 413", true},
		}},
		{"unparsable body", false, []step{{postJSON, "request-headers", false}, {bodyChunk(`{"a": `, true), "immediate 400", true}}},
		{"body before headers passes untouched", false, []step{{bodyChunk("x", true), "request-body", false}}},
		{"second headers message ignored", false, []step{
			{postJSON, "request-headers", false},
			{postJSON, "none", false},
			{bodyChunk(`{"a": "b"}`, true), "request-body", true},
		}},
		{"trailers are not answered", false, []step{{postJSON, "request-headers", false}, {trailers, "none", false}}},
		{"response not inspected when off", false, []step{
			{respHeaders("200", "text/html", false), "response-headers", false},
			{respBody(sqlLeak), "response-body", false},
		}},
		{"benign response inspected", true, []step{
			{getBenign, "request-headers", false},
			{respHeaders("200", "text/html", false), "response-headers", false},
			{respBody("<html><body>hello</body></html>"), "response-body", true},
		}},
		{"leaking response replaced", true, []step{
			{getBenign, "request-headers", false},
			{respHeaders("500", "text/html", false), "response-headers", false},
			{respBody(sqlLeak), "immediate 403", true},
		}},
		{"response without a body decided on its headers", true, []step{
			{getBenign, "request-headers", false},
			{respHeaders("204", "text/html", true), "response-headers", true},
		}},
		{"response body without inspected headers passes", true, []step{
			{getBenign, "request-headers", false},
			{respBody(sqlLeak), "response-body", false},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := &exchange{srv: servers[tc.inspect], ctx: context.Background()}
			defer x.close()
			for i, st := range tc.steps {
				resp, err := x.on(st.msg)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if got := kind(resp); got != st.want || x.done != st.done {
					t.Fatalf("step %d: %s (done %v), want %s (done %v)", i, got, x.done, st.want, st.done)
				}
			}
		})
	}
}

// An error from the engine ends the stream with INTERNAL (Envoy fails closed), counted and logged with its
// reason; the reason never reaches Envoy.
func TestFailEndsTheStreamWithInternal(t *testing.T) {
	out := &lockedBuffer{}
	m := NewMetrics()
	srv := &Server{audit: audit.New(out), metrics: m}
	err := srv.fail(fmt.Errorf("request body phase: %w", errors.New("disk full")))
	if status.Code(err) != codes.Internal || strings.Contains(err.Error(), "disk full") {
		t.Errorf("fail returned %v, want INTERNAL without the reason", err)
	}
	if len(out.writes) != 1 || !strings.Contains(out.writes[0], `"request body phase: disk full"`) {
		t.Errorf("log: %q", out.writes)
	}
}
