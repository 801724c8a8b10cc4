"""WAF settings (from a mounted YAML file) and the SecLang directives they produce."""

from __future__ import annotations

import glob
from dataclasses import dataclass
from pathlib import Path

import yaml

CRS_VERSION = "4.28.0"


@dataclass(frozen=True)
class Settings:
    crs_dir: str
    mode: str = "block"  # block | detect (DetectionOnly: log, never block)
    paranoia_level: int = 1
    inbound_anomaly_threshold: int = 5
    exclude_rule_ids: tuple[int, ...] = ()
    exclude_rule_tags: tuple[str, ...] = ()
    extra_directives: str = ""
    body_limit: int = 131072  # bytes inspected
    body_limit_action: str = "reject"  # reject (413) | partial (inspect the first body_limit bytes)
    block_status: int = 403
    listen: str = "0.0.0.0:9002"
    metrics_port: int = 9090

    @classmethod
    def load(cls, path: str | Path) -> Settings:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected a mapping")
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"{path}: unknown settings {unknown}; known: {sorted(known)}")
        for key in ("exclude_rule_ids", "exclude_rule_tags"):
            if key in data:
                data[key] = tuple(data[key])
        settings = cls(**data)
        settings.check()
        return settings

    def check(self) -> None:
        if self.mode not in ("block", "detect"):
            raise ValueError(f"mode must be block or detect, not {self.mode!r}")
        if self.paranoia_level not in (1, 2, 3, 4):
            raise ValueError("paranoia_level must be 1 to 4")
        if self.body_limit_action not in ("reject", "partial"):
            raise ValueError("body_limit_action must be reject or partial")
        if not (Path(self.crs_dir) / "rules" / "REQUEST-901-INITIALIZATION.conf").is_file():
            raise ValueError(f"crs_dir {self.crs_dir}: no CRS rules/ there")


def directives(settings: Settings) -> str:
    """The whole configuration: engine settings, a CRS setup, the CRS request rules, exclusions."""
    crs = Path(settings.crs_dir)
    engine = "On" if settings.mode == "block" else "DetectionOnly"
    lines = [
        f"SecRuleEngine {engine}",
        "SecRequestBodyAccess On",
        f"SecRequestBodyLimit {settings.body_limit}",
        f"SecRequestBodyNoFilesLimit {settings.body_limit}",
        # The server trims bodies to body_limit (and answers 413 itself when the action is reject).
        "SecRequestBodyLimitAction ProcessPartial",
        "SecRequestBodyJsonDepthLimit 512",
        "SecArgumentsLimit 1000",
        'SecRule REQUEST_HEADERS:Content-Type "^(?:application(?:/soap\\+|/)|text/)xml" '
        '"id:200000,phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=XML"',
        'SecRule REQUEST_HEADERS:Content-Type "^application/json" '
        '"id:200001,phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=JSON"',
        'SecRule REQBODY_ERROR "!@eq 0" "id:200002,phase:2,t:none,log,deny,status:400,'
        "msg:'Failed to parse request body.'\"",
        "SecResponseBodyAccess Off",
        "SecAuditEngine Off",
        # CRS setup (what crs-setup.conf.example does, with the settings filled in).
        'SecDefaultAction "phase:1,log,auditlog,pass"',
        'SecDefaultAction "phase:2,log,auditlog,pass"',
        f'SecAction "id:900000,phase:1,pass,t:none,nolog,setvar:tx.blocking_paranoia_level={settings.paranoia_level}"',
        'SecAction "id:900110,phase:1,pass,t:none,nolog,'
        f"setvar:tx.inbound_anomaly_score_threshold={settings.inbound_anomaly_threshold},"
        'setvar:tx.outbound_anomaly_score_threshold=4"',
        f"SecAction \"id:900990,phase:1,pass,t:none,nolog,tag:'OWASP_CRS',ver:'OWASP_CRS/{CRS_VERSION}',"
        f'setvar:tx.crs_setup_version={CRS_VERSION.replace(".", "")}"',
    ]
    for rule_file in sorted(glob.glob(str(crs / "rules" / "REQUEST-*.conf"))):
        lines.append(f"Include {rule_file}")
    lines += [f"SecRuleRemoveById {rule_id}" for rule_id in settings.exclude_rule_ids]
    lines += [f'SecRuleRemoveByTag "{tag}"' for tag in settings.exclude_rule_tags]
    if settings.extra_directives:
        lines.append(settings.extra_directives)
    return "\n".join(lines) + "\n"
