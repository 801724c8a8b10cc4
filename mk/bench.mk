# Benchmarks: reports with ratios against a baseline run side by side, never gates.
.PHONY: bench-render bench-waf

## bench-render: benchmark render and a no-change re-install against an empty playbook (a report)
# Render time of examples/waf (target 3x) and a no-change re-install on the real node (target 5x), each next to
# an empty playbook run, as ratios; run inside the harness. A report, not a gate.
bench-render: $(STAMP) tools node-images $(NODE_DEPS)
	@dir=$$(mktemp -d) && trap 'rm -rf $$dir' EXIT && \
	  $(BIN)/python -m tests.harness --dir $$dir --images -- $(BIN)/python tools/bench_render.py

## bench-waf: the WAF benchmark on real request shapes, ratios and profiles (a report)
# Side-by-side benchmark on issue 26's shapes (wrk from Debian, installed by its own rule), in a network
# namespace of its own; BENCH_BASELINE=/path/to/envoy-waf adds another build to the same interleaved run.
# A report with profiles in waf/bench-results/, not a gate.
bench-waf: $(STAMP) $(WAF_STAMP) $(WAF_BINARY) | $(LIBRE2) $(WRK)
	cd waf && PATH=$(WAF_BIN):$$PATH PYTHONPATH=src:$(CURDIR) BLOCK_PYTHON=$(BIN)/python unshare -n $(WAF_BIN)/python -m tests.traffic.netns \
	  $(WAF_BIN)/python -m envoy_waf.bench
