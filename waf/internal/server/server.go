// Package server is the ext_proc service (envoy.service.ext_proc.v3.ExternalProcessor): one Coraza
// transaction per stream (one HTTP request).
//
// Request headers start the transaction with the real client (Envoy's source.address attribute) and the
// raw :path, so the engine parses the query itself (no argument is lost to a stricter parser). With no
// body (end_of_stream) phase 2 runs at once on an empty body: the CRS decides in phase 2 (anomaly score,
// rule 949110), so no request skips it. Otherwise the verdict waits for the buffered body. A block is an
// ImmediateResponse with block_status (413 for a body past the limit with reject, 400 for a body that does
// not parse); everything else is CONTINUE. Detection-only never blocks but logs the same way.
//
// With inspect_response the transaction stays open for the response: its headers run phase 3, and the
// first response body message (trimmed to response_body_limit) runs phase 4. A block there replaces the
// response. Errors inside the WAF end the stream with a gRPC error: Envoy then fails closed unless the
// operator chose fail-open in Envoy (nothing here passes a request it could not judge).
package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/corazawaf/coraza/v3"
	"github.com/corazawaf/coraza/v3/types"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"polycrate.local/envoy/waf/internal/audit"
	"polycrate.local/envoy/waf/internal/settings"
	"polycrate.local/envoy/waf/internal/xmlguard"
)

const (
	// BlockingEvaluationRule is CRS's inbound anomaly score check: in detect mode its match is a "detect".
	BlockingEvaluationRule = 949110
	// OutboundEvaluationRule is CRS's outbound (response) anomaly score check.
	OutboundEvaluationRule = 959100
	maxMessages            = 20
	maxPath                = 256
)

// Attributes are the Envoy attributes the WAF asks for (the EnvoyExtensionPolicy's
// processingMode.request.attributes): the client and the listener's address, and the protocol.
var Attributes = []string{"source.address", "source.port", "destination.address", "destination.port", "request.protocol"}

// WAF holds the loaded rules and the settings; it is safe for concurrent streams.
type WAF struct {
	Settings settings.Settings
	Engine   coraza.WAF
	Audit    *audit.Writer
	Metrics  *Metrics
	// lane holds a token per request body under inspection (body_inspections): bodies wait for a slot,
	// headers-only requests never do, so a burst of expensive bodies leaves CPU for everything else.
	lane chan struct{}
}

// New loads the rules. It fails when a directive does not parse or a rule file is missing.
func New(s settings.Settings, w *audit.Writer, m *Metrics) (*WAF, error) {
	directives, err := s.Directives()
	if err != nil {
		return nil, err
	}
	engine, err := coraza.NewWAF(coraza.NewWAFConfig().WithDirectives(directives))
	if err != nil {
		return nil, fmt.Errorf("loading the rules: %w", err)
	}
	warmUp(engine, s.InspectResponse)
	slots := s.BodyInspections
	if slots == 0 {
		// One body per P: bodies keep every core busy, and a headers-only request waits behind at most
		// that many goroutines (a scheduling slice each), not behind every body in flight.
		slots = runtime.GOMAXPROCS(0)
	}
	return &WAF{Settings: s, Engine: engine, Audit: w, Metrics: m, lane: make(chan struct{}, slots)}, nil
}

// warmUp runs a few requests through the engine before the service takes traffic: the first transactions
// pay for lazily built state (pools, memoised transformations, the first RE2 calls), which on a busy node
// took the first real request past Envoy's message timeout (504). Verdicts are discarded; nothing is logged.
func warmUp(engine coraza.WAF, responses bool) {
	for i := 0; i < 3; i++ {
		tx := engine.NewTransaction()
		tx.ProcessConnection("127.0.0.1", 40000, "127.0.0.1", 10080)
		tx.ProcessURI("/warm-up?q=hello&id=1", "POST", "HTTP/1.1")
		tx.AddRequestHeader("Host", "warm-up.local")
		tx.AddRequestHeader("Content-Type", "application/json")
		if tx.ProcessRequestHeaders() == nil {
			_, _, _ = tx.WriteRequestBody([]byte(`{"name": "widget", "note": "` + strings.Repeat("warm ", 60) + `"}`))
			_, _ = tx.ProcessRequestBody()
		}
		if responses {
			tx.AddResponseHeader("Content-Type", "text/html")
			if tx.ProcessResponseHeaders(200, "HTTP/1.1") == nil {
				_, _, _ = tx.WriteResponseBody([]byte("<html><body>" + strings.Repeat("<p>ok</p>", 40) + "</body></html>"))
				_, _ = tx.ProcessResponseBody()
			}
		}
		tx.ProcessLogging()
		_ = tx.Close()
	}
}

var (
	continueHeaders = &extproc.ProcessingResponse{Response: &extproc.ProcessingResponse_RequestHeaders{
		RequestHeaders: &extproc.HeadersResponse{Response: &extproc.CommonResponse{}}}}
	continueBody = &extproc.ProcessingResponse{Response: &extproc.ProcessingResponse_RequestBody{
		RequestBody: &extproc.BodyResponse{Response: &extproc.CommonResponse{}}}}
	responseHeaders = &extproc.ProcessingResponse{Response: &extproc.ProcessingResponse_ResponseHeaders{
		ResponseHeaders: &extproc.HeadersResponse{}}}
	responseBody = &extproc.ProcessingResponse{Response: &extproc.ProcessingResponse_ResponseBody{
		ResponseBody: &extproc.BodyResponse{}}}
)

// Process is the gRPC method: each message in, at most one response out, until the verdict is out.
func (w *WAF) Process(stream extproc.ExternalProcessor_ProcessServer) (err error) {
	st := &exchange{waf: w, ctx: stream.Context()}
	defer st.close()
	defer func() {
		// A bug in the engine or here must not take the process down, nor let the request pass: the
		// stream fails, and Envoy answers per its failure mode (closed by default).
		if r := recover(); r != nil {
			w.Metrics.Errors.Inc()
			w.Audit.Event("error", map[string]any{"message": fmt.Sprint(r), "stack": string(debug.Stack())})
			err = status.Error(codes.Internal, "the WAF failed on this request")
		}
	}()
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if status.Code(err) == codes.Canceled {
				return nil // Envoy reset the stream (client gone): nothing to judge
			}
			return fmt.Errorf("receiving from Envoy: %w", err)
		}
		resp := st.on(msg)
		if resp == nil {
			continue
		}
		if err := stream.Send(resp); err != nil {
			return fmt.Errorf("answering Envoy: %w", err)
		}
		if st.done {
			// The verdict is out and nothing later matters to the WAF: end the stream now rather than
			// wait for Envoy to reset it.
			return nil
		}
	}
}

// request is what the audit line says about a request.
type request struct {
	method, path, id, client string
	xml                      bool
	boundary                 string // a multipart body's boundary
}

// exchange is one stream: the request, its transaction and the state of the body.
type exchange struct {
	waf      *WAF
	ctx      context.Context // the stream's: done when Envoy gave up on it
	tx       types.Transaction
	req      *request
	body     []byte
	received int
	seen     int // matched rules already reported
	status   int // response status, between the response headers and body
	pending  bool
	done     bool
}

func (x *exchange) close() {
	if x.tx != nil {
		x.tx.ProcessLogging()
		_ = x.tx.Close() // only releases buffers; nothing to report
		x.tx = nil
	}
}

func headerValue(h *corev3.HeaderValue) string {
	// Envoy >= 1.27 sends raw_value (bytes); value is then empty.
	if len(h.GetRawValue()) > 0 {
		return string(h.GetRawValue())
	}
	return h.GetValue()
}

func attributes(msg *extproc.ProcessingRequest) map[string]*structpb.Value {
	out := map[string]*structpb.Value{}
	for _, s := range msg.GetAttributes() {
		for k, v := range s.GetFields() {
			out[k] = v
		}
	}
	return out
}

// address splits an Envoy address attribute ("1.2.3.4:5", "[::1]:5"); port, when given, wins.
func address(attrs map[string]*structpb.Value, name, portName string) (string, int) {
	host, port := "", 0
	if v, ok := attrs[name]; ok {
		text := v.GetStringValue()
		if h, p, err := net.SplitHostPort(text); err == nil {
			host = h
			port, _ = strconv.Atoi(p)
		} else {
			host = text
		}
	}
	if v, ok := attrs[portName]; ok {
		if n := int(v.GetNumberValue()); n > 0 {
			port = n
		} else if n, err := strconv.Atoi(v.GetStringValue()); err == nil {
			port = n
		}
	}
	return host, port
}

func (x *exchange) on(msg *extproc.ProcessingRequest) *extproc.ProcessingResponse {
	w := x.waf
	switch m := msg.GetRequest().(type) {
	case *extproc.ProcessingRequest_RequestHeaders:
		if x.req != nil {
			return nil
		}
		return x.requestHeaders(m.RequestHeaders, attributes(msg))
	case *extproc.ProcessingRequest_RequestBody:
		if x.tx == nil || x.req == nil {
			return continueBody
		}
		chunk := m.RequestBody.GetBody()
		x.received += len(chunk)
		// Keep at most body_limit bytes: memory stays bounded whatever the client sends.
		if room := w.Settings.BodyLimit - len(x.body); room > 0 {
			x.body = append(x.body, chunk[:min(room, len(chunk))]...)
		}
		if !m.RequestBody.GetEndOfStream() {
			return continueBody
		}
		if x.received > w.Settings.BodyLimit && w.Settings.BodyLimitAction == "reject" {
			w.Metrics.decision("too_large")
			return x.decided(x.immediate(413, "Request body too large to inspect", "waf_body_too_large"))
		}
		if x.req.xml {
			if reason := xmlguard.Refusal(x.body); reason != "" {
				return x.decided(x.refuse(reason))
			}
		}
		if x.req.boundary != "" {
			if n := parts(x.body, x.req.boundary); n > w.Settings.MaxMultipartParts {
				reason := fmt.Sprintf("Multipart body of %d parts; at most %d are inspected", n, w.Settings.MaxMultipartParts)
				return x.decided(x.refuseWith(413, reason, "waf_too_many_parts"))
			}
		}
		release, refused := x.admit()
		if refused != nil {
			return x.decided(refused)
		}
		defer release()
		return x.decided(x.requestVerdict(x.body, continueBody))
	case *extproc.ProcessingRequest_ResponseHeaders:
		if x.tx == nil || x.req == nil || !w.Settings.InspectResponse {
			return responseHeaders
		}
		code := 200
		for _, h := range m.ResponseHeaders.GetHeaders().GetHeaders() {
			if h.GetKey() == ":status" {
				if n, err := strconv.Atoi(headerValue(h)); err == nil {
					code = n
				}
			} else if !strings.HasPrefix(h.GetKey(), ":") {
				x.tx.AddResponseHeader(h.GetKey(), headerValue(h))
			}
		}
		x.status = code
		started := time.Now()
		it := x.tx.ProcessResponseHeaders(code, "HTTP/1.1")
		if it == nil && m.ResponseHeaders.GetEndOfStream() { // no body (204, 304, HEAD): phase 4 now
			it, _ = x.tx.ProcessResponseBody()
		}
		if it != nil || m.ResponseHeaders.GetEndOfStream() {
			x.done = true
			return x.responseVerdict(it, started, responseHeaders)
		}
		x.pending = true
		return responseHeaders
	case *extproc.ProcessingRequest_ResponseBody:
		if x.tx == nil || x.req == nil || !x.pending {
			return responseBody
		}
		// The first body message is all Envoy sends when buffering (partially): inspect it now.
		x.pending = false
		x.done = true
		chunk := m.ResponseBody.GetBody()
		chunk = chunk[:min(len(chunk), w.Settings.ResponseBodyLimit)]
		started := time.Now()
		it, _, err := x.tx.WriteResponseBody(chunk)
		if err != nil {
			panic(fmt.Errorf("writing the response body: %w", err))
		}
		if it == nil {
			if it, err = x.tx.ProcessResponseBody(); err != nil {
				panic(fmt.Errorf("response body phase: %w", err))
			}
		}
		return x.responseVerdict(it, started, responseBody)
	}
	return nil
}

func (x *exchange) requestHeaders(h *extproc.HttpHeaders, attrs map[string]*structpb.Value) *extproc.ProcessingResponse {
	w := x.waf
	req := &request{method: "GET", path: "/"}
	var host string
	headers := h.GetHeaders().GetHeaders()
	for _, hv := range headers {
		switch k := hv.GetKey(); k {
		case ":method":
			req.method = headerValue(hv)
		case ":path":
			req.path = headerValue(hv)
		case ":authority":
			host = headerValue(hv)
		case "x-request-id":
			req.id = headerValue(hv)
		case "content-type":
			req.xml = req.xml || xmlguard.IsXML(headerValue(hv))
			if media, params, err := mime.ParseMediaType(headerValue(hv)); err == nil && strings.HasPrefix(media, "multipart/") {
				req.boundary = params["boundary"]
			}
		}
	}
	client, clientPort := address(attrs, "source.address", "source.port")
	server, serverPort := address(attrs, "destination.address", "destination.port")
	if client == "" {
		client = "0.0.0.0" // Envoy was not asked for source.address: the audit line says so
	}
	protocol := "HTTP/1.1"
	if v, ok := attrs["request.protocol"]; ok && v.GetStringValue() != "" {
		protocol = v.GetStringValue()
	}
	req.client = client
	x.req = req
	if req.id != "" {
		x.tx = w.Engine.NewTransactionWithID(req.id)
	} else {
		x.tx = w.Engine.NewTransaction()
	}
	tx := x.tx
	tx.ProcessConnection(client, clientPort, server, serverPort)
	// The raw request target: the engine splits path and query and decodes the arguments itself.
	tx.ProcessURI(req.path, req.method, protocol)
	if host != "" {
		tx.AddRequestHeader("Host", host)
		hostName, _, err := net.SplitHostPort(host)
		if err != nil {
			hostName = host
		}
		tx.SetServerName(hostName)
	}
	for _, hv := range headers {
		if k := hv.GetKey(); !strings.HasPrefix(k, ":") {
			tx.AddRequestHeader(k, headerValue(hv))
		}
	}
	if h.GetEndOfStream() { // no body follows: decide now, one round trip
		return x.decided(x.requestVerdict(nil, continueHeaders))
	}
	return continueHeaders
}

// requestVerdict runs phases 1 and 2 (2 always, on an empty body when there is none).
func (x *exchange) requestVerdict(body []byte, pass *extproc.ProcessingResponse) *extproc.ProcessingResponse {
	w := x.waf
	tx := x.tx
	started := time.Now()
	it := tx.ProcessRequestHeaders()
	if it == nil {
		if len(body) > 0 {
			var err error
			if it, _, err = tx.WriteRequestBody(body); err != nil {
				panic(fmt.Errorf("writing the request body: %w", err))
			}
		}
		if it == nil {
			var err error
			if it, err = tx.ProcessRequestBody(); err != nil {
				panic(fmt.Errorf("request body phase: %w", err))
			}
		}
	}
	w.Metrics.Latency.Observe(time.Since(started).Seconds())
	w.Metrics.Requests.Inc()
	action := x.judge(it, BlockingEvaluationRule, "", 0)
	w.Metrics.decision(action)
	if action == "block" {
		return x.immediate(x.blockStatus(it), "Request blocked", "waf_blocked")
	}
	return pass
}

func (x *exchange) responseVerdict(it *types.Interruption, started time.Time, pass *extproc.ProcessingResponse) *extproc.ProcessingResponse {
	w := x.waf
	w.Metrics.Latency.Observe(time.Since(started).Seconds())
	action := x.judge(it, OutboundEvaluationRule, "response", x.status)
	w.Metrics.responseDecision(action)
	if action == "block" {
		// A blocked response never reaches the client.
		return x.immediate(x.blockStatus(it), "Response blocked", "waf_response_blocked")
	}
	return pass
}

// blockStatus is block_status for the CRS's deny (403); other engine statuses (400 for an unparsable
// body) say something else and pass through.
func (x *exchange) blockStatus(it *types.Interruption) int {
	if it == nil || it.Status == 0 || it.Status == 200 || it.Status == 403 {
		return x.waf.Settings.BlockStatus
	}
	return it.Status
}

// decided marks the request's verdict as out: the stream is done unless the response is still to be
// inspected (a blocked request never gets one).
func (x *exchange) decided(resp *extproc.ProcessingResponse) *extproc.ProcessingResponse {
	_, immediate := resp.GetResponse().(*extproc.ProcessingResponse_ImmediateResponse)
	x.done = !x.waf.Settings.InspectResponse || immediate
	return resp
}

// judge names the verdict's action (block, flag, allow; detect when detection-only let the CRS's
// evaluation rule fire), counts its rules and writes one audit line when a rule matched: rule ids and
// messages, never bodies.
func (x *exchange) judge(it *types.Interruption, evaluationRule int, phase string, status int) string {
	w := x.waf
	matched := x.tx.MatchedRules()
	var ids []int
	var messages []string
	for _, mr := range matched[min(x.seen, len(matched)):] {
		if l, ok := mr.(interface{ Log() bool }); ok && !l.Log() {
			continue // nolog rules (CRS setup, flow control) are not findings
		}
		id := mr.Rule().ID()
		ids = append(ids, id)
		w.Metrics.ruleHit(id)
		if msg := mr.Message(); msg != "" && len(messages) < maxMessages {
			messages = append(messages, msg)
		}
	}
	x.seen = len(matched)
	action := "allow"
	switch {
	case it != nil && w.Settings.Mode == "block":
		action = "block"
	case len(ids) > 0:
		action = "flag"
	}
	if w.Settings.Mode == "detect" {
		for _, id := range ids {
			if id == evaluationRule {
				action = "detect"
			}
		}
	}
	if len(ids) > 0 {
		w.Audit.Decision(audit.Line{
			Action:    action,
			Phase:     phase,
			RequestID: x.req.id,
			Method:    x.req.method,
			Path:      truncate(x.req.path, maxPath),
			Client:    x.req.client,
			Status:    status,
			RuleIDs:   ids,
			Messages:  messages,
		})
	}
	return action
}

// parts counts a multipart body's parts: the boundary delimiters in it, less the closing one. A
// delimiter inside a part's content counts too, so the count errs high (refusing, never admitting more).
func parts(body []byte, boundary string) int {
	return max(0, bytes.Count(body, []byte("--"+boundary))-1)
}

// admit waits for a body inspection slot: at most body_queue_timeout_ms, and not past the stream's end.
// Refused (503, fail-closed) when none came: the body is never passed uninspected. The caller releases
// the slot when the verdict is out.
func (x *exchange) admit() (release func(), refused *extproc.ProcessingResponse) {
	w := x.waf
	select {
	case w.lane <- struct{}{}: // a free slot: no timer
		return func() { <-w.lane }, nil
	default:
	}
	timer := time.NewTimer(time.Duration(w.Settings.BodyQueueTimeoutMS) * time.Millisecond)
	defer timer.Stop()
	select {
	case w.lane <- struct{}{}:
		return func() { <-w.lane }, nil
	case <-timer.C:
	case <-x.ctx.Done(): // Envoy gave up (message timeout, client gone): the answer goes nowhere
	}
	return nil, x.refuseWith(503, "No body inspection slot free in time; request refused", "waf_busy")
}

// refuse is the 400 for an XML body the engine must not parse, in block and detect mode alike: parsing
// it is what the guard prevents, so detection-only cannot look at it either.
func (x *exchange) refuse(reason string) *extproc.ProcessingResponse {
	return x.refuseWith(400, reason, "waf_body_refused")
}

// refuseWith refuses the request before the engine: one audit line with the reason, the status given.
func (x *exchange) refuseWith(code int, reason, details string) *extproc.ProcessingResponse {
	x.waf.Metrics.decision("refused")
	x.waf.Audit.Decision(audit.Line{
		Action:    "refused",
		RequestID: x.req.id,
		Method:    x.req.method,
		Path:      truncate(x.req.path, maxPath),
		Client:    x.req.client,
		RuleIDs:   []int{},
		Messages:  []string{reason},
	})
	return x.immediate(code, reason, details)
}

func (x *exchange) immediate(code int, what, details string) *extproc.ProcessingResponse {
	id := x.req.id
	if id == "" {
		id = "n/a"
	}
	text := fmt.Sprintf("%s (request id %s)\n", what, id)
	return &extproc.ProcessingResponse{Response: &extproc.ProcessingResponse_ImmediateResponse{
		ImmediateResponse: &extproc.ImmediateResponse{
			Status:  &typev3.HttpStatus{Code: typev3.StatusCode(code)},
			Body:    []byte(text),
			Details: details,
		}}}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
