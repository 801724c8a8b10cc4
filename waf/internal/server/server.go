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
//
// The files, by job: server.go the service and its stream loop, exchange.go one stream's state machine
// (which message comes when), verdict.go the engine's phases and the verdict, admission.go what is refused
// before the engine (multipart parts, the body inspection lane), responses.go what goes back to Envoy,
// envoy.go reading Envoy's headers and attributes.
package server

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/corazawaf/coraza/v3"
	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"polycrate.local/envoy/waf/internal/audit"
	"polycrate.local/envoy/waf/internal/settings"
)

const (
	// BlockingEvaluationRule is CRS's inbound anomaly score check: in detect mode its match is a "detect".
	BlockingEvaluationRule = 949110
	// OutboundEvaluationRule is CRS's outbound (response) anomaly score check.
	OutboundEvaluationRule = 959100
	maxMessages            = 20
	maxTargets             = 32
	maxTargetKey           = 100
	maxPath                = 256
)

// Server holds the loaded rules and the settings; it is safe for concurrent streams. Nothing in it changes
// after New.
type Server struct {
	settings settings.Settings
	engine   coraza.WAF
	audit    *audit.Writer
	metrics  *Metrics
	// lane holds a token per request body under inspection (body_inspections): bodies wait for a slot,
	// headers-only requests never do, so a burst of expensive bodies leaves CPU for everything else.
	lane chan struct{}
}

// New loads the rules. It fails when a directive does not parse or a rule file is missing.
func New(s settings.Settings, w *audit.Writer, m *Metrics) (*Server, error) {
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
	return &Server{settings: s, engine: engine, audit: w, metrics: m, lane: make(chan struct{}, slots)}, nil
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

// errFailed is what Envoy is told when the WAF could not judge a request: Envoy then answers per its
// failure mode (closed by default). The reason goes to the log, not to Envoy.
var errFailed = status.Error(codes.Internal, "the WAF failed on this request")

// Process is the gRPC method: each message in, at most one response out, until the verdict is out.
func (s *Server) Process(stream extproc.ExternalProcessor_ProcessServer) (err error) {
	x := &exchange{srv: s, ctx: stream.Context()}
	defer x.close()
	defer func() {
		// A bug in the engine or here must not take the process down, nor let the request pass: the
		// stream fails, and Envoy answers per its failure mode (closed by default).
		if r := recover(); r != nil {
			s.metrics.Errors.Inc()
			s.audit.Event("error", map[string]any{"message": fmt.Sprint(r), "stack": string(debug.Stack())})
			err = errFailed
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
		resp, err := x.on(msg)
		if err != nil {
			return s.fail(err)
		}
		if resp == nil {
			continue
		}
		if err := stream.Send(resp); err != nil {
			return fmt.Errorf("answering Envoy: %w", err)
		}
		if x.done {
			// The verdict is out and nothing later matters to the WAF: end the stream now rather than
			// wait for Envoy to reset it.
			return nil
		}
	}
}

// fail counts and logs an error the engine returned on a request, and ends the stream with errFailed.
func (s *Server) fail(err error) error {
	s.metrics.Errors.Inc()
	s.audit.Event("error", map[string]any{"message": err.Error()})
	return errFailed
}
