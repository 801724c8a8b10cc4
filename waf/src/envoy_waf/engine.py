"""libmodsecurity v3 (the reference SecLang engine) driven through its C API with ctypes.

The rules are loaded once per process; each HTTP request is one Transaction, which lives from the request
headers to the end of the response when the response is inspected too (the CRS response rules read what
the request phases set). Rule loading is not thread-safe, evaluation with one shared rule set is. Matched
rule ids and messages come from the log callback (without one, libmodsecurity prints every match to stdout).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

_ID = re.compile(rb'\[id "(\d+)"\]')
_MSG = re.compile(rb'\[msg "([^"]*)"\]')


class EngineError(RuntimeError):
    """The rules could not be loaded or the library misbehaved."""


class _Intervention(ctypes.Structure):
    _fields_ = [
        ("status", ctypes.c_int),
        ("pause", ctypes.c_int),
        ("url", ctypes.c_void_p),
        ("log", ctypes.c_void_p),
        ("disruptive", ctypes.c_int),
    ]


_LOG_CB = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)


def find_library() -> str:
    """The libmodsecurity shared object: $LIBMODSECURITY, the PyPI wheel's copy, or the system one."""
    explicit = os.environ.get("LIBMODSECURITY")
    if explicit:
        return explicit
    try:
        import libmodsecurity  # noqa: PLC0415 - optional: the PyPI wheel bundles the .so next to its package

        base = Path(libmodsecurity.__file__).resolve().parent.parent / "libmodsecurity.libs"
        found = sorted(glob.glob(str(base / "libmodsecurity*.so*")))
        if found:
            return found[0]
    except ImportError:
        pass
    system = ctypes.util.find_library("modsecurity")
    if system:
        return system
    raise EngineError("libmodsecurity not found: pip install libmodsecurity, or set LIBMODSECURITY")


def _bind(lib: ctypes.CDLL) -> ctypes.CDLL:
    p, i, c, sz = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t
    signatures: dict[str, tuple[object, list[object]]] = {
        "msc_init": (p, []),
        "msc_set_connector_info": (None, [p, c]),
        "msc_set_log_cb": (None, [p, _LOG_CB]),
        "msc_create_rules_set": (p, []),
        "msc_rules_add": (i, [p, c, ctypes.POINTER(ctypes.c_char_p)]),
        "msc_rules_add_file": (i, [p, c, ctypes.POINTER(ctypes.c_char_p)]),
        "msc_rules_cleanup": (i, [p]),
        "msc_new_transaction_with_id": (p, [p, p, c, p]),
        "msc_process_connection": (i, [p, c, i, c, i]),
        "msc_process_uri": (i, [p, c, c, c]),
        "msc_add_n_request_header": (i, [p, c, sz, c, sz]),
        "msc_process_request_headers": (i, [p]),
        "msc_append_request_body": (i, [p, c, sz]),
        "msc_process_request_body": (i, [p]),
        "msc_add_n_response_header": (i, [p, c, sz, c, sz]),
        "msc_process_response_headers": (i, [p, i, c]),
        "msc_append_response_body": (i, [p, c, sz]),
        "msc_process_response_body": (i, [p]),
        "msc_intervention": (i, [p, ctypes.POINTER(_Intervention)]),
        "msc_process_logging": (i, [p]),
        "msc_transaction_cleanup": (None, [p]),
        "msc_cleanup": (None, [p]),
    }
    for name, (restype, argtypes) in signatures.items():
        func = getattr(lib, name)
        func.restype = restype
        func.argtypes = argtypes
    return lib


@dataclass
class Verdict:
    """Outcome of one request: blocked (with status) or not, and the rules that matched."""

    blocked: bool = False
    status: int = 200
    rule_ids: list[int] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)


class Engine:
    """One ModSecurity instance and one loaded rule set, shared by every transaction of the process."""

    def __init__(self, directives: str, library: str | None = None) -> None:
        self._lib = _bind(ctypes.CDLL(library or find_library()))
        self._free = ctypes.CDLL(None).free
        self._free.argtypes = [ctypes.c_void_p]
        self._msc = self._lib.msc_init()
        self._lib.msc_set_connector_info(self._msc, b"envoy-waf ext_proc (libmodsecurity via ctypes)")
        self._logs: dict[int, list[bytes]] = {}
        self._log_cb = _LOG_CB(self._on_log)  # keep a reference: the library holds the pointer
        self._lib.msc_set_log_cb(self._msc, self._log_cb)
        self._rules = self._lib.msc_create_rules_set()
        error = ctypes.c_char_p()
        if self._lib.msc_rules_add(self._rules, directives.encode(), ctypes.byref(error)) < 0:
            raise EngineError(f"rules did not load: {(error.value or b'').decode(errors='replace')}")
        self._next = 0

    def _on_log(self, data: int | None, message: int | None) -> None:
        if data is not None and message is not None and data in self._logs:
            self._logs[data].append(ctypes.string_at(message))

    def close(self) -> None:
        self._lib.msc_rules_cleanup(self._rules)
        self._lib.msc_cleanup(self._msc)

    def transaction(
        self,
        *,
        client: tuple[str, int] = ("0.0.0.0", 0),
        server: tuple[str, int] = ("0.0.0.0", 0),
        request_id: str = "",
    ) -> Transaction:
        """A new transaction; close() it (phase 5 and cleanup) once the exchange is over or abandoned."""
        self._next += 1
        key = self._next
        self._logs[key] = []
        tx = self._lib.msc_new_transaction_with_id(self._msc, self._rules, request_id.encode() or None, key)
        self._lib.msc_process_connection(tx, client[0].encode(), client[1], server[0].encode(), server[1])
        return Transaction(self, tx, key)

    def evaluate(
        self,
        *,
        method: str,
        uri: str,
        http_version: str = "1.1",
        headers: list[tuple[bytes, bytes]],
        body: bytes | None = None,
        client: tuple[str, int] = ("0.0.0.0", 0),
        server: tuple[str, int] = ("0.0.0.0", 0),
        request_id: str = "",
    ) -> Verdict:
        """The request alone, in one transaction: phases 1 and 2, then logging."""
        tx = self.transaction(client=client, server=server, request_id=request_id)
        try:
            return tx.request(method=method, uri=uri, http_version=http_version, headers=headers, body=body)
        finally:
            tx.close()

    def _intervention(self, tx: int) -> Verdict:
        it = _Intervention(status=200)
        if self._lib.msc_intervention(tx, ctypes.byref(it)) and it.disruptive:
            verdict = Verdict(blocked=True, status=it.status or 403)
        else:
            verdict = Verdict()
        for pointer in (it.url, it.log):  # malloc'd by the library
            if pointer:
                self._free(pointer)
        return verdict


class Transaction:
    """One request (and, when inspected, its response) in libmodsecurity. Each call returns the verdict of
    the phases it ran, with the rules that matched in them; `log_lines` keeps every line logged so far."""

    def __init__(self, engine: Engine, tx: int, key: int) -> None:
        self._engine = engine
        self._lib = engine._lib
        self._tx: int | None = tx
        self._key = key
        self._seen = 0  # log lines already reported in a verdict
        self.log_lines: list[bytes] = []

    def request(
        self,
        *,
        method: str,
        uri: str,
        http_version: str = "1.1",
        headers: list[tuple[bytes, bytes]],
        body: bytes | None = None,
    ) -> Verdict:
        """Run phases 1 and 2 (phase 2 always: CRS blocks on the anomaly score there, even for GETs)."""
        lib, tx = self._lib, self._live()
        lib.msc_process_uri(tx, uri.encode(errors="surrogateescape"), method.encode(), http_version.encode())
        for name, value in headers:
            lib.msc_add_n_request_header(tx, name, len(name), value, len(value))
        lib.msc_process_request_headers(tx)
        verdict = self._engine._intervention(tx)
        if not verdict.blocked:
            if body:
                lib.msc_append_request_body(tx, body, len(body))
            lib.msc_process_request_body(tx)
            verdict = self._engine._intervention(tx)
        return self._with_matches(verdict)

    def response(
        self, *, status: int, headers: list[tuple[bytes, bytes]], body: bytes | None = None, protocol: str = "1.1"
    ) -> Verdict:
        """Run phases 3 (response headers) and 4 (response body, an empty one when there is none): the CRS
        response rules (RESPONSE-95x) and its outbound anomaly evaluation (959100) live there."""
        lib, tx = self._lib, self._live()
        for name, value in headers:
            lib.msc_add_n_response_header(tx, name, len(name), value, len(value))
        lib.msc_process_response_headers(tx, status, f"HTTP {protocol}".encode())
        verdict = self._engine._intervention(tx)
        if not verdict.blocked:
            if body:
                lib.msc_append_response_body(tx, body, len(body))
            lib.msc_process_response_body(tx)
            verdict = self._engine._intervention(tx)
        return self._with_matches(verdict)

    def close(self) -> None:
        """Phase 5 (logging) and free the transaction; safe to call twice."""
        if self._tx is None:
            return
        tx, self._tx = self._tx, None
        try:
            self._lib.msc_process_logging(tx)
        finally:
            self._lib.msc_transaction_cleanup(tx)
            self.log_lines += self._engine._logs.pop(self._key)[self._seen :]

    def _live(self) -> int:
        if self._tx is None:
            raise EngineError("transaction already closed")
        return self._tx

    def _with_matches(self, verdict: Verdict) -> Verdict:
        logs = self._engine._logs[self._key]
        new, self._seen = logs[self._seen :], len(logs)
        self.log_lines += new
        verdict.rule_ids = sorted({int(m) for line in new for m in _ID.findall(line)})
        verdict.messages = [m.decode(errors="replace") for line in new for m in _MSG.findall(line)]
        return verdict
