package server

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the Prometheus series the WAF serves on metrics_port (/metrics).
type Metrics struct {
	Registry          *prometheus.Registry
	Requests          prometheus.Counter
	Errors            prometheus.Counter
	Latency           prometheus.Histogram
	decisions         *prometheus.CounterVec
	responseDecisions *prometheus.CounterVec
	ruleHits          *prometheus.CounterVec
	decisionBy        map[string]prometheus.Counter
	responseBy        map[string]prometheus.Counter
}

// NewMetrics registers the series (and Go's runtime and process collectors) in a registry of their own.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		Requests: prometheus.NewCounter(prometheus.CounterOpts{Name: "waf_requests_total", Help: "Requests evaluated"}),
		Errors:   prometheus.NewCounter(prometheus.CounterOpts{Name: "waf_errors_total", Help: "Streams that failed inside the WAF"}),
		Latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "waf_evaluation_seconds",
			Help:    "Engine time per request",
			Buckets: []float64{0.0005, 0.001, 0.002, 0.004, 0.008, 0.016, 0.05, 0.1, 0.5},
		}),
		decisions:         prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waf_decisions_total", Help: "Decisions by action"}, []string{"action"}),
		responseDecisions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waf_response_decisions_total", Help: "Response decisions by action"}, []string{"action"}),
		ruleHits:          prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waf_rule_matches_total", Help: "Matched rules"}, []string{"rule_id"}),
		decisionBy:        map[string]prometheus.Counter{},
		responseBy:        map[string]prometheus.Counter{},
	}
	// Resolved once, so every action shows as 0 from the start and a decision costs no label lookup.
	for _, a := range []string{"allow", "flag", "block", "detect", "refused", "too_large"} {
		m.decisionBy[a] = m.decisions.WithLabelValues(a)
	}
	for _, a := range []string{"allow", "flag", "block", "detect"} {
		m.responseBy[a] = m.responseDecisions.WithLabelValues(a)
	}
	m.Registry.MustRegister(m.Requests, m.Errors, m.Latency, m.decisions, m.responseDecisions, m.ruleHits,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *Metrics) decision(action string)         { m.decisionBy[action].Inc() }
func (m *Metrics) responseDecision(action string) { m.responseBy[action].Inc() }
func (m *Metrics) ruleHit(id int)                 { m.ruleHits.WithLabelValues(strconv.Itoa(id)).Inc() }
