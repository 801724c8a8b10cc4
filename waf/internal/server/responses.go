package server

import (
	"fmt"

	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"

	"polycrate.local/envoy/waf/internal/audit"
)

// What goes back to Envoy when the WAF lets a message through (CONTINUE, nothing changed).
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

// refuse is the 400 for an XML body the engine must not parse, in block and detect mode alike: parsing
// it is what the guard prevents, so detection-only cannot look at it either.
func (x *exchange) refuse(reason string) *extproc.ProcessingResponse {
	return x.refuseWith(400, reason, "waf_body_refused")
}

// refuseWith refuses the request before the engine: one audit line with the reason, the status given.
func (x *exchange) refuseWith(code int, reason, details string) *extproc.ProcessingResponse {
	x.srv.metrics.decision("refused")
	x.srv.audit.Decision(audit.Line{
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

// immediate answers the client directly (the request, or the response, never reaches its destination).
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
