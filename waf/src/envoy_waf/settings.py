"""WAF settings (from a mounted YAML file) and the SecLang directives they produce."""

from __future__ import annotations

import glob
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from . import cpus
from .xmlguard import XML_CONTENT_TYPE

CRS_VERSION = "4.28.0"
# CRS's own default is GET HEAD POST OPTIONS; a WAF in front of REST APIs passes their verbs too.
REST_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
# CRS's default tx.allowed_request_content_type (rule 900220 in crs-setup.conf.example).
CRS_CONTENT_TYPES = (
    "application/x-www-form-urlencoded",
    "multipart/form-data",
    "text/xml",
    "application/xml",
    "application/soap+xml",
    "application/json",
)
# An HTTP method as CRS compares it (case-sensitive, space-separated list): upper-case letters and '-'.
METHOD = re.compile(r"[A-Z][A-Z-]{0,31}")
# A media type without parameters, lower case (CRS lowercases the request's before comparing).
MEDIA_TYPE = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*")
# Each worker holds its own compiled rules (~100 MiB); far more than a node's CPUs only costs memory.
MAX_WORKERS = 64
_TUPLES = ("exclude_rule_ids", "exclude_rule_tags", "allowed_methods", "allowed_request_content_types")


@dataclass(frozen=True)
class Settings:
    crs_dir: str
    mode: str = "block"  # block | detect (DetectionOnly: log, never block)
    paranoia_level: int = 1
    inbound_anomaly_threshold: int = 5
    allowed_methods: tuple[str, ...] = REST_METHODS
    allowed_request_content_types: tuple[str, ...] = CRS_CONTENT_TYPES
    validate_utf8: bool = True  # CRS 920250: invalid UTF-8 in the path, argument names and values
    exclude_rule_ids: tuple[int, ...] = ()
    exclude_rule_tags: tuple[str, ...] = ()
    extra_directives: str = ""
    # Before the CRS rules, after this file's CRS setup: where crs-setup.conf's SecActions go (tx variables
    # the CRS reads in phase 1 take effect only there; the corpus harness uses it). Not a block setting.
    setup_directives: str = ""
    body_limit: int = 131072  # bytes inspected
    body_limit_action: str = "reject"  # reject (413) | partial (inspect the first body_limit bytes)
    inspect_response: bool = False  # CRS response rules (RESPONSE-95x data leakage) on headers and body
    response_body_limit: int = 65536  # response body bytes inspected; the rest passes uninspected
    block_status: int = 403
    listen: str = "0.0.0.0:9002"
    metrics_port: int = 9090
    workers: int | None = None  # processes sharing `listen`; None: the CPUs the container may use (cpus.py)

    @classmethod
    def load(cls, path: str | Path) -> Settings:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected a mapping")
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"{path}: unknown settings {unknown}; known: {sorted(known)}")
        for key in _TUPLES:
            if key in data:
                data[key] = tuple(data[key])
        settings = cls(**data)
        settings.check()
        return settings

    def worker_count(self) -> int:
        """`workers`, or by default one per CPU the container may use."""
        return self.workers if self.workers is not None else cpus.available()

    def check(self) -> None:
        if self.mode not in ("block", "detect"):
            raise ValueError(f"mode must be block or detect, not {self.mode!r}")
        if self.paranoia_level not in (1, 2, 3, 4):
            raise ValueError("paranoia_level must be 1 to 4")
        if not self.allowed_methods:
            raise ValueError("allowed_methods must name at least one method")
        for method in self.allowed_methods:
            if not isinstance(method, str) or not METHOD.fullmatch(method):
                raise ValueError(f"allowed_methods: {method!r} is not an upper-case HTTP method such as PUT")
        if not self.allowed_request_content_types:
            raise ValueError("allowed_request_content_types must name at least one media type")
        for media in self.allowed_request_content_types:
            if not isinstance(media, str) or not MEDIA_TYPE.fullmatch(media):
                raise ValueError(
                    f"allowed_request_content_types: {media!r} is not a lower-case media type such as "
                    "application/json (no parameters)"
                )
        if not isinstance(self.validate_utf8, bool):
            raise ValueError(f"validate_utf8 must be true or false, not {self.validate_utf8!r}")
        if self.body_limit_action not in ("reject", "partial"):
            raise ValueError("body_limit_action must be reject or partial")
        if not isinstance(self.inspect_response, bool):
            raise ValueError(f"inspect_response must be true or false, not {self.inspect_response!r}")
        if (
            isinstance(self.response_body_limit, bool)
            or not isinstance(self.response_body_limit, int)
            or self.response_body_limit < 1
        ):
            raise ValueError(f"response_body_limit must be a number of bytes above 0, not {self.response_body_limit!r}")
        if self.workers is not None and (
            isinstance(self.workers, bool) or not isinstance(self.workers, int) or not 1 <= self.workers <= MAX_WORKERS
        ):
            raise ValueError(f"workers must be an integer from 1 to {MAX_WORKERS}, not {self.workers!r}")
        if not (Path(self.crs_dir) / "rules" / "REQUEST-901-INITIALIZATION.conf").is_file():
            raise ValueError(f"crs_dir {self.crs_dir}: no CRS rules/ there")


def directives(settings: Settings) -> str:
    """The whole configuration: engine settings, a CRS setup, the CRS request rules, exclusions."""
    crs = Path(settings.crs_dir)
    engine = "On" if settings.mode == "block" else "DetectionOnly"
    methods = " ".join(settings.allowed_methods)
    content_types = " ".join(f"|{media}|" for media in settings.allowed_request_content_types)
    lines = [
        f"SecRuleEngine {engine}",
        "SecRequestBodyAccess On",
        f"SecRequestBodyLimit {settings.body_limit}",
        f"SecRequestBodyNoFilesLimit {settings.body_limit}",
        # The server trims bodies to body_limit (and answers 413 itself when the action is reject).
        "SecRequestBodyLimitAction ProcessPartial",
        "SecRequestBodyJsonDepthLimit 512",
        "SecArgumentsLimit 1000",
        # Never fetch external entities (the default; said here so no include can turn it on unseen).
        "SecXmlExternalEntity Off",
        # XML and JSON bodies are parsed (as modsecurity.conf-recommended does), so the CRS sees their
        # values; the server refuses XML with a DTD before this (xmlguard). No nesting limit setting
        # exists for XML: libxml2 stops at depth 256, which fails the parse.
        f'SecRule REQUEST_HEADERS:Content-Type "{XML_CONTENT_TYPE}" '
        '"id:200000,phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=XML"',
        'SecRule REQUEST_HEADERS:Content-Type "^application/json" '
        '"id:200001,phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=JSON"',
        # A body that does not parse is refused; an empty one (a DELETE with a Content-Type) is not a body.
        # logdata: the parser's reason in the log (as modsecurity.conf-recommended does), never the body.
        'SecRule REQBODY_ERROR "!@eq 0" "id:200002,phase:2,t:none,log,deny,status:400,'
        "msg:'Failed to parse request body.',logdata:'%{reqbody_error_msg}',chain\"",
        'SecRule REQUEST_BODY_LENGTH "@gt 0" "t:none"',
        *_response_directives(settings),
        "SecAuditEngine Off",
        # CRS setup (what crs-setup.conf.example does, with the settings filled in).
        'SecDefaultAction "phase:1,log,auditlog,pass"',
        'SecDefaultAction "phase:2,log,auditlog,pass"',
        f'SecAction "id:900000,phase:1,pass,t:none,nolog,setvar:tx.blocking_paranoia_level={settings.paranoia_level}"',
        'SecAction "id:900110,phase:1,pass,t:none,nolog,'
        f"setvar:tx.inbound_anomaly_score_threshold={settings.inbound_anomaly_threshold},"
        'setvar:tx.outbound_anomaly_score_threshold=4"',
        f"SecAction \"id:900200,phase:1,pass,t:none,nolog,setvar:'tx.allowed_methods={methods}'\"",
        f"SecAction \"id:900220,phase:1,pass,t:none,nolog,setvar:'tx.allowed_request_content_type={content_types}'\"",
        'SecAction "id:900950,phase:1,pass,t:none,nolog,'
        f'setvar:tx.crs_validate_utf8_encoding={int(settings.validate_utf8)}"',
        f"SecAction \"id:900990,phase:1,pass,t:none,nolog,tag:'OWASP_CRS',ver:'OWASP_CRS/{CRS_VERSION}',"
        f'setvar:tx.crs_setup_version={CRS_VERSION.replace(".", "")}"',
    ]
    if settings.setup_directives:
        lines.append(settings.setup_directives)
    for rule_file in sorted(glob.glob(str(crs / "rules" / "REQUEST-*.conf"))):
        lines.append(f"Include {rule_file}")
    if settings.inspect_response:
        for rule_file in sorted(glob.glob(str(crs / "rules" / "RESPONSE-*.conf"))):
            lines.append(f"Include {rule_file}")
    lines += [f"SecRuleRemoveById {rule_id}" for rule_id in settings.exclude_rule_ids]
    lines += [f'SecRuleRemoveByTag "{tag}"' for tag in settings.exclude_rule_tags]
    if settings.extra_directives:
        lines.append(settings.extra_directives)
    return "\n".join(lines) + "\n"


# Response media types whose bodies the engine reads: modsecurity.conf-recommended's text types plus JSON
# (API error responses leak SQL and stack traces there too; the CRS test setup reads the same four).
RESPONSE_MEDIA_TYPES = ("text/plain", "text/html", "text/xml", "application/json")


def _response_directives(settings: Settings) -> list[str]:
    if not settings.inspect_response:
        return ["SecResponseBodyAccess Off"]
    return [
        "SecResponseBodyAccess On",
        f"SecResponseBodyMimeType {' '.join(RESPONSE_MEDIA_TYPES)}",
        f"SecResponseBodyLimit {settings.response_body_limit}",
        # The server hands over at most response_body_limit bytes; the engine must never refuse a response.
        "SecResponseBodyLimitAction ProcessPartial",
        'SecDefaultAction "phase:3,log,auditlog,pass"',
        'SecDefaultAction "phase:4,log,auditlog,pass"',
    ]
