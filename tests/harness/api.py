"""A small REST client for the harness and the tests (the load balancer loop, the node's setup): plain
requests with the admin client certificate, so every call is exactly the HTTP the real components would send."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import requests


class ApiError(RuntimeError):
    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"HTTP {status}: {body[:500]}")
        self.status = status


class Api:
    def __init__(self, url: str, ca: Path, cert: Path, key: Path) -> None:
        self.url = url
        self.session = requests.Session()
        self.session.cert = (str(cert), str(key))
        # Per request: requests lets REQUESTS_CA_BUNDLE override a session-level `verify`.
        self.ca = str(ca)

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        resp = self.session.request(method, self.url + path, timeout=30, verify=self.ca, **kwargs)
        if resp.status_code >= 400:
            raise ApiError(resp.status_code, resp.text)
        return resp.json() if resp.content else None

    def get(self, path: str, **params: str) -> Any:
        return self._call("GET", path, params=params or None)

    def items(self, path: str, **params: str) -> list[dict[str, Any]]:
        return list(self.get(path, **params).get("items") or [])

    def post(self, path: str, body: Any) -> Any:
        return self._call("POST", path, json=body)

    def merge_patch(self, path: str, body: Any) -> Any:
        return self._call("PATCH", path, json=body, headers={"Content-Type": "application/merge-patch+json"})

    def delete(self, path: str, body: Any | None = None) -> Any:
        return self._call("DELETE", path, json=body)
