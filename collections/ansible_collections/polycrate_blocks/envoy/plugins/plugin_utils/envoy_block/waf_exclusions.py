"""The block's curated CRS exclusions for modern traffic (issue 39), rendered into the WAF's settings file
when waf.curated_exclusions is on (the default) and the paranoia level is 2 or more, so the ConfigMap the
block renders is exactly what the WAF runs and what `make waf-efficacy` measures. Level 1 gets none: it stays
the CRS as released (`make crs-corpus` and every PL1 verdict unchanged).

Each exclusion names its rules and the arguments (or the request) it takes them off, never a whole rule, and
says why. Two rounds chose them (docs/waf.md): the first listed the rules that blocked
waf/corpora/benign-modern.jsonl's tuning half on each kind of field; the second, with both halves as tuning
data, widened each class to its principle (a field that holds code by design loses the injection families
whole; the names frameworks give such fields), and was frozen before benign-fresh.jsonl, the held-out
benign set, was written and measured. A third round (2026-12-07) read benign-fresh's and benign-third's false
positives and generalised to the principle behind each (code fields, OAuth's URL parameters, address lines,
JSON key paths, framework view state, Terraform references guarded by value shape), none to one corpus's
field names alone, and was frozen before benign-fourth.jsonl, the held-out set since, was measured once.
`make waf-efficacy` prints every held-out attack a profile lets
through that its plain level blocks (docs/waf.md lists them: plain-text search queries, and at level 3 what
only 920272 caught). What an exclusion costs is plain from its target: an attack placed in an excluded
argument is judged without those rules (docs/waf.md).

Two kinds: `target` exclusions are configure-time (SecRuleUpdateTargetById, after the CRS: the rule never
reads that argument); `when` exclusions are runtime (a rule of the block's own, before the CRS, that takes
the rules off the target for matching requests only: ctl:ruleRemoveTargetById). A runtime condition on an
argument's value holds for every value of it (`every`: a guard rule flags any value that does not match),
since a client can send an argument twice. A target that names a JSON body's fields (json.*: JSON_TARGET) is
runtime whatever its kind, and holds only for a body parsed as JSON beside no query string argument named
json.* (JSON_BODY, JSON_NAMED_QUERY): a query string or a form can send an argument named json.body too.
Rule ids 200050-200099 are the block's (seclang.BLOCK_IDS keeps them out of users' extra_directives).
PL3_EXCLUSIONS take level 3's own rules off the same kinds of arguments and are rendered from level 3 on, so
level 2's settings stay those it was measured on.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass

FIRST_LEVEL = 2
FIRST_ID = 200050

# One regex per group: Coraza reads a /regex/ target whole, '|' included (checked by the efficacy test).
# Names are matched without regard to case (`displayName`, `avatarUrl`: JavaScript APIs write camelCase).
#
# Prose: JSON body fields that carry what people write (markdown with code, SQL in a ticket, a CMS's HTML),
# named as public APIs name them (GitHub, GitLab, Jira, Linear, Zendesk, WordPress, Drupal, Ghost, Strapi,
# Discord, GraphQL's document): body, description, message, bio, about, subject, title, summary, excerpt,
# caption, note(s), comment_body, content, html, markdown, signature, query, at any depth, alone or with one
# format key below it (`content.raw`, `body.value`, `description.html`); the text of a rich-text document
# (ProseMirror, Jira's ADF, Contentful: a `text` or `value` inside a `content` array); Slack's event.text;
# and a form's `content`. Only JSON body fields, and the one form name the tuning corpus had (`content`): a
# query string's `message` or `title` is where a reflected attack is sent, and keeps every rule.
_PROSE_NAMES = (
    "body|description|message|bio|about|subject|title|summary|excerpt|caption|notes?|comment_body|content|html"
    "|markdown|signature|query"
)
_FORMAT_KEYS = "value|raw|rendered|html|markdown|plain|text"
# Third round (2026-12-07): a snake_case prefix names the same kind of field (`formatted_body`, Matrix's HTML;
# `html_body`, `text_body`), and a list of such texts ends in an index (`notes.0`).
PROSE = (
    rf"ARGS:/(?i)^(?:json\.(?:.*\.)?(?:[a-z0-9]+_)?(?:{_PROSE_NAMES})(?:\.[0-9]+)?(?:\.(?:{_FORMAT_KEYS}))?"
    r"|json\.(?:.*\.)?content\.[0-9]+\.(?:text|value)|json\.event\.text)$/",
    r"ARGS:/(?i)^content$/",
)
# Code: JSON body fields that hold a command, an expression or a regular expression by the definition of the
# API that takes them, not text a person might write: a CI step's `command(s)` and `script(s)` (Buildkite,
# GitLab, CircleCI), a Prometheus or Alertmanager rule's `expr`, a JSON Schema or OpenAPI `pattern` (a
# regex; also `regex`/`regexp` as configuration APIs name it), at any depth, alone or as a list's item.
# Never a form's or query string's argument (where a reflected attack is sent).
CODE = (r"ARGS:/(?i)^json\.(?:.*\.)?(?:commands?|scripts?|expr|pattern|regexp?)(?:\.[0-9]+)?$/",)
# Personal, place and organisation names, as JSON or form fields (a form's alone or nested as Rails and PHP
# name them, `user[first_name]`): apostrophes, hyphens and commas (O'Brien, "Lovelace, PhD", L'Aquila,
# Côte-d'Or, Macy's).
# A JSON body's field (json.a.b.) and a form's (user[, user[address][), each a target of its own: a JSON path
# exclusion holds only for a body parsed as JSON (JSON_BODY).
_JSON_NESTING = r"json\.(?:.*\.)?"
_FORM_NESTING = r"(?:[a-z0-9_]+\[(?:[a-z0-9_]*\]\[)*)?"
# Third round: an address line under the names APIs give it (`line1`, `address1`, `streetAddress1`,
# `address_line_2`, Magento's `street[0]`), and the parts of a name object (SCIM's `name.formatted`,
# `name.givenName`).
_NAMES = (
    r"(?:(?:(?:first|last|given|family|middle|display|full|nick|company|org"
    r"|organi[sz]ation|legal|business|shop|store|place|street)_?)?name(?:\.[a-z_]+)?|company|organi[sz]ation"
    r"|city|town|(?:street_?)?address(?:_?(?:line_?)?[0-9])?|street(?:\]?\[[0-9])?|(?:address_?)?line_?[0-9]"
    r"|region|county|state|province|country)\]?$/"
)
NAMES = tuple(f"ARGS:/(?i)^{nesting}{_NAMES}" for nesting in (_JSON_NESTING, _FORM_NESTING))
# Secrets: passwords and passphrases, under the names sign-up and login forms give them (password_confirmation,
# confirmPassword, password1, passwd, pwd, passphrase, user[password]).
# Third round: the word in any segment of a nested name, not only the last (Symfony's
# `registration_form[plainPassword][first]`, `user[password][confirm]`).
PASSWORDS = tuple(
    rf"ARGS:/(?i)^{nesting}[a-z0-9_]*(?:passw(?:or)?d|passphrase|pwd)[a-z0-9_]*\]?(?:\[[a-z0-9_]*\])*$/"
    for nesting in (_JSON_NESTING, _FORM_NESTING)
)
# Links: JSON fields named *url, *uri, *href, *link, website or homepage (html_url, avatarUrl, redirect_uri).
URLS = (r"ARGS:/(?i)^json\.(?:.*\.)?[a-z0-9_]*(?:url|uri|href|link|website|homepage)$/",)
# OAuth 2.0 and OpenID Connect parameters that carry a URL by their specification (IANA's OAuth Parameters
# registry: RFC 6749 `redirect_uri`, OIDC RP-initiated logout's `post_logout_redirect_uri`, RFC 8693 and 8707
# `audience` and `resource`), in the query string or a form, as authorization and token endpoints take them.
# The authorization server compares them with the client's registered URIs and redirects the browser there;
# it never fetches or includes them. Native apps redirect to a loopback address by RFC 8252
# (`http://127.0.0.1:8250/callback`).
OAUTH_URIS = tuple(f"ARGS:{n}" for n in ("redirect_uri", "post_logout_redirect_uri", "audience", "resource"))
# `scope` (RFC 6749), whose values are URLs at some providers (`https://www.googleapis.com/auth/drive`), and
# the token exchange's type URNs (RFC 8693: `urn:ietf:params:oauth:token-type:access_token`), compared by the
# authorization server with the values it knows.
OAUTH_SCOPES = ("ARGS:scope",)
OAUTH_URNS = tuple(
    f"ARGS:{n}" for n in ("grant_type", "subject_token_type", "actor_token_type", "requested_token_type")
)
# A JSON key path made only of identifiers (`json.pipeline.steps.0.command`): 932236 (and 932238 and 932350
# at level 3) read a key that is, or starts with, a command's name (`pip...`, `wait`, `Who`) as that command;
# a key without a space or a separator cannot carry a command's arguments, and it is the API's own
# vocabulary. Not a form's or query string's names: the CRS's own tests flag a parameter named `id` (932350).
JSON_KEY_PATHS = (r"ARGS_NAMES:/^json(?:\.[A-Za-z0-9_-]+)+$/",)
# Terraform's JSON syntax (and HCL values sent as JSON) writes references as `${var.env}`,
# `${aws_s3_bucket.logs.arn}`: a name with a dot in it, which no shell expands (bash: bad substitution), so
# 932130 (shell expansion) and 933135 (PHP's `${...}`) read syntax they do not run. A JSON value passes this
# only when each `$` in it starts such a reference or comes before a letter, digit or `_./:-` (`$5`, `$HOME`),
# each `<` and `>` comes before one of those, `=`, or spaces and a letter or digit (`price < 100`), and it
# has no bracket outside a reference and none of the characters 932130's cmdLine transformation deletes or
# turns into a space (`\ " ' ^ , ;`) next to them: so no `$(`, `${HOME}`, `$[`, `<(`, `>(`, `/path[...]`,
# before or after that transformation.
_TF_PLAIN = r"[^$<>\[\]]"
_TF_AFTER = r"[A-Za-z0-9_./:-]"
_TF_REF = r"\$\{[A-Za-z_][A-Za-z0-9_-]*(?:\[[0-9]+\])?(?:\.[A-Za-z0-9_*-]+(?:\[[0-9]+\])?)+\}"
TERRAFORM_VALUE = rf"^(?:{_TF_PLAIN}|\$(?:{_TF_AFTER}|$)|[<>](?:{_TF_AFTER}|=| +[A-Za-z0-9]|$)|{_TF_REF})*$"
JSON_VALUES = (r"ARGS:/^json\./",)
# ASP.NET Web Forms' view state and event validation: base64 written and MAC-checked by the framework, read
# by it alone; its postback target, a control id (`ctl00$MainContent$btnSave`).
VIEW_STATE = tuple(f"ARGS:{n}" for n in ("__VIEWSTATE", "__VIEWSTATEGENERATOR", "__EVENTVALIDATION"))
POSTBACK_TARGET = ("ARGS:__EVENTTARGET",)
GRAPHQL_IDS = (r"ARGS:/^json\.variables\.(?:.*\.)?id$/",)
CONSENT_COOKIES = tuple(
    f"REQUEST_COOKIES:{name}" for name in ("cookie_consent", "CookieConsent", "OptanonConsent", "cookieyes-consent")
)
# A search query that is plain text: letters (any script), digits, spaces and the punctuation people type
# in a search box (`C++ vs Go`, `price < 100`, `SELECT COUNT(*) slow postgres`, `ls -la explained`), but
# nothing that ends a string or starts a command, a comment or a tag: no quote or backtick, none of
# ; | & $ \ % # { } [ ], no control character, no `--`, `/*` or `//`, and a `<` only before a space, a
# digit or `=` (`price < 100`, never `<h1>`). A payload needs one of those to leave the context it is placed
# in (a shell argument, an SQL string, HTML text): `'; DROP`, `a;id|`, `<script>`, `$(id)`, `or 1=1--`. `%`
# is out too, so that nothing a rule URL-decodes again can hide one. RE2 syntax (no look-ahead), anchored:
# every character is one of the atoms.
_PLAIN_CHAR = r"\p{L}\p{M}\p{N} .,:!?()=+_@"  # also what may follow a - or a /
PLAIN_SEARCH = rf"^(?:[{_PLAIN_CHAR}*>]|[-/](?:[{_PLAIN_CHAR}]|$)|<(?:[ 0-9=]|$))*$"
# Arguments named q: the search box's query string parameter, and GraphQL's search variable; since the third
# round also the other names sites give a search box's parameter (`query`, WordPress's `s`, `search`,
# `keyword(s)`, `term`): the guard is the same, every value of every one of them must be plain text.
# GraphQL's (json.variables.q) is a JSON path: an exclusion of its own, with its own guard (JSON_BODY).
SEARCH_NAMES = ("q", "query", "s", "search", "keyword", "keywords", "term")
SEARCH_QUERY_ARGS = "|".join(f"ARGS:{n}" for n in SEARCH_NAMES)
SEARCH_QUERIES = tuple(f"ARGS:{n}" for n in SEARCH_NAMES)
GRAPHQL_SEARCH = ("ARGS:json.variables.q",)
# JSON paths: Coraza names a JSON body's fields json.a.b, but an argument's name is all an exclusion matches,
# and a query string or a form can send an argument named json.body too (`GET /?json.body=<script>` took the
# prose exclusion, and every other JSON path exclusion, until 2026-12-07). So every target that names json.*
# arguments (JSON_TARGET) is rendered as a runtime exclusion, in phase 2, that holds only when Coraza parsed the
# body as JSON (REQBODY_PROCESSOR, set by the Content-Type in phase 1: application/json and the +json types) and
# no query string argument is named json.* (case aside: names are matched without case); a form's fields are
# never json.* then (the body is JSON), and its json.* names never take a JSON exclusion (the body is a form).
JSON_BODY = ("REQBODY_PROCESSOR", "@streq JSON")
JSON_NAMED_QUERY = ("ARGS_GET_NAMES", "@rx (?i)^json\\.")
JSON_FLAG = "block_json_body"  # TX:block_json_body is 1: both hold, the JSON path exclusions apply
JSON_TARGET = re.compile(r"(?:ARGS|ARGS_NAMES):(?:json\.|/(?:\(\?i\))?\^(?:\(\?:)?json(?:\\\.|\())")
# Every argument and argument name of a JSON body (on Kubernetes API paths only: KUBERNETES_PATH).
KUBERNETES_OBJECTS = (r"ARGS:/^json\./", r"ARGS_NAMES:/^json\./")
# A Kubernetes API path (a group's resources, or core namespaces): names are [a-z0-9.-], never a dot file.
KUBERNETES_PATH = (
    r"^/(?:apis/[a-z0-9.-]+/v[0-9]+(?:(?:alpha|beta)[0-9]+)?|api/v1)(?:/namespaces(?:/[a-z0-9-]+)?)?"
    r"(?:/[a-z0-9]+(?:/[a-z0-9.-]+)?)?$"
)

# The injection rules: every rule of CRS 4.28.0's REQUEST-932 (RCE), 933 (PHP), 941 (XSS) and 942 (SQLi)
# files that reads request arguments (ARGS), by the paranoia level it runs from (levels 1 and 2; level 3).
# These rules look for code of a language in a value; a field that carries text people write (an issue body
# with a shell snippet, a ticket quoting SQL, a CMS's HTML) or a secret no one reads (a password) holds such
# code by design, so the classes below take the whole families off those fields rather than the rules one
# corpus happened to trip (tests/unit/test_waf_exclusions.py reads the CRS and checks both lists).
INJECTION_RULES = (
    932120,
    932125,
    932130,
    932140,
    932160,
    932171,
    932175,
    932200,
    932210,
    932220,
    932230,
    932231,
    932235,
    932236,
    932240,
    932250,
    932260,
    932270,
    932271,
    932280,
    932281,
    932300,
    932310,
    932320,
    932330,
    932340,
    932370,
    932371,
    932380,
    932390,
    933100,
    933120,
    933130,
    933135,
    933140,
    933150,
    933151,
    933152,
    933153,
    933160,
    933170,
    933180,
    933200,
    933210,
    941100,
    941110,
    941120,
    941130,
    941140,
    941150,
    941160,
    941170,
    941180,
    941181,
    941190,
    941200,
    941210,
    941220,
    941230,
    941240,
    941250,
    941260,
    941270,
    941280,
    941290,
    941300,
    941310,
    941320,
    941330,
    941340,
    941350,
    941360,
    941370,
    941380,
    941390,
    941400,
    942100,
    942120,
    942130,
    942131,
    942140,
    942150,
    942151,
    942160,
    942170,
    942180,
    942190,
    942200,
    942210,
    942220,
    942230,
    942240,
    942250,
    942260,
    942270,
    942280,
    942290,
    942300,
    942310,
    942320,
    942330,
    942340,
    942350,
    942360,
    942361,
    942362,
    942370,
    942380,
    942390,
    942400,
    942410,
    942430,
    942440,
    942450,
    942470,
    942480,
    942500,
    942510,
    942520,
    942521,
    942522,
    942540,
    942550,
    942560,
)
INJECTION_RULES_PL3 = (
    932190,
    932232,
    932238,
    932290,
    932301,
    932311,
    932321,
    932331,
    932350,
    933131,
    933161,
    933190,
    933211,
    942251,
    942431,
    942460,
    942490,
    942511,
    942530,
)


@dataclass(frozen=True)
class Exclusion:
    rules: tuple[int, ...]
    targets: tuple[str, ...]  # SecLang targets: ARGS:name, ARGS:/regex/, REQUEST_COOKIES:name, REQUEST_FILENAME
    reason: str  # the false positives it removes, and what it costs
    when: tuple[str, str] | None = None  # runtime: (variable, operator) a request must match
    # runtime, with `every`: each value of `when`'s variable must match, or the exclusion is not applied (a
    # second `q=` that does not match must not ride on the first one's); the rule carries the phase the
    # variable is read in (2 for a body's arguments)
    every: bool = False
    phase: int = 1
    level: int = FIRST_LEVEL  # the paranoia level from which it is rendered (its rules run from there)


# Rules of other files that matched prose fields and Kubernetes objects: 920230 (a `%` written twice), 921130
# (HTTP text in an issue), 930100, 930110 and 930120 (paths and OS file names in a snippet), 931130 (links),
# 934101 (JavaScript in a snippet).
# Third round: 921110 (an HTTP request line quoted from a log) and 934110 (an upstream such as
# `http://127.0.0.1:3000` in a pasted nginx error or configuration) on prose and on Kubernetes objects.
_PROSE_OTHERS = (920230, 921110, 921130, 930100, 930110, 930120, 931130, 934101, 934110)
_KUBERNETES_OTHERS = (921110, 921130, 930120, 931130, 934101, 934110)
# Code fields: paths and file names in a script (930100, 930110, 930120), links (931130), HTTP text (921130).
_CODE_OTHERS = (920230, 921130, 930100, 930110, 930120, 931130, 934101)
# The command-word rules: a word that is also a command's name (`wait`, `who`, `ed`), and nothing else.
_COMMAND_WORDS = (932236,)
# The rules the search exclusion takes off a plain q: those that flag words people type in a search box
# (a command's or a function's name, SQL keywords in a phrase, `<` before a digit). Not the whole injection
# families: the rules that catch an unquoted injection's probes stay on (942380 `ORDER BY 18`, 942130 and
# 942400 `WHERE 1=1 AND 1=1`, 942340): taking them off too cost 10 held-out payloads of the attack corpus
# (measured 2026-12-07), for one benign phrase (`order by price`), which stays blocked.
SEARCH_RULES = (
    930110,
    932236,
    932250,
    932260,
    933160,
    934100,
    941180,
    941390,
    942100,
    942130,
    942131,
    942150,
    942160,
    942300,
    942410,
    933161,  # level 3 (at level 2 the rule does not run: its ctl changes nothing)
    942460,  # level 3
)


EXCLUSIONS: tuple[Exclusion, ...] = (
    Exclusion(
        tuple(sorted({*INJECTION_RULES, *_PROSE_OTHERS})),
        PROSE,
        "prose fields (issue and comment bodies, ticket descriptions, CMS HTML, commit messages, GraphQL "
        "documents): they hold shell, SQL, PHP and HTML by design (453 of the 1,159 requests of the first tuning "
        "half blocked at PL2), so the injection families come off them whole, with the LFI and RFI rules that "
        "matched there; an attack in these fields is judged without them (the backend must escape what it shows)",
    ),
    Exclusion(
        (932236, 942200),
        NAMES,
        "names of people, places and organisations with apostrophes and commas (O'Brien, Lovelace, PhD, "
        "L'Aquila): 942200 on those fields; and words that are also commands' names ('Smith (they/them)', "
        "'Ed', 'Who'): 932236",
    ),
    Exclusion(
        tuple(sorted({*INJECTION_RULES, *_CODE_OTHERS})),
        CODE,
        "JSON fields that hold a command, an expression or a regex by the API's definition (CI steps' "
        "commands, PromQL in alert rules, OpenAPI and JSON Schema patterns): code by design, as prose fields "
        "hold it by chance; the injection families and the path rules that match scripts come off them",
    ),
    Exclusion(
        (931100, 931130, 934110),
        OAUTH_URIS,
        "OAuth and OpenID Connect parameters that carry a URL by specification (redirect_uri, "
        "post_logout_redirect_uri, audience, resource): a link to another host (931130), a native app's "
        "loopback redirect (931100, 934110); the authorization server matches them against registered URIs",
    ),
    Exclusion(
        (931130,),
        OAUTH_SCOPES,
        "OAuth scopes that are URLs (https://www.googleapis.com/auth/drive): 931130 reads a link to another host",
    ),
    Exclusion(
        _COMMAND_WORDS,
        JSON_KEY_PATHS,
        "JSON key paths of identifiers only (json.pipeline.steps.0.command): 932236 reads a key starting with "
        "a command's name as that command; a key with no space or separator cannot carry arguments",
    ),
    Exclusion(
        (932130, 933135),
        JSON_VALUES,
        "Terraform references in JSON values (${var.env}, ${aws_s3_bucket.logs.arn}): a dotted name no shell "
        "expands; only when every JSON value's $, <, > and brackets are such references or plain text "
        "(TERRAFORM_VALUE), so $(id), ${HOME} or <(cmd) anywhere keeps both rules on every value",
        when=("ARGS:/^json\\./", f"@rx {TERRAFORM_VALUE}"),
        every=True,
        phase=2,
    ),
    Exclusion(
        tuple(sorted(INJECTION_RULES)),
        VIEW_STATE,
        "ASP.NET Web Forms' view state and event validation: base64 the framework writes, signs and reads "
        "itself (942120 reads its '==' as an operator)",
    ),
    Exclusion(
        (932236, 932240),
        POSTBACK_TARGET,
        "ASP.NET Web Forms' postback target, a control id such as ctl00$MainContent$btnSave (932240 reads "
        "'$' between words as shell syntax)",
    ),
    Exclusion(
        tuple(sorted({*INJECTION_RULES, 920230})),
        PASSWORDS,
        "password-manager passwords and passphrases (symbols, 'select-union-order-blue'): never shown, never "
        "run, never put in a query unhashed, so no injection rule has anything to find there",
    ),
    Exclusion(
        (931130,),
        URLS,
        "JSON fields naming a link (webhooks' html_url, OAuth redirect_uri, avatarUrl): 931130 flags every link "
        "to another host as remote file inclusion",
    ),
    Exclusion(
        (942120,), GRAPHQL_IDS, "GraphQL global ids (base64, '=' padding) read as SQL operators; 15 tuning requests"
    ),
    Exclusion(
        (932200, 942200),
        CONSENT_COOKIES,
        "consent managers' cookies hold JSON-like text (942200; 93 tuning requests), Cookiebot's with quotes and "
        "slashes (932200)",
    ),
    Exclusion(
        tuple(sorted({*INJECTION_RULES, *_KUBERNETES_OTHERS})),
        KUBERNETES_OBJECTS,
        "Kubernetes objects sent to a Kubernetes API path (CRDs' schemas with regexes and CEL, selectors, file "
        "paths, ConfigMaps holding configuration files, annotations with links): declarative objects, never "
        "rendered as HTML or put into SQL; the injection families and the rules of other files that matched "
        "them, on that path only",
        when=("REQUEST_FILENAME", f"@rx {KUBERNETES_PATH}"),
    ),
    Exclusion(
        (930130,),
        ("REQUEST_FILENAME",),
        "930130 reads '.env' in group names such as gateway.envoyproxy.io; only on paths shaped as "
        "Kubernetes API paths, whose names cannot hold a dot file; 17 tuning requests",
        when=("REQUEST_FILENAME", f"@rx {KUBERNETES_PATH}"),
    ),
    Exclusion(
        SEARCH_RULES,
        SEARCH_QUERIES,
        "search queries that are plain text (PLAIN_SEARCH: no quote, no shell, comment or tag syntax) and name "
        "a command, a function or SQL words ('ls -la explained', 'eval() in javascript', 'SELECT COUNT(*) slow "
        "postgres', 'price < 100'): 38 of the 44 search false positives of the first tuning half at PL2; any "
        "value of q that is not plain keeps every rule",
        when=(SEARCH_QUERY_ARGS, f"@rx {PLAIN_SEARCH}"),
        every=True,
        phase=2,
    ),
    Exclusion(
        SEARCH_RULES,
        GRAPHQL_SEARCH,
        "GraphQL's search variable (json.variables.q) when it is plain text: the search exclusion's reason and "
        "guard, for a JSON body",
        when=("ARGS:json.variables.q", f"@rx {PLAIN_SEARCH}"),
        every=True,
        phase=2,
    ),
)


# Level 3 runs rules that levels 1 and 2 do not; these exclusions take them off the same arguments, rendered
# from level 3 (so level 2's settings stay those it was measured on).
PL3_EXCLUSIONS: tuple[Exclusion, ...] = (
    Exclusion(
        (920272,),
        ("ARGS", "REQUEST_BODY", "REQUEST_URI_RAW"),
        "920272 (level 3, a protocol rule) allows only printable ASCII without '%' once URL-decoded: every "
        "name in another script, every newline of a text field, every '100%' and every IRI path fails it; "
        "920270 and 920271 keep rejecting NUL and control characters there, and 920272 keeps reading the "
        "headers and the argument names",
        level=3,
    ),
    Exclusion(
        INJECTION_RULES_PL3,
        PROSE,
        "level 3's injection rules on prose fields: the prose exclusion's reason, at level 3",
        level=3,
    ),
    Exclusion(
        (932238, 942460),
        NAMES,
        "942460 (runs of non-word characters) on names with apostrophes, hyphens and spaces; 932238 (command "
        "words, level 3)",
        level=3,
    ),
    Exclusion(
        INJECTION_RULES_PL3,
        CODE,
        "level 3's injection rules on code fields: the code exclusion's reason, at level 3",
        level=3,
    ),
    Exclusion(
        (932238, 932350),
        JSON_KEY_PATHS,
        "932238 and 932350 (level 3's command words) on JSON key paths of identifiers (a key named `Who` read as who)",
        level=3,
    ),
    Exclusion(
        INJECTION_RULES_PL3,
        VIEW_STATE,
        "level 3's injection rules on ASP.NET's view state: the view state exclusion's reason, at level 3",
        level=3,
    ),
    Exclusion(
        INJECTION_RULES_PL3,
        PASSWORDS,
        "level 3's injection rules on passwords ('!' and a digit read as shell history, wildcards, runs of "
        "special characters): the password exclusion's reason, at level 3",
        level=3,
    ),
    Exclusion(
        (942420, 942511),
        CONSENT_COOKIES,
        "942420 counts special characters in consent cookies' JSON-like text, 942511 reads Cookiebot's quotes",
        level=3,
    ),
    Exclusion(
        (932190,),
        URLS,
        "932190 (level 3, wildcard bypass) reads a link's '/?' and '*' in JSON fields naming a link",
        level=3,
    ),
    Exclusion(
        (942431,),
        OAUTH_URNS,
        "942431 (level 3) counts the colons of OAuth's token type URNs (urn:ietf:params:oauth:grant-type:...)",
        level=3,
    ),
    Exclusion(
        INJECTION_RULES_PL3,
        KUBERNETES_OBJECTS,
        "level 3's injection rules on Kubernetes objects (CRD schemas' patterns and CEL, selectors), on Kubernetes "
        "API paths only: the Kubernetes exclusion's reason, at level 3",
        when=("REQUEST_FILENAME", f"@rx {KUBERNETES_PATH}"),
        level=3,
    ),
    Exclusion(
        (932350,),
        ("ARGS_NAMES:json.id",),
        "932350 reads a JSON body's key `id` (its argument name json.id) as the command id; a name, not a value: "
        "it is that fixed text",
        level=3,
    ),
)


def _runtime(ids: Iterator[int], item: Exclusion, targets: tuple[str, ...], json_body: bool) -> list[str]:
    """The rules that take item's rules off `targets` at runtime: one rule with the ctl actions when one
    condition decides; otherwise a guard rule per condition that flags the request when it fails (for `every`,
    when any value of its variable fails), then the ctl rule only without the flag."""
    ctls = ",".join(f"ctl:ruleRemoveTargetById={rule};{target}" for rule in item.rules for target in targets)
    phase = 2 if json_body else item.phase
    actions = f"phase:{phase},pass,nolog,t:none"
    conditions = [(f"TX:{JSON_FLAG}", "@eq 1")] if json_body else []
    if item.when is not None:
        conditions.append(item.when)
    if len(conditions) == 1 and not item.every:
        ((variable, operator),) = conditions
        return [f'SecRule {variable} "{operator}" "id:{next(ids)},{actions},{ctls}"']
    # A condition that fails flags the request; the exclusion applies only when none was flagged.
    guard = next(ids)
    flag = f"setvar:tx.block_exclusion_{guard}=1"
    out = []
    for n, (variable, operator) in enumerate(conditions):
        rule_id = guard if n == 0 else next(ids)
        out.append(f'SecRule {variable} "!{operator}" "id:{rule_id},{actions},{flag}"')
    return [*out, f'SecRule &TX:block_exclusion_{guard} "@eq 0" "id:{next(ids)},{actions},{ctls}"']


def _json_body(ids: Iterator[int]) -> list[str]:
    """JSON_FLAG, set when the body was parsed as JSON and no query string argument is named json.*."""
    actions = "phase:2,pass,nolog,t:none"
    # Set on every request first (0), so that a guard's negated test of it always has a value to read.
    return [
        "# JSON path exclusions hold only for a body parsed as JSON, beside no query string argument named json.*: "
        "a query string or a form can name an argument json.body too",
        f'SecAction "id:{next(ids)},{actions},setvar:tx.{JSON_FLAG}=0"',
        f'SecRule {JSON_BODY[0]} "{JSON_BODY[1]}" "id:{next(ids)},{actions},setvar:tx.{JSON_FLAG}=1"',
        f'SecRule {JSON_NAMED_QUERY[0]} "{JSON_NAMED_QUERY[1]}" "id:{next(ids)},{actions},setvar:tx.{JSON_FLAG}=0"',
    ]


def directives(paranoia_level: int) -> tuple[str, str]:
    """(before the CRS, after the CRS): the exclusions' SecLang for a paranoia level, each after a comment
    with its reason; ('', '') at level 1. Targets naming JSON paths (JSON_TARGET) are rendered apart, at
    runtime, holding only for a body parsed as JSON (JSON_BODY, JSON_NAMED_QUERY)."""
    if paranoia_level < FIRST_LEVEL:
        return "", ""
    ids = itertools.count(FIRST_ID)
    before: list[str] = _json_body(ids)
    after: list[str] = []
    for item in (*EXCLUSIONS, *PL3_EXCLUSIONS):
        if paranoia_level < item.level:
            continue
        comment = f"# {item.reason}"
        json_paths = tuple(t for t in item.targets if JSON_TARGET.match(t))
        others = tuple(t for t in item.targets if not JSON_TARGET.match(t))
        if json_paths:
            before += [comment, *_runtime(ids, item, json_paths, json_body=True)]
        if not others:
            continue
        if item.when is not None:
            before += [comment, *_runtime(ids, item, others, json_body=False)]
        else:
            after.append(comment)
            targets = "|".join(f"!{target}" for target in others)
            after += [f'SecRuleUpdateTargetById {rule} "{targets}"' for rule in item.rules]
    return "\n".join(before) + "\n", "\n".join(after) + "\n"
