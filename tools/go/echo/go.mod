// The tenant backend of the real-node tests (the echo image, tests/harness/images.py): no dependencies.
module polycrate.local/envoy/tools/echo

go 1.26.0
