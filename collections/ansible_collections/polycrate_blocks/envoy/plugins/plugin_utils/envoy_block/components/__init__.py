"""One module per component; each exposes a pure `build(config) -> list[Step]` (called by builder.py) and,
where its section has rules beyond the schema's, `check(values, raw) -> (problems, warnings)` (called by
config.py). Which components exist, their build order, sections and check order: registry.py, the one list."""
