//go:build tools

// Package tools pins the VictoriaMetrics commands the alert test runs (tests/traffic/test_alerts.py): the
// single-node server, which scrapes the real Envoy and WAF, and vmalert, which evaluates the block's VMRule.
package tools

import (
	_ "github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics"
	_ "github.com/VictoriaMetrics/VictoriaMetrics/app/vmalert"
)
