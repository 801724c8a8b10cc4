package server

import (
	"bytes"
	"fmt"
	"time"

	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"

	"polycrate.local/envoy/waf/internal/xmlguard"
)

// refusedBeforeEngine is the answer to a whole request body the engine must not see (nil: none): a body
// past body_limit with reject (413), XML the guard refuses (400), a multipart body of too many parts (413).
func (x *exchange) refusedBeforeEngine() *extproc.ProcessingResponse {
	s := x.srv.settings
	if x.received > s.BodyLimit && s.BodyLimitAction == "reject" {
		x.srv.metrics.decision("too_large")
		return x.immediate(413, "Request body too large to inspect", "waf_body_too_large")
	}
	if x.req.xml {
		if reason := xmlguard.Refusal(x.body); reason != "" {
			return x.refuse(reason)
		}
	}
	if x.req.boundary != "" {
		if n := parts(x.body, x.req.boundary); n > s.MaxMultipartParts {
			reason := fmt.Sprintf("Multipart body of %d parts; at most %d are inspected", n, s.MaxMultipartParts)
			return x.refuseWith(413, reason, "waf_too_many_parts")
		}
	}
	return nil
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
	lane := x.srv.lane
	select {
	case lane <- struct{}{}: // a free slot: no timer
		return func() { <-lane }, nil
	default:
	}
	timer := time.NewTimer(time.Duration(x.srv.settings.BodyQueueTimeoutMS) * time.Millisecond)
	defer timer.Stop()
	select {
	case lane <- struct{}{}:
		return func() { <-lane }, nil
	case <-timer.C:
	case <-x.ctx.Done(): // Envoy gave up (message timeout, client gone): the answer goes nowhere
	}
	return nil, x.refuseWith(503, "No body inspection slot free in time; request refused", "waf_busy")
}
