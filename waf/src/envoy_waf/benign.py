"""Build waf/corpora/benign-modern.jsonl: requests as applications send them today, none of them an attack.

Deterministic: every choice comes from random.Random(SEED) in a fixed order, and the texts come from files
whose versions are pinned (this repository's docs and example renders, ../shared/crds, and the long
descriptions of the packages pinned in waf/requirements.txt as installed in .venv-waf):

    python -m envoy_waf.benign          # from waf/, in .venv-waf (make waf-corpora)

The templates are what APIs, browsers and people send: JSON API calls whose bodies are the public texts above
(issue and comment bodies with markdown and code, support tickets quoting SQL and stack traces, HTML from a CMS
field), search queries, user records with names in many scripts, Kubernetes objects as JSON (the block's own
renders and objects built from the CRDs' schemas), GraphQL, browser navigations and XHRs with current browser
header sets, form logins and sign-ups, multipart uploads of common file types, and webhook payloads.
waf/corpora/README.md lists the sources with their licences.
"""

from __future__ import annotations

import base64
import fnmatch
import importlib.metadata
import json
import random
import re
import string
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from .traffic import CORPORA, Request, generator_main, make

SEED = 39
NAME = "benign-modern"
ROOT = Path(__file__).resolve().parents[3]  # the block's repository
# The repository's own texts (docs, README, the example renders) are read as of this commit, not from the
# working tree: editing the docs must not change the corpus (git history is needed; a shallow clone that
# lacks the commit gets one line saying so).
SOURCE_COMMIT = "902f9447e7b995b05c48c2f688cb0cf91f8d8d10"
SHARED_CRDS = ROOT.parent / "shared" / "crds"
# Long descriptions of pinned packages (MIT, BSD, Apache-2.0), as PyPI shows them: markdown and reST with code.
PACKAGES = (
    "pytest",
    "mypy",
    "Pygments",
    "PyYAML",
    "packaging",
    "pluggy",
    "iniconfig",
    "grpcio",
    "protobuf",
    "typing_extensions",
    "pathspec",
)
MAX_BODY = 120_000  # under the block's default waf.body.limit (131072): larger bodies get Envoy's 413

CHROME = [
    ("sec-ch-ua", '"Chromium";v="142", "Google Chrome";v="142", "Not_A Brand";v="99"'),
    ("sec-ch-ua-mobile", "?0"),
    ("sec-ch-ua-platform", '"Windows"'),
    (
        "User-Agent",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/142.0.0.0 Safari/537.36",
    ),
]
EDGE = [
    ("sec-ch-ua", '"Microsoft Edge";v="142", "Chromium";v="142", "Not_A Brand";v="24"'),
    ("sec-ch-ua-mobile", "?0"),
    ("sec-ch-ua-platform", '"macOS"'),
    (
        "User-Agent",
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/142.0.0.0 Safari/537.36 Edg/142.0.0.0",
    ),
]
FIREFOX = [("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:145.0) Gecko/20100101 Firefox/145.0")]
SAFARI = [
    (
        "User-Agent",
        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 "
        "(KHTML, like Gecko) Version/18.6 Mobile/15E148 Safari/604.1",
    )
]
BROWSERS = {"chrome": CHROME, "edge": EDGE, "firefox": FIREFOX, "safari": SAFARI}
LANGS = (
    "en-US,en;q=0.9",
    "de-DE,de;q=0.9,en-US;q=0.8,en;q=0.7",
    "fr-FR,fr;q=0.9",
    "ja,en-US;q=0.9,en;q=0.8",
    "pt-BR,pt;q=0.9,en-US;q=0.8",
    "zh-CN,zh;q=0.9",
    "ar,en;q=0.8",
    "ru-RU,ru;q=0.9,en;q=0.8",
)
CLIENTS = (
    "curl/8.14.1",
    "python-requests/2.32.5",
    "Go-http-client/2.0",
    "okhttp/4.12.0",
    "axios/1.13.2",
    "node",
    "PostmanRuntime/7.49.1",
    "kubectl/v1.34.2 (linux/amd64) kubernetes/4a1b2c3",
)

NAMES = (
    ("Seán", "O'Brien"),
    ("Zoë", "D'Angelo"),
    ("José", "Álvarez-García"),
    ("François", "L'Écuyer"),
    ("Ngũgĩ", "wa Thiong'o"),
    ("Søren", "Kierkegård"),
    ("Łukasz", "Żółkiewski"),
    ("Ólafur", "Þórðarson"),
    ("Björk", "Guðmundsdóttir"),
    ("Ümit", "Öztürk"),
    ("Nguyễn", "Văn An"),
    ("李", "小龍"),
    ("田中", "太郎"),
    ("김", "민준"),
    ("Иван", "Петров"),
    ("Олена", "Шевченко"),
    ("Αλέξανδρος", "Παπαδόπουλος"),
    ("محمد", "العلي"),
    ("דוד", "כהן"),
    ("अनिल", "कुमार"),
    ("ศรี", "สมบูรณ์"),
    ("Chidi", "Okonkwo"),
    ("Anne-Marie", "Smith-Jones"),
    ("Jean-Luc", "Picard"),
    ("Mary", "O'Connor"),
    ("Null", "McNullface"),
    ("Select", "Union"),
    ("Dr. Ada", "Lovelace, PhD"),
    ("Kwame", "Nkrumah"),
    ("Aarav", "Patel"),
    ("Mei", "Chen"),
    ("Tomás", "Ó Súilleabháin"),
    ("Gülşen", "Yılmaz"),  # noqa: RUF001 (a Turkish dotless i, on purpose)
    ("Ηλίας", "Νικολάου"),
)
CITIES = (
    "São Paulo",
    "Zürich",
    "Kraków",
    "Reykjavík",
    "Москва",
    "東京",
    "서울",
    "القاهرة",
    "Tel Aviv-Yafo",
    "Île-de-France",
    "Düsseldorf",
    "Montréal",
    "Nuuk",
    "Lagos",
    "Bengaluru",
)
SEARCHES = (
    "how to reset password",
    "C++ templates vs generics",
    "rock & roll t-shirts",
    "price < 100 EUR",
    "O'Reilly kubernetes book",
    "select box css",
    "union station chicago",
    "drop shipping",
    "alert dialog react",
    "script writing course",
    "python list comprehension",
    "what is 1=1 in sql",
    "<h1> tag seo",
    "AT&T outage",
    "Tom's Hardware GPU",
    "100% cotton",
    "50/50 raffle",
    "k8s ingress vs gateway api",
    "eval() in javascript",
    "exec summary template",
    "sleep(5) vs setTimeout",
    "cat /etc/hosts windows equivalent",
    "ls -la explained",
    '"exact phrase" search',
    "-minus exclusion",
    "site:example.com docs",
    "émile zola",
    "日本語 入力",
    "where to buy",
    "order by price",
    "wget vs curl",
    "passwd command linux",
    "admin panel template",
    "java.lang.NullPointerException fix",
    "SELECT COUNT(*) slow postgres",
    "null pointer",
    "or else",
    "if then else bash",
    "${HOME} variable",
    "../ relative path",
    "%20 in url",
    "&nbsp; html",
    "char(10)",
    "onload event",
    "iframe embed youtube",
    "document.cookie",
    "window.location redirect",
    "base64 decode online",
)
SQL_TICKETS = (
    "Our nightly report fails. The query is:\n\nSELECT o.id, o.total FROM orders o JOIN customers c ON c.id = "
    "o.customer_id WHERE c.country = 'DE' AND o.created_at > NOW() - INTERVAL '1 day';\n\nIt worked until "
    "Tuesday.",
    "After the upgrade `UPDATE users SET last_login = now() WHERE id = 42;` takes 30 seconds. EXPLAIN shows a "
    "seq scan.",
    "Can you run DELETE FROM sessions WHERE expires_at < '2026-01-01' on the staging DB? I don't have access.",
    "The export has duplicates. I tried SELECT DISTINCT email FROM subscribers UNION SELECT email FROM "
    "leads; but the counts still differ.",
    "Error: ERROR 1064 (42000): You have an error in your SQL syntax; check the manual near 'order by name' at line 1",
    "Please add an index: CREATE INDEX CONCURRENTLY idx_orders_customer ON orders (customer_id);",
    "The dashboard shows 0 rows but SELECT * FROM events WHERE type = 'click' OR type = 'view' LIMIT 10 returns data.",
    'Migration 0042 failed with: psycopg2.errors.UndefinedColumn: column "is_admin" does not exist\nLINE 1: '
    "SELECT id, is_admin FROM accounts WHERE ...",
    "Why does WHERE name LIKE '%smith%' not match 'Smith'? Collation is utf8mb4_bin.",
    "ORA-00942: table or view does not exist when I call SELECT * FROM hr.employees",
)
CODE_SNIPPETS = (
    "```python\nimport subprocess\nout = subprocess.run(['ls', '-la', '/tmp'], capture_output=True)\nprint(out."
    "stdout.decode())\n```",
    "```js\nfetch('/api/items?limit=10').then(r => r.json()).then(items => {\n  document.getElementById('list')"
    ".innerHTML = items.map(i => `<li>${i.name}</li>`).join('');\n});\n```",
    "```bash\ncurl -sSL https://example.com/install.sh | sh -s -- --prefix=/usr/local\nexport PATH=$HOME/bin:$PATH"
    "\n```",
    "```sql\nSELECT u.name, count(*) AS n FROM users u LEFT JOIN posts p ON p.user_id = u.id GROUP BY u.name "
    "HAVING count(*) > 5 ORDER BY n DESC;\n```",
    "```go\nif err := json.NewDecoder(r.Body).Decode(&req); err != nil {\n\thttp.Error(w, err.Error(), "
    "http.StatusBadRequest)\n\treturn\n}\n```",
    "```php\n<?php echo htmlspecialchars($_GET['name'], ENT_QUOTES, 'UTF-8'); ?>\n```",
    "```yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  LOG_LEVEL: debug\n```",
    '```java\nString sql = "SELECT * FROM users WHERE id = ?";\nPreparedStatement ps = conn.prepareStatement'
    "(sql);\nps.setInt(1, id);\n```",
    '```html\n<script src="https://cdn.example.com/app.js" defer></script>\n<div onclick="toggle()">Menu</div>\n```',
    "```powershell\nGet-ChildItem -Path C:\\Windows\\System32 -Filter *.dll | Select-Object -First 5\n```",
    'Traceback (most recent call last):\n  File "/app/main.py", line 12, in <module>\n    os.system(cmd)\n'
    "FileNotFoundError: [Errno 2] No such file or directory: '/etc/app/config.ini'",
    "```rust\nfn main() {\n    let v: Vec<i32> = (1..=10).filter(|x| x % 2 == 0).collect();\n    println!"
    '("{:?}", v);\n}\n```',
)
CMS_HTML = (
    '<h2>Summer sale</h2><p>Up to <strong>50% off</strong> on <a href="/shop/shoes?ref=banner">shoes</a>.</p>',
    '<p><img src="/media/team.jpg" alt="Our team in Zürich" width="640" height="480"></p><p>Meet the team!</p>',
    '<figure><iframe src="https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ" title="Launch video" '
    "allowfullscreen></iframe><figcaption>Launch</figcaption></figure>",
    "<table><thead><tr><th>Plan</th><th>Price</th></tr></thead><tbody><tr><td>Pro</td><td>&euro;9</td></tr>"
    "</tbody></table>",
    '<blockquote cite="https://example.org">Simplicity is prerequisite for reliability.</blockquote>',
    '<p style="color:#333;font-family:Georgia, serif">Dear customer,<br>your order #1234 has shipped.</p>',
    '<ul><li><a href="mailto:support@example.com">Email us</a></li><li><a href="tel:+4930123456">Call</a></li></ul>',
    "<p>Use <code>&lt;script&gt;</code> tags only in the theme, never in posts.</p>",
    '<div class="callout warning"><p>Maintenance window: Sunday 02:00&ndash;04:00 UTC.</p></div>',
    '<p><a href="https://example.com/docs" target="_blank" rel="noopener noreferrer">Read the docs</a></p>',
)
GRAPHQL: tuple[tuple[str, str, dict[str, Any] | None], ...] = (
    ("GetViewer", "query GetViewer { viewer { login name avatarUrl(size: 64) } }", {}),
    (
        "Repo",
        "query Repo($owner: String!, $name: String!) { repository(owner: $owner, name: $name) { "
        "issues(first: 20, states: OPEN, orderBy: {field: CREATED_AT, direction: DESC}) { nodes { number "
        "title author { login } } } } }",
        {"owner": "acme", "name": "shop"},
    ),
    (
        "AddComment",
        "mutation AddComment($input: AddCommentInput!) { addComment(input: $input) { commentEdge "
        "{ node { id body } } } }",
        None,
    ),
    (
        "Search",
        "query Search($q: String!) { search(query: $q, type: ISSUE, first: 10) { issueCount edges { "
        "node { ... on Issue { title url } } } } }",
        None,
    ),
    (
        "Products",
        "query Products($first: Int = 20, $after: String) { products(first: $first, after: $after, "
        "filter: {price: {lt: 100}}) { pageInfo { hasNextPage endCursor } edges { node { id name "
        "price { amount currency } } } } }",
        {"first": 20, "after": "Y3Vyc29yOjIw"},
    ),
    (
        "UpdateUser",
        "mutation UpdateUser($id: ID!, $patch: UserPatch!) { updateUser(id: $id, patch: $patch) { id name } }",
        None,
    ),
    ("Introspection", "query IntrospectionQuery { __schema { queryType { name } types { name kind } } }", {}),
)
FILES = (
    ("report.pdf", "application/pdf"),
    ("photo.jpg", "image/jpeg"),
    ("screenshot.png", "image/png"),
    ("data.csv", "text/csv"),
    ("notes.txt", "text/plain"),
    ("slides.pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"),
    ("budget.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    ("config.json", "application/json"),
    ("avatar.webp", "image/webp"),
    ("archive.zip", "application/zip"),
)


def _git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(
            f"git {' '.join(args)}: {done.stderr.decode(errors='replace').strip()} (the benign corpus reads this "
            f"repository's texts at commit {SOURCE_COMMIT}: fetch the full history)"
        )
    return done.stdout.decode("utf-8")


def repo_files(*patterns: str) -> list[tuple[str, str]]:
    """(path, text) of the repository's files at SOURCE_COMMIT matching any of `patterns`, sorted by path."""
    names = _git("ls-tree", "-r", "--name-only", SOURCE_COMMIT).splitlines()
    chosen = sorted(n for n in names if any(fnmatch.fnmatchcase(n, p) for p in patterns))
    return [(n, _git("show", f"{SOURCE_COMMIT}:{n}")) for n in chosen]


def docs_texts() -> list[str]:
    """Runs of one to four consecutive blocks (paragraphs, lists, code blocks) of the repository's docs and
    README, at most 4,000 characters: the size of an issue comment, markdown and code as people paste it."""
    rng = random.Random(SEED)
    out = []
    for _, text in repo_files("README.md", "docs/*.md"):
        blocks = [b.strip() for b in re.split(r"\n\s*\n(?=\S)", text) if b.strip()]
        i = 0
        while i < len(blocks):
            n = rng.randint(1, 4)
            chunk = "\n\n".join(blocks[i : i + n])
            i += n
            if 80 <= len(chunk) <= 4000:
                out.append(chunk)
    return out


def package_texts() -> list[str]:
    """Paragraph groups of the pinned packages' long descriptions (their PyPI pages)."""
    out = []
    for dist in PACKAGES:
        meta = importlib.metadata.metadata(dist)
        text = meta.get_payload() or meta.get("Description") or ""  # type: ignore[attr-defined]
        for chunk in re.split(r"\n\s*\n(?=\S)", str(text)):
            if 60 <= len(chunk) <= 6000:
                out.append(chunk.strip())
    return out


def rendered_objects() -> list[dict[str, Any]]:
    """The block's example renders (examples/*/rendered/manifests, written by `make docs`)."""
    out = []
    for _, text in repo_files("examples/*/rendered/manifests/*.yaml"):
        for doc in yaml.safe_load_all(text):
            if isinstance(doc, dict) and doc.get("kind"):
                out.append(doc)
    return out


def crds() -> list[dict[str, Any]]:
    out = []
    for path in sorted(SHARED_CRDS.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                out.append(doc)
    return out


def example_value(rng: random.Random, name: str, schema: dict[str, Any], depth: int) -> Any:
    """A value a user would write for a schema node: its default or example, an enum member, else one of
    its type shaped by the field's name."""
    if "default" in schema:
        return schema["default"]
    if "enum" in schema:
        return rng.choice(schema["enum"])
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        if depth > 5 or not props:
            return {"app.kubernetes.io/name": "shop"} if schema.get("additionalProperties") else {}
        keys = sorted(props)
        required = set(schema.get("required") or [])
        chosen = [k for k in keys if k in required or rng.random() < 0.35]
        return {k: example_value(rng, k, props[k], depth + 1) for k in chosen[:12]}
    if kind == "array":
        return [example_value(rng, name, schema.get("items") or {"type": "string"}, depth + 1)]
    if kind == "integer":
        lowest = int(schema.get("minimum", 1))
        return max(lowest, min(int(schema.get("maximum", 65535)), rng.choice((1, 3, 8080, 443, 30, 100))))
    if kind == "boolean":
        return rng.random() < 0.5
    if schema.get("x-kubernetes-int-or-string"):
        return rng.choice(("50%", 3, "10s"))
    low = name.lower()
    for word, values in (
        ("path", ("/api/v1/", "/", "/static/", "/healthz")),
        ("host", ("shop.example.com", "*.example.org")),
        ("name", ("shop-backend", "eg-shared", "web", "api-v2")),
        ("namespace", ("shop", "default")),
        ("regex", (r"^/api/v[0-9]+/.*", r".*\.example\.com$")),
        ("url", ("https://auth.example.com/.well-known/jwks.json",)),
        ("duration", ("10s", "1m")),
        ("timeout", ("30s", "250ms")),
        ("expression", ("request.headers['x-tenant'] == 'acme'",)),
        ("header", ("x-request-id", "Authorization")),
        ("address", ("10.0.0.12", "backend.shop.svc.cluster.local")),
    ):
        if word in low:
            return rng.choice(values)
    return rng.choice(("shop", "production", "v1", "eu-west-1", "team-a", "default"))


def plural(kind: str) -> str:
    """The resource name Kubernetes gives a kind (lower case, English plural), for kinds without a CRD here."""
    low = kind.lower()
    if low.endswith("y") and not low.endswith(("ay", "ey", "oy")):
        return low[:-1] + "ies"
    return low + ("es" if low.endswith(("s", "x")) else "s")


def k8s_path(obj: dict[str, Any], plurals: dict[str, str]) -> str:
    api = str(obj["apiVersion"])
    kind = str(obj["kind"])
    name = plurals.get(kind) or plural(kind)
    prefix = f"/api/{api}" if "/" not in api else f"/apis/{api}"
    ns = obj.get("metadata", {}).get("namespace")
    where = f"/namespaces/{ns}" if ns else ""
    return f"{prefix}{where}/{name}?fieldManager=kubectl-client-side-apply&fieldValidation=Strict"


class Gen:
    def __init__(self) -> None:
        self.rng = random.Random(SEED)
        self.out: list[Request] = []
        self.docs = docs_texts()
        self.pkgs = package_texts()

    def add(self, family: str, method: str, path: str, headers: list[tuple[str, str]], body: bytes = b"") -> None:
        rid = f"{family}-{len(self.out):05d}"
        self.out.append(make(NAME, rid, family, method, path, headers, body, attack=False))

    # --- helpers -----------------------------------------------------------------------------------------
    def text(self) -> str:
        return self.rng.choice(self.docs if self.rng.random() < 0.5 else self.pkgs)

    def person(self) -> dict[str, Any]:
        first, last = self.rng.choice(NAMES)
        local = re.sub(r"[^a-z0-9]", "", (first + "." + last).lower().encode("ascii", "ignore").decode()) or "user"
        return {
            "given_name": first,
            "family_name": last,
            "display_name": f"{first} {last}",
            "email": f"{local}{self.rng.randint(1, 99)}@example.{self.rng.choice(('com', 'org', 'de', 'co.jp'))}",
            "locale": self.rng.choice(("en-US", "de-DE", "ja-JP", "ar-EG", "he-IL", "pt-BR", "zh-CN")),
            "address": {"city": self.rng.choice(CITIES), "postal_code": f"{self.rng.randint(1000, 99999)}"},
        }

    def api_headers(self, content_type: str | None = "application/json") -> list[tuple[str, str]]:
        h = [
            ("Host", "api.example.com"),
            ("User-Agent", self.rng.choice(CLIENTS)),
            ("Accept", "application/json"),
            ("Authorization", "Bearer " + self.token()),
        ]
        if content_type:
            h.append(("Content-Type", content_type))
        return h

    def token(self) -> str:
        head = base64.urlsafe_b64encode(b'{"alg":"RS256","typ":"JWT","kid":"2026-11"}').decode().rstrip("=")
        claims = json.dumps({"sub": str(self.rng.randint(1000, 99999)), "scope": "read write", "exp": 1796000000})
        payload = base64.urlsafe_b64encode(claims.encode()).decode().rstrip("=")
        sig = base64.urlsafe_b64encode(self.rng.randbytes(64)).decode().rstrip("=")
        return f"{head}.{payload}.{sig}"

    def browser(self, nav: bool, accept: str | None = None) -> list[tuple[str, str]]:
        name = self.rng.choice(sorted(BROWSERS))
        h = [("Host", "www.example.com"), *BROWSERS[name]]
        if nav:
            h += [
                (
                    "Accept",
                    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8",
                ),
                ("Upgrade-Insecure-Requests", "1"),
            ]
        else:
            h.append(("Accept", accept or "application/json, text/plain, */*"))
        h += [("Accept-Language", self.rng.choice(LANGS)), ("Accept-Encoding", "gzip, deflate, br, zstd")]
        if name in ("chrome", "edge", "firefox"):
            h += [
                ("Sec-Fetch-Site", "none" if nav else "same-origin"),
                ("Sec-Fetch-Mode", "navigate" if nav else "cors"),
                ("Sec-Fetch-Dest", "document" if nav else "empty"),
            ]
            if nav:
                h.append(("Sec-Fetch-User", "?1"))
        if self.rng.random() < 0.7:
            h.append(("Cookie", self.cookies()))
        if not nav or self.rng.random() < 0.5:
            h.append(
                (
                    "Referer",
                    "https://www.example.com/"
                    + self.rng.choice(("", "shop/", "blog/2026/11/launch", "search?q=boots")),
                )
            )
        h.append(("Priority", "u=0, i" if nav else "u=1, i"))
        return h

    def cookies(self) -> str:
        parts = [
            f"_ga=GA1.1.{self.rng.randint(10**8, 10**9)}.{self.rng.randint(1700000000, 1790000000)}",
            f"session={base64.urlsafe_b64encode(self.rng.randbytes(24)).decode().rstrip('=')}",
            'cookie_consent={"necessary":true,"analytics":false}'
            if self.rng.random() < 0.3
            else "cookie_consent=necessary%2Cpreferences",
            f"theme={self.rng.choice(('dark', 'light', 'system'))}",
        ]
        if self.rng.random() < 0.4:
            parts.append(f"csrftoken={''.join(self.rng.choices(string.ascii_letters + string.digits, k=32))}")
        return "; ".join(parts)

    def password(self) -> str:
        style = self.rng.random()
        if style < 0.4:  # a password manager's
            return "".join(self.rng.choices(string.ascii_letters + string.digits + "!@#$%^&*()-_=+[]{};:,.<>/?~", k=20))
        if style < 0.7:  # a passphrase
            return "-".join(
                self.rng.choices(
                    ("correct", "horse", "battery", "staple", "Sonne", "mañana", "blue", "select", "union", "order"),
                    k=4,
                )
            )
        return self.rng.choice(
            (
                "Tr0ub4dor&3",
                "P@ssw0rd!2026",
                "hunter2",
                "Summer#2026",
                "ilovemycat<3",
                "Qwerty123$",
                "1q2w3e4r5t",
                "pa$$word'",
                "Ünïcødé-Pässwörd",
            )
        )

    # --- families ----------------------------------------------------------------------------------------
    def issues(self, n: int) -> None:
        for i in range(n):
            owner, repo = self.rng.choice((("acme", "shop"), ("platform", "envoy"), ("data", "etl")))
            body = self.text()
            if self.rng.random() < 0.4:
                body += "\n\n" + self.rng.choice(CODE_SNIPPETS)
            if i % 3 == 0:
                doc: dict[str, Any] = {"body": body}
                path = f"/repos/{owner}/{repo}/issues/{self.rng.randint(1, 999)}/comments"
            else:
                title = body.splitlines()[0].lstrip("# ")[:80]
                doc = {"title": title, "body": body, "labels": self.rng.sample(["bug", "docs", "question", "p1"], 2)}
                path = f"/repos/{owner}/{repo}/issues"
            headers = [*self.api_headers(), ("X-GitHub-Api-Version", "2022-11-28")]
            self.add(
                "api-issue", "POST" if i % 5 else "PATCH", path, headers, json.dumps(doc, ensure_ascii=False).encode()
            )

    def tickets(self, n: int) -> None:
        for _ in range(n):
            text = self.rng.choice(SQL_TICKETS + CODE_SNIPPETS)
            if self.rng.random() < 0.5:
                text = f"Hi team,\n\n{text}\n\nThanks,\n{self.rng.choice(NAMES)[0]}"
            doc = {
                "subject": text.splitlines()[0][:60],
                "description": text,
                "priority": self.rng.choice(("low", "normal", "high")),
                "requester": self.person()["email"],
                "tags": ["support"],
            }
            self.add(
                "api-ticket",
                "POST",
                "/api/v2/tickets",
                self.api_headers(),
                json.dumps(doc, ensure_ascii=False).encode(),
            )

    def cms(self, n: int) -> None:
        for _ in range(n):
            html = "".join(self.rng.sample(CMS_HTML, self.rng.randint(1, 4)))
            if self.rng.random() < 0.5:
                para = self.text().split("\n\n")[0]
                html += "<p>" + para.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") + "</p>"
            doc = {
                "title": self.rng.choice(("About us", "Pricing", "Über uns", "Blog: release notes")),
                "slug": "page-" + str(self.rng.randint(1, 999)),
                "content": {"format": "html", "value": html},
                "status": "draft",
            }
            if self.rng.random() < 0.5:
                body = json.dumps(doc, ensure_ascii=False).encode()
                self.add(
                    "cms-html", "PUT", f"/wp-json/wp/v2/pages/{self.rng.randint(1, 500)}", self.api_headers(), body
                )
            else:
                form = urllib.parse.urlencode({"title": doc["title"], "content": html, "_wpnonce": "a1b2c3d4e5"})
                headers = [
                    *self.browser(False),
                    ("Content-Type", "application/x-www-form-urlencoded"),
                    ("Origin", "https://www.example.com"),
                ]
                self.add("cms-html", "POST", "/admin/pages/save", headers, form.encode())

    def search(self, n: int) -> None:
        for _ in range(n):
            q = self.rng.choice(SEARCHES)
            if self.rng.random() < 0.3:
                words = re.findall(r"[\w'.-]{3,}", self.text())
                if words:
                    q = " ".join(self.rng.sample(words, min(len(words), self.rng.randint(2, 5))))
            params = {"q": q, "page": str(self.rng.randint(1, 5))}
            if self.rng.random() < 0.4:
                params["sort"] = self.rng.choice(("relevance", "price:asc", "created_at desc", "-updated"))
            if self.rng.random() < 0.3:
                params["filter[category]"] = self.rng.choice(("shoes", "books", "home & garden"))
            path = "/search?" + urllib.parse.urlencode(params, quote_via=urllib.parse.quote)
            nav = self.rng.random() < 0.5
            self.add("search", "GET", path if nav else "/api" + path, self.browser(nav))

    def users(self, n: int) -> None:
        for i in range(n):
            p = self.person()
            p["bio"] = self.rng.choice(
                (
                    "",
                    "Backend dev. I <3 Go & Rust.",
                    "Ich liebe Käse 🧀",
                    "SELECT * FROM hobbies;",
                    'Dad, runner, "coffee snob"',
                    "„Anführungszeichen“ und «guillemets»",
                    "C:\\Users\\me\\Documents",
                    "email me: me [at] example.com",
                )
            )
            if i % 4 == 0:
                self.add(
                    "api-user",
                    "PATCH",
                    f"/api/v1/users/{self.rng.randint(1, 9999)}",
                    self.api_headers(),
                    json.dumps({"display_name": p["display_name"], "bio": p["bio"]}, ensure_ascii=False).encode(),
                )
            else:
                self.add(
                    "api-user", "POST", "/api/v1/users", self.api_headers(), json.dumps(p, ensure_ascii=False).encode()
                )

    def kubernetes(self) -> None:
        # kubectl through a Gateway that routes by host name (an API server or a platform API behind it).
        headers = [
            ("Host", "k8s.example.com"),
            ("User-Agent", "kubectl/v1.34.2 (linux/amd64) kubernetes/4a1b2c3"),
            ("Accept", "application/json"),
            ("Content-Type", "application/json"),
            ("Kubectl-Command", "kubectl apply"),
            ("Kubectl-Session", "0c8d7e55-7b7f-4a3e-9c4f-1d2e3f4a5b6c"),
        ]
        definitions = crds()
        plurals = {str(c["spec"]["names"]["kind"]): str(c["spec"]["names"]["plural"]) for c in definitions}
        for obj in rendered_objects():
            body = json.dumps(obj, sort_keys=True).encode()
            if len(body) <= MAX_BODY:
                self.add("k8s-render", "POST", k8s_path(obj, plurals), headers, body)
        for crd in definitions:
            spec = crd["spec"]
            body = json.dumps(crd, sort_keys=True).encode()
            if len(body) <= MAX_BODY:
                self.add(
                    "k8s-crd",
                    "POST",
                    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?fieldManager=kubectl",
                    headers,
                    body,
                )
            for version in spec.get("versions", []):
                schema = (version.get("schema") or {}).get("openAPIV3Schema") or {}
                for k in range(3):
                    obj = {
                        "apiVersion": f"{spec['group']}/{version['name']}",
                        "kind": spec["names"]["kind"],
                        "metadata": {"name": f"example-{k}", "namespace": "shop", "labels": {"team": "web"}},
                    }
                    props = schema.get("properties") or {}
                    if "spec" in props:
                        obj["spec"] = example_value(self.rng, "spec", props["spec"], 0)
                    if spec.get("scope") == "Cluster":
                        obj["metadata"].pop("namespace")
                    path = k8s_path(obj, plurals)
                    self.add("k8s-crd-example", "POST", path, headers, json.dumps(obj, sort_keys=True).encode())

    def graphql(self, n: int) -> None:
        for _ in range(n):
            op, query, variables = self.rng.choice(GRAPHQL)
            if variables is None:
                if op == "AddComment":
                    variables = {"input": {"subjectId": "I_kwDOA1b2c3", "body": self.text()[:3000]}}
                elif op == "Search":
                    variables = {"q": self.rng.choice(SEARCHES) + " is:open"}
                else:
                    variables = {"id": "VXNlcjo0Mg==", "patch": {"name": self.person()["display_name"]}}
            doc = {"operationName": op, "query": query, "variables": variables}
            self.add("graphql", "POST", "/graphql", self.api_headers(), json.dumps(doc, ensure_ascii=False).encode())

    def navigations(self, n: int) -> None:
        pages = (
            "/",
            "/shop/",
            "/shop/shoes/trail-runner-2?color=blue&size=42",
            "/blog/2026/11/launch",
            "/account/orders?page=2",
            "/static/app.3f9a1c.js",
            "/static/styles.css",
            "/favicon.ico",
            "/docs/getting-started#install",
            "/de/über-uns",
            "/ja/製品",
            "/api/v1/me",
            "/cart",
            "/checkout?step=payment",
            "/login?next=%2Faccount%2F",
            "/oauth/callback?code=4%2F0AeanS0b&state=xyz",
            "/images/hero@2x.webp",
            "/sitemap.xml",
            "/robots.txt",
            "/.well-known/openid-configuration",
        )
        for _ in range(n):
            page = self.rng.choice(pages)
            path = urllib.parse.quote(page, safe="/?&=#%@.-_~")
            static = page.startswith(("/static", "/images", "/favicon"))
            if page.startswith("/api"):
                self.add("browser-xhr", "GET", path, self.browser(False))
            elif static:
                self.add("browser-asset", "GET", path, self.browser(False, "*/*"))
            else:
                self.add("browser-nav", "GET", path.split("#")[0], self.browser(True))
        for _ in range(n // 2):
            body = json.dumps(
                {
                    "items": [{"sku": f"TR-{self.rng.randint(100, 999)}", "qty": self.rng.randint(1, 3)}],
                    "coupon": self.rng.choice(("", "WELCOME10", "BLACK-FRIDAY")),
                }
            ).encode()
            csrf = "".join(self.rng.choices(string.hexdigits, k=40))
            headers = [
                *self.browser(False),
                ("Content-Type", "application/json"),
                ("Origin", "https://www.example.com"),
                ("X-CSRF-Token", csrf),
            ]
            self.add("browser-xhr", "POST", "/api/cart", headers, body)

    def forms(self, n: int) -> None:
        for i in range(n):
            p = self.person()
            if i % 2:
                fields = {
                    "username": p["email"],
                    "password": self.password(),
                    "remember_me": "on",
                    "csrf_token": "".join(self.rng.choices(string.ascii_letters + string.digits, k=43)),
                }
                path = "/login"
            else:
                fields = {
                    "first_name": p["given_name"],
                    "last_name": p["family_name"],
                    "email": p["email"],
                    "password": self.password(),
                    "city": p["address"]["city"],
                    "terms": "accepted",
                    "newsletter": self.rng.choice(("yes", "no")),
                }
                path = "/signup"
            headers = [
                *self.browser(True),
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Origin", "https://www.example.com"),
                ("Cache-Control", "max-age=0"),
            ]
            self.add("form", "POST", path, headers, urllib.parse.urlencode(fields).encode())

    def uploads(self, n: int) -> None:
        for _ in range(n):
            name, ctype = self.rng.choice(FILES)
            content = self.file_bytes(name)
            boundary = "----WebKitFormBoundary" + "".join(self.rng.choices(string.ascii_letters + string.digits, k=16))
            caption = self.rng.choice(("Q3 report", "Foto vom Büro", "screenshot of the error", "チーム写真", ""))
            body = (
                (
                    f'--{boundary}\r\nContent-Disposition: form-data; name="caption"\r\n\r\n{caption}\r\n'
                    f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
                    f"Content-Type: {ctype}\r\n\r\n"
                ).encode()
                + content
                + f"\r\n--{boundary}--\r\n".encode()
            )
            headers = [
                *self.browser(False),
                ("Content-Type", f"multipart/form-data; boundary={boundary}"),
                ("Origin", "https://www.example.com"),
            ]
            self.add("upload", "POST", "/api/files", headers, body)

    def file_bytes(self, name: str) -> bytes:
        size = self.rng.randint(200, 6000)
        if name.endswith(".png"):
            return b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + self.rng.randbytes(size)
        if name.endswith(".jpg"):
            return b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + self.rng.randbytes(size) + b"\xff\xd9"
        if name.endswith(".webp"):
            return b"RIFF" + size.to_bytes(4, "little") + b"WEBPVP8 " + self.rng.randbytes(size)
        if name.endswith(".pdf"):
            return (
                b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\nstream\n"
                + self.rng.randbytes(size)
                + b"\nendstream\n%%EOF\n"
            )
        if name.endswith((".zip", ".xlsx", ".pptx")):
            return b"PK\x03\x04\x14\x00\x06\x00" + self.rng.randbytes(size)
        if name.endswith(".csv"):
            rows = ["id,name,city,amount"] + [
                f'{i},"{" ".join(self.rng.choice(NAMES))}",{self.rng.choice(CITIES)},{self.rng.randint(1, 9999)}.00'
                for i in range(self.rng.randint(5, 60))
            ]
            return "\n".join(rows).encode()
        if name.endswith(".json"):
            return json.dumps({"theme": "dark", "features": {"beta": True}, "retries": 3}).encode()
        return self.text().encode()

    def webhooks(self, n: int) -> None:
        for i in range(n):
            kind = i % 4
            p = self.person()
            if kind == 0:
                doc: dict[str, Any] = {
                    "ref": "refs/heads/main",
                    "before": self.rng.randbytes(20).hex(),
                    "after": self.rng.randbytes(20).hex(),
                    "repository": {"full_name": "acme/shop", "html_url": "https://github.com/acme/shop"},
                    "pusher": {"name": p["display_name"], "email": p["email"]},
                    "head_commit": {"message": self.text().split("\n\n")[0][:500], "timestamp": "2026-12-04T10:00:00Z"},
                }
                headers = [("X-GitHub-Event", "push"), ("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958")]
            elif kind == 1:
                doc = {
                    "action": "opened",
                    "issue": {
                        "number": self.rng.randint(1, 999),
                        "title": "Bug report",
                        "body": self.text()[:4000],
                        "user": {"login": "octocat"},
                    },
                }
                headers = [("X-GitHub-Event", "issues"), ("X-GitHub-Delivery", "8a1e2f3c-cc78-11e3-81ab-4c9367dc0958")]
            elif kind == 2:
                doc = {
                    "id": "evt_1Q" + "".join(self.rng.choices(string.ascii_letters, k=20)),
                    "object": "event",
                    "type": "checkout.session.completed",
                    "data": {
                        "object": {
                            "customer_details": {
                                "name": p["display_name"],
                                "email": p["email"],
                                "address": p["address"],
                            },
                            "amount_total": self.rng.randint(100, 99999),
                            "currency": "eur",
                        }
                    },
                }
                headers = [("Stripe-Signature", f"t=1796000000,v1={self.rng.randbytes(32).hex()}")]
            else:
                doc = {
                    "type": "event_callback",
                    "team_id": "T0001",
                    "event": {
                        "type": "message",
                        "user": "U2147483697",
                        "text": self.rng.choice(SQL_TICKETS + CODE_SNIPPETS)[:2000],
                        "channel": "C2147483705",
                    },
                }
                headers = [
                    ("X-Slack-Signature", "v0=" + self.rng.randbytes(32).hex()),
                    ("X-Slack-Request-Timestamp", "1796000000"),
                ]
            body = json.dumps(doc, ensure_ascii=False).encode()
            base = [
                ("Host", "hooks.example.com"),
                (
                    "User-Agent",
                    self.rng.choice(
                        (
                            "GitHub-Hookshot/f1a2b3c",
                            "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
                            "Slackbot 1.0 (+https://api.slack.com/robots)",
                        )
                    ),
                ),
                ("Accept", "*/*"),
                ("Content-Type", "application/json"),
            ]
            self.add("webhook", "POST", "/hooks/" + ("github", "github", "stripe", "slack")[kind], base + headers, body)


def generate() -> Iterator[Request]:
    g = Gen()
    g.issues(300)
    g.tickets(150)
    g.cms(150)
    g.search(300)
    g.users(200)
    g.kubernetes()
    g.graphql(150)
    g.navigations(250)
    g.forms(200)
    g.uploads(120)
    g.webhooks(150)
    yield from g.out


def main() -> int:
    return generator_main(__doc__, CORPORA / f"{NAME}.jsonl", generate)


if __name__ == "__main__":
    sys.exit(main())
