"""`python -m tests.conformance.publish SRC DEST`: the reports `make conformance` wrote in SRC, copied to DEST
(docs/conformance/) with the same content, laid out the way the repository's yamllint wants (a document start,
sequences indented under their keys); upstream's own bytes stay in artifacts/."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

from tests.conformance import report


class _Indented(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False) -> Any:
        return super().increase_indent(flow, False)


def publish(src: Path, dest: Path) -> list[Path]:
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sorted(src.glob("*-report.yaml")):
        text = yaml.dump(report.load(path), Dumper=_Indented, sort_keys=False, explicit_start=True, width=100)
        out = dest / path.name
        out.write_text(text, encoding="utf-8")
        written.append(out)
    return written


if __name__ == "__main__":
    for out in publish(Path(sys.argv[1]), Path(sys.argv[2])):
        print(out)
