"""One module per component; each exposes a pure `build(config) -> list[Step]`."""
