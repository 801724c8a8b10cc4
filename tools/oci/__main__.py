"""`python -m tools.oci IMAGE...`: build (or find up to date) the named images; needs network."""

from __future__ import annotations

import argparse
import sys
import time

from tools.oci import OCIError, Store, images

BUILDERS = {"waf": images.waf_image, "polycrate": images.polycrate_image}


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
        print(f"image {name}: {image[:12]} ({time.monotonic() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
