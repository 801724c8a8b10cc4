"""`python -m tools.oci IMAGE...`: build (or find up to date) the named images; needs network."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

from tools.oci import OCIError, Store, conformance, images

BUILDERS: dict[str, Callable[[Store], str | list[str]]] = {
    "waf": images.waf_image,
    "polycrate": images.polycrate_image,
    "node": images.node_images,
    "conformance": conformance.conformance_images,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.oci", description=__doc__)
    parser.add_argument("images", nargs="+", choices=sorted(BUILDERS))
    args = parser.parse_args(argv)
    store = Store()
    for name in args.images:
        start = time.monotonic()
        try:
            image = BUILDERS[name](store)
        except OCIError as exc:
            print(f"image {name}: {exc}", file=sys.stderr)
            return 1
        what = ", ".join(image) if isinstance(image, list) else image[:12]
        print(f"image {name}: {what} ({time.monotonic() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
