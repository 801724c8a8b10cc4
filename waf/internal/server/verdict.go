package server

import (
	"fmt"
	"slices"
	"time"

	"github.com/corazawaf/coraza/v3/types"
	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"

	"polycrate.local/envoy/waf/internal/audit"
)

// requestVerdict runs phases 1 and 2 (2 always, on an empty body when there is none): block_status when
// the engine interrupts in block mode, else pass.
func (x *exchange) requestVerdict(body []byte, pass *extproc.ProcessingResponse) (*extproc.ProcessingResponse, error) {
	srv := x.srv
	tx := x.tx
	started := time.Now()
	it := tx.ProcessRequestHeaders()
	if it == nil && len(body) > 0 {
		var err error
		if it, _, err = tx.WriteRequestBody(body); err != nil {
			return nil, fmt.Errorf("writing the request body: %w", err)
		}
	}
	if it == nil {
		var err error
		if it, err = tx.ProcessRequestBody(); err != nil {
			return nil, fmt.Errorf("request body phase: %w", err)
		}
	}
	srv.metrics.Latency.Observe(time.Since(started).Seconds())
	srv.metrics.Requests.Inc()
	action := x.judge(it, BlockingEvaluationRule, "", 0)
	srv.metrics.decision(action)
	if action == "block" {
		return x.immediate(x.blockStatus(it), "Request blocked", "waf_blocked"), nil
	}
	return pass, nil
}

func (x *exchange) responseVerdict(it *types.Interruption, started time.Time, pass *extproc.ProcessingResponse) *extproc.ProcessingResponse {
	srv := x.srv
	srv.metrics.Latency.Observe(time.Since(started).Seconds())
	action := x.judge(it, OutboundEvaluationRule, "response", x.status)
	srv.metrics.responseDecision(action)
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
		return x.srv.settings.BlockStatus
	}
	return it.Status
}

// decided marks the request's verdict as out: the stream is done unless the response is still to be
// inspected (a blocked request never gets one). An error passes through.
func (x *exchange) decided(resp *extproc.ProcessingResponse, err error) (*extproc.ProcessingResponse, error) {
	if err != nil {
		return nil, err
	}
	_, immediate := resp.GetResponse().(*extproc.ProcessingResponse_ImmediateResponse)
	x.done = !x.srv.settings.InspectResponse || immediate
	return resp, nil
}

// judge names the verdict's action (block, flag, allow; detect when detection-only let the CRS's
// evaluation rule fire), counts its rules and writes one audit line when a rule matched: rule ids and
// messages, never bodies.
func (x *exchange) judge(it *types.Interruption, evaluationRule int, phase string, status int) string {
	srv := x.srv
	matched := x.tx.MatchedRules()
	var ids []int
	var messages, targets []string
	for _, mr := range matched[min(x.seen, len(matched)):] {
		if l, ok := mr.(interface{ Log() bool }); ok && !l.Log() {
			continue // nolog rules (CRS setup, flow control) are not findings
		}
		id := mr.Rule().ID()
		ids = append(ids, id)
		srv.metrics.ruleHit(id)
		if msg := mr.Message(); msg != "" && len(messages) < maxMessages {
			messages = append(messages, msg)
		}
		targets = appendTargets(targets, id, mr.MatchedDatas())
	}
	x.seen = len(matched)
	action := "allow"
	switch {
	case it != nil && srv.settings.Mode == "block":
		action = "block"
	case len(ids) > 0:
		action = "flag"
	}
	if srv.settings.Mode == "detect" {
		for _, id := range ids {
			if id == evaluationRule {
				action = "detect"
			}
		}
	}
	if len(ids) > 0 {
		srv.audit.Decision(audit.Line{
			Action:    action,
			Phase:     phase,
			RequestID: x.req.id,
			Method:    x.req.method,
			Path:      truncate(x.req.path, maxPath),
			Client:    x.req.client,
			Status:    status,
			RuleIDs:   ids,
			Messages:  messages,
			Matched:   targets,
		})
	}
	return action
}

// appendTargets adds "<rule id> <VARIABLE>[:<key>]" for each place a rule matched, once each and at most
// maxTargets in all: the names an exclusion takes (argument names are the client's, so a key is cut at
// maxTargetKey bytes); never the matched value.
func appendTargets(targets []string, id int, datas []types.MatchData) []string {
	for _, md := range datas {
		if len(targets) >= maxTargets {
			return targets
		}
		target := fmt.Sprintf("%d %s", id, md.Variable().Name())
		if key := md.Key(); key != "" {
			target += ":" + truncate(key, maxTargetKey)
		}
		if !slices.Contains(targets, target) {
			targets = append(targets, target)
		}
	}
	return targets
}
