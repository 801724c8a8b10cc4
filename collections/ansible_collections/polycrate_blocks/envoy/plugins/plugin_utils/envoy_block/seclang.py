"""A structural check of waf.extra_directives in Python, for every load (validate, plan, render): what makes
the WAF refuse to start that can be seen without its compiler. The WAF's own compiler (`envoy-waf --check`,
waf_check.py) judges the directives at render when the binary is at hand; this check is the floor when it is
not, and it is deliberately conservative: it refuses what the WAF surely refuses, and leaves the rest
(operator arguments, transformation names, RE2's own syntax) to the compiler.

What it refuses: a directive the WAF does not know (Coraza v3.8's directive map) or does not support; an
Include (the pod has only the CRS; a host file would never be there) and remote rules (fetched at start);
operators reading files (@pmFromFile, @ipMatchFromFile); a SecRule or SecAction without an id, an id used
twice, one of the CRS's (900000-999999 and the CRS rules' 9xxxxx) or one of the block's own (200000-200099);
unclosed quotes; an @rx regex that cannot be compiled (unbalanced brackets, look-behind and back-references,
which RE2 lacks); a setvar without `=` (ModSecurity's `setvar:!tx.x` deletes a variable): Coraza v3.8.1 loads
it and both checks pass, but its setvar expands the missing value (internal/actions/setvar.go, Evaluate), a nil
macro, so every request that reaches the rule fails with 500, the WAF failing closed for all of that traffic.
"""

from __future__ import annotations

import re

# Coraza v3.8.1 internal/seclang/directivesmap.gen.go, lower-cased: the directives it loads.
DIRECTIVES = frozenset(
    [
        "seccomponentsignature",
        "secmarker",
        "secaction",
        "secrule",
        "secresponsebodyaccess",
        "secrequestbodylimit",
        "secrequestbodyaccess",
        "secrequestbodyjsondepthlimit",
        "secresponsebodyjsondepthlimit",
        "secruleengine",
        "secwebappid",
        "secserversignature",
        "secruleremovebytag",
        "secruleremovebymsg",
        "secruleremovebyid",
        "secresponsebodymimetypesclear",
        "secresponsebodymimetype",
        "secresponsebodylimitaction",
        "secresponsebodylimit",
        "secrequestbodylimitaction",
        "secrequestbodyinmemorylimit",
        "secconnwritestatelimit",
        "secsensorid",
        "secconnreadstatelimit",
        "secpcrematchlimitrecursion",
        "secpcrematchlimit",
        "sechttpblkey",
        "secgsblookupdb",
        "sechashmethodpm",
        "sechashmethodrx",
        "sechashparam",
        "sechashkey",
        "sechashengine",
        "secdefaultaction",
        "secconnengine",
        "seccollectiontimeout",
        "secauditlog",
        "secauditlogtype",
        "secauditlogformat",
        "secauditlogstoragedir",
        "secauditlogdirmode",
        "secauditlogfilemode",
        "secauditlogrelevantstatus",
        "secauditlogparts",
        "secauditengine",
        "secdatadir",
        "secuploadkeepfiles",
        "secuploadfilemode",
        "secuploadfilelimit",
        "secuploaddir",
        "secrequestbodynofileslimit",
        "secdebuglog",
        "secdebugloglevel",
        "secruleupdatetargetbyid",
        "secruleupdateactionbyid",
        "secruleupdatetargetbytag",
        "secignorerulecompilationerrors",
        "secdataset",
        "secargumentslimit",
        "secrxprefilter",
    ]
)
REFUSED = {
    "include": "an Include reads a file of the host that renders; the WAF pod holds only the CRS",
    "includeoptional": "an Include reads a file of the host that renders; the WAF pod holds only the CRS",
    "secremoterules": "remote rules are fetched when the WAF starts; write the rules out here",
    "secremoterulesfailaction": "remote rules are fetched when the WAF starts; write the rules out here",
}
FILE_OPERATORS = re.compile(r"@(pmFromFile|pmf|ipMatchFromFile|ipMatchF)\b", re.I)
BLOCK_IDS = range(200000, 200100)  # the block's own rules (waf/internal/settings)
CRS_IDS = range(900000, 1000000)  # the CRS's setup and rules; CRS rules are 9xxxxx too
_ID = re.compile(r"(?:^|[\s,\"'])id\s*:\s*'?(\d+)", re.I)
_DIRECTIVE = re.compile(r"^\s*([A-Za-z]+)")
# A setvar action, quoted or not: its argument up to the next action.
_SETVAR = re.compile(r"(?:^|[\s,\"])setvar\s*:\s*('[^']*'|[^,\"\s]*)", re.I)
_RX = re.compile(r'^\s*\S+\s+(\S+|"(?:[^"\\]|\\.)*")\s+"(!?@rx\s+)?((?:[^"\\]|\\.)*)"', re.S)


def _statements(text: str) -> list[tuple[int, str]]:
    """(line number, statement) with backslash continuations joined; comments and blank lines dropped."""
    out: list[tuple[int, str]] = []
    buffer, start = "", 0
    for number, line in enumerate(text.splitlines(), 1):
        if not buffer:
            start = number
            if not line.strip() or line.lstrip().startswith("#"):
                continue
        if line.endswith("\\"):
            buffer += line[:-1]
            continue
        out.append((start, buffer + line))
        buffer = ""
    if buffer:
        out.append((start, buffer))
    return out


def _quotes_closed(statement: str) -> bool:
    inside, escaped = False, False
    for char in statement:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            inside = not inside
    return not inside


def _regex_problem(pattern: str) -> str | None:
    if re.search(r"\(\?<[=!]", pattern):
        return "uses look-behind, which the WAF's regex engine (RE2) lacks"
    if re.search(r"(?<!\\)\\[1-9]", pattern):
        return "uses a back-reference, which the WAF's regex engine (RE2) lacks"
    try:
        re.compile(pattern.replace('\\"', '"'))
    except re.error as exc:
        if "bad escape" in str(exc):
            return None  # an RE2 escape Python lacks (\pL, \z): the compiler decides
        return f"does not compile ({exc})"
    except (RecursionError, OverflowError):
        return "does not compile (too deeply nested)"
    return None


def problems(text: str) -> list[str]:
    """What is wrong with `text` (waf.extra_directives), one message per finding, each naming its line."""
    found: list[str] = []
    seen: dict[int, int] = {}
    chained = False  # the statement continues a rule chain: no id of its own
    for number, statement in _statements(text):
        at = f"line {number}"
        match = _DIRECTIVE.match(statement)
        name = match.group(1).lower() if match else ""
        if name in REFUSED:
            found.append(f"{at}: {match.group(1) if match else name} is not allowed: {REFUSED[name]}")
            continue
        if name not in DIRECTIVES:
            word = statement.split()[0] if statement.split() else ""
            # Only a word that looks like a directive is repeated: a line may hold anything (a URL, a token).
            shown = repr(word) if re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]{0,39}", word) else "its first word"
            found.append(f"{at}: {shown} is not a directive the WAF knows (SecRule, SecAction, SecRuleRemoveById...)")
            continue
        if not _quotes_closed(statement):
            found.append(f"{at}: a double quote is not closed")
            continue
        if FILE_OPERATORS.search(statement):
            found.append(f"{at}: operators reading files (@pmFromFile, @ipMatchFromFile) find no file in the WAF pod")
        if name in ("secrule", "secaction"):
            ids = _ID.findall(statement)
            follows, chained = chained, bool(re.search(r"[\s,\"']chain\b", statement))
            if not ids and not follows:
                found.append(f"{at}: {match.group(1) if match else name} needs an id: action (id:10001)")
            for text_id in ids[:1]:
                rule_id = int(text_id)
                if rule_id in BLOCK_IDS or rule_id in CRS_IDS:
                    found.append(
                        f"{at}: id {rule_id} belongs to the CRS (900000-999999) or the block (200000-200099); "
                        "use another, e.g. 10000-199999"
                    )
                elif rule_id in seen:
                    found.append(f"{at}: id {rule_id} is used twice (also line {seen[rule_id]})")
                else:
                    seen[rule_id] = number
        for setvar in _SETVAR.finditer(statement):
            argument = setvar.group(1).strip("'")
            if "=" not in argument:
                variable = argument.lstrip("!") or "tx.name"
                found.append(
                    f"{at}: setvar:{argument} has no value: the WAF (Coraza v3.8.1) fails every request that reaches "
                    f"it with 500 (deleting a variable with ! too); set a value instead, e.g. setvar:{variable}=0"
                )
        if name == "secrule":
            rx = _RX.match(statement)
            if rx and (rx.group(2) or not rx.group(3).lstrip("!").startswith("@")):
                issue = _regex_problem(rx.group(3))
                if issue:
                    found.append(f"{at}: the regex {rx.group(3)[:60]!r} {issue}")
    return found
