"""Registry credentials in the config (chart.auth, waf.image_build.auth): a pair or nothing. Their values are
never echoed (config._is_secret), never part of the plan, and reach a login only through a no_log task."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .model import Problem


def pair_problems(path: str, auth: Mapping[str, Any]) -> list[Problem]:
    """Both username and password, or neither."""
    if bool(auth["username"]) != bool(auth["password"]):
        return [Problem(path, "set both username and password, or neither")]
    return []
