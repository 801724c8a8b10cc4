"""One request of an efficacy corpus (waf/corpora/*.jsonl): what is sent through Envoy and how it is judged.

A line is a JSON object: `id` (unique in its corpus), `family`, `split` ("tuning" or "heldout"), `method`,
`path` (already URL-encoded), `headers` (a list of [name, value]) and `body` (UTF-8 text) or `body_b64`
(bytes). The split is derived from the id alone (split_of), so a corpus regenerated from the same sources
splits the same way, and nothing about a request's verdict can move it between halves.
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import hashlib
import json
import random
import urllib.parse
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
SPLITS = ("tuning", "heldout")


def split_of(corpus: str, request_id: str) -> str:
    """The half a request belongs to: the low bit of a hash of its corpus and id."""
    return SPLITS[hashlib.sha256(f"{corpus}\0{request_id}".encode()).digest()[0] & 1]


@dataclass(frozen=True)
class Request:
    corpus: str
    id: str
    family: str
    split: str
    method: str
    path: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    attack: bool

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "family": self.family,
            "split": self.split,
            "method": self.method,
            "path": self.path,
            "headers": [list(h) for h in self.headers],
        }
        try:
            out["body"] = self.body.decode("utf-8")
        except UnicodeDecodeError:
            out["body_b64"] = base64.b64encode(self.body).decode("ascii")
        return out


def make(  # noqa: PLR0917 (a request's parts in the order of its line; every generator calls it so)
    corpus: str,
    request_id: str,
    family: str,
    method: str,
    path: str,
    headers: Iterable[tuple[str, str]],
    body: bytes = b"",
    *,
    attack: bool,
) -> Request:
    """A request with its split, and a Content-Length whenever it has a body (as every client sends)."""
    hdrs = [(k, v) for k, v in headers if k.lower() != "content-length"]
    if body:
        hdrs.append(("Content-Length", str(len(body))))
    return Request(corpus, request_id, family, split_of(corpus, request_id), method, path, tuple(hdrs), body, attack)


def write(path: Path, requests: Iterable[Request]) -> int:
    """Write a corpus, one compact JSON object a line, in the order given; returns the count."""
    lines = [json.dumps(r.to_json(), ensure_ascii=False, separators=(",", ":")) for r in requests]
    ids = [json.loads(line)["id"] for line in lines]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path}: duplicate request ids")
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines)


class HeldOutGen:
    """What a held-out benign corpus's generator keeps (benign-third, benign-fourth, benign-fifth): a seeded
    random source and the requests made so far, each marked held out; `prefix` starts every request id."""

    def __init__(self, name: str, prefix: str, seed: int) -> None:
        self.name, self.prefix = name, prefix
        self.rng = random.Random(seed)
        self.out: list[Request] = []

    def add(self, family: str, method: str, path: str, headers: list[tuple[str, str]], body: bytes = b"") -> None:
        rid = f"{self.prefix}-{family}-{len(self.out):05d}"
        # Held out whole: no request of this corpus is tuned on (`split` says so in every line).
        req = make(self.name, rid, family, method, path, headers, body, attack=False)
        self.out.append(dataclasses.replace(req, split="heldout"))

    def pick(self, seq: Any) -> Any:
        return self.rng.choice(seq)

    def uid(self) -> str:
        return str(uuid.UUID(bytes=self.rng.randbytes(16), version=4))

    def json(self, doc: Any) -> bytes:
        return json.dumps(doc, ensure_ascii=False).encode()

    def form(self, fields: dict[str, str] | list[tuple[str, str]]) -> bytes:
        """An urlencoded form body (spaces as +, as browsers send a form)."""
        return urllib.parse.urlencode(fields).encode()

    def hex(self, n: int) -> str:
        """n random bytes as hex (trace ids, tokens, digests)."""
        return self.rng.randbytes(n).hex()

    def b64url(self, n: int) -> str:
        """n random bytes as unpadded base64url (bearer tokens, session cookies)."""
        return base64.urlsafe_b64encode(self.rng.randbytes(n)).decode().rstrip("=")


def query(params: dict[str, str] | list[tuple[str, str]]) -> str:
    """A query string as applications encode it: spaces as %20, not +."""
    return urllib.parse.urlencode(params, quote_via=urllib.parse.quote)


def generator_main(doc: str | None, out: Path, generate: Callable[[], Iterable[Request]]) -> int:
    """The command line of a corpus generator: write the corpus (to --out, else `out`) and print its digest."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=out)
    args = parser.parse_args()
    count = write(args.out, generate())
    digest = hashlib.sha256(args.out.read_bytes()).hexdigest()[:16]
    print(f"{args.out}: {count} requests, sha256 {digest}")
    return 0


def read(path: Path, *, attack: bool) -> Iterator[Request]:
    corpus = path.stem
    for line in path.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        body = base64.b64decode(d["body_b64"]) if "body_b64" in d else str(d.get("body", "")).encode("utf-8")
        yield Request(
            corpus,
            str(d["id"]),
            str(d["family"]),
            str(d["split"]),
            str(d["method"]),
            str(d["path"]),
            tuple((str(k), str(v)) for k, v in d["headers"]),
            body,
            attack,
        )
