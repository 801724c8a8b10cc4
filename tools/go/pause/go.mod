// The real node's sandbox process (the pause image, tests/harness/images.py): no dependencies.
module polycrate.local/envoy/tools/pause

go 1.26.0
