"""Build waf/corpora/payloadsallthethings.jsonl: attack requests from a public payload collection.

Source: github.com/swisskyrepo/PayloadsAllTheThings at COMMIT (MIT licence, kept beside the corpus as
PayloadsAllTheThings.LICENSE), its Burp Intruder lists named in LISTS. Read from a git copy of the repository
(the `fetch` tool's mirror, or any clone holding COMMIT):

    python -m envoy_waf.payloads --repo /work/.mirror/swisskyrepo+PayloadsAllTheThings/repo

Each payload (lines of fewer than MIN_LENGTH characters dropped: a lone quote or pipe is no attack; exact
duplicates within a family dropped; at most PER_FAMILY per family, the first in list order) is placed where
applications take input, chosen by a hash of the payload so the corpus is the same on every run: a query
parameter, a form field, a JSON field, or (XML families) the body of an XML POST. Nothing is random.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

from .traffic import CORPORA, Request, make, write

COMMIT = "f9fa51417886ac11476cb62db2dff21773dc570b"
NAME = "payloadsallthethings"
MIN_LENGTH = 4
PER_FAMILY = 250
# family -> the Intruder lists it takes, in order.
LISTS: dict[str, tuple[str, ...]] = {
    "sqli": (
        "SQL Injection/Intruder/Auth_Bypass.txt",
        "SQL Injection/Intruder/Generic_Fuzz.txt",
        "SQL Injection/Intruder/SQLi_Polyglots.txt",
        "SQL Injection/Intruder/Generic_ErrorBased.txt",
        "SQL Injection/Intruder/Generic_TimeBased.txt",
        "SQL Injection/Intruder/Generic_UnionSelect.txt",
    ),
    "xss": (
        "XSS Injection/Intruders/XSS_Polyglots.txt",
        "XSS Injection/Intruders/RSNAKE_XSS.txt",
        "XSS Injection/Intruders/JHADDIX_XSS.txt",
        "XSS Injection/Intruders/IntrudersXSS.txt",
    ),
    "cmdi": (
        "Command Injection/Intruder/command-execution-unix.txt",
        "Command Injection/Intruder/command_exec.txt",
    ),
    "traversal": (
        "Directory Traversal/Intruder/directory_traversal.txt",
        "File Inclusion/Intruders/JHADDIX_LFI.txt",
    ),
    "ssti": ("Server Side Template Injection/Intruder/ssti.fuzz",),
    "nosqli": ("NoSQL Injection/Intruder/NoSQL.txt",),
    "ldapi": ("LDAP Injection/Intruder/LDAP_FUZZ_SMALL.txt",),
    "xxe": ("XXE Injection/Intruders/xml-attacks.txt",),
}
XML_FAMILIES = ("xxe",)
UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36"


def _show(repo: Path, path: str) -> str:
    done = subprocess.run(["git", "--git-dir", str(repo), "show", f"{COMMIT}:{path}"], capture_output=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{repo}: cannot read {path} at {COMMIT}: {done.stderr.decode(errors='replace')}")
    return done.stdout.decode("utf-8", errors="replace")


def payloads(repo: Path) -> Iterator[tuple[str, str]]:
    """(family, payload) in list order."""
    for family, lists in LISTS.items():
        seen: set[str] = set()
        for path in lists:
            for line in _show(repo, path).splitlines():
                payload = line.strip("\r\n")
                if len(payload.strip()) < MIN_LENGTH or payload in seen or len(seen) >= PER_FAMILY:
                    continue
                seen.add(payload)
                yield family, payload


def request(family: str, payload: str) -> Request:
    digest = hashlib.sha256(f"{family}\0{payload}".encode()).hexdigest()
    rid = f"{family}-{digest[:12]}"
    base = [("Host", "app.example.com"), ("User-Agent", UA), ("Accept", "*/*")]
    if family in XML_FAMILIES:
        body = payload if payload.lstrip().startswith("<?xml") else '<?xml version="1.0"?>' + payload
        body += "<foo>&xxe;</foo>" if "<!DOCTYPE" in payload and "<foo" not in payload else ""
        return make(
            NAME,
            rid,
            family,
            "POST",
            "/api/import",
            [*base, ("Content-Type", "application/xml")],
            body.encode(),
            attack=True,
        )
    place = int(digest[12:14], 16) % 3
    if place == 0:
        return make(NAME, rid, family, "GET", "/search?q=" + urllib.parse.quote(payload, safe=""), base, attack=True)
    if place == 1:
        form = urllib.parse.urlencode({"username": "alice", "comment": payload}).encode()
        headers = [*base, ("Content-Type", "application/x-www-form-urlencoded")]
        return make(NAME, rid, family, "POST", "/comments", headers, form, attack=True)
    data = json.dumps({"title": "note", "text": payload}, ensure_ascii=False).encode()
    headers = [*base, ("Content-Type", "application/json")]
    return make(NAME, rid, family, "POST", "/api/notes", headers, data, attack=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, required=True, help="git directory holding PayloadsAllTheThings")
    parser.add_argument("--out", type=Path, default=CORPORA / f"{NAME}.jsonl")
    args = parser.parse_args()
    count = write(args.out, (request(f, p) for f, p in payloads(args.repo)))
    print(f"{args.out}: {count} requests")
    return 0


if __name__ == "__main__":
    sys.exit(main())
