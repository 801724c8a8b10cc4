"""Build waf/corpora/benign-fresh.jsonl: a second benign corpus, written after the curated exclusions were
frozen, as the held-out benign set of `make waf-efficacy` (benign-modern, whose held-out half was read while
the exclusions were tuned, is tuning data from then on: waf/corpora/README.md).

Its families are benign-modern's, in similar proportions, but none of its texts or templates: the long
descriptions of other pinned packages (those of the block's own .venv, requirements.txt: ansible-core,
kubernetes, Jinja2, hypothesis, requests, rich, click, pydantic, jsonschema, attrs, black, typer, aiohttp,
cryptography, markdown-it-py), other public-API shapes (GitLab, Jira, Linear, Zendesk, Freshdesk, Intercom,
Ghost, Drupal, Strapi, SCIM, Shopify, PagerDuty, Twilio), other search phrases, ticket texts, names, cities,
HTML, GraphQL documents, browser header sets, cookies, form field conventions (Rails, Django), upload file
names, and Kubernetes objects written here rather than taken from the block's renders or the CRDs.

Deterministic: every choice comes from random.Random(SEED) in a fixed order, and the package texts come from
the versions requirements.txt pins (read from .venv's installed metadata, never from the network):

    python -m envoy_waf.fresh           # from waf/, in .venv-waf, with the block's .venv set up (make waf-corpora)

The templates were written before any of them was measured, and are not to be edited because of a verdict:
a changed template makes a new corpus, which has to be measured as a new held-out set (waf/corpora/README.md).
"""

from __future__ import annotations

import base64
import dataclasses
import importlib.metadata
import json
import random
import re
import string
import sys
import urllib.parse
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .traffic import CORPORA, Request, generator_main, make

SEED = 3912
NAME = "benign-fresh"
ROOT = Path(__file__).resolve().parents[3]  # the block's repository
# The block's own virtualenv (requirements.txt pins every version): the package texts are read from there.
VENV = ROOT / ".venv"
PACKAGES = (
    "ansible-core",
    "kubernetes",
    "Jinja2",
    "hypothesis",
    "requests",
    "rich",
    "click",
    "pydantic",
    "jsonschema",
    "attrs",
    "black",
    "typer",
    "aiohttp",
    "cryptography",
    "markdown-it-py",
)

CHROME_LINUX = [
    ("sec-ch-ua", '"Google Chrome";v="143", "Chromium";v="143", "Not A(Brand";v="24"'),
    ("sec-ch-ua-mobile", "?0"),
    ("sec-ch-ua-platform", '"Linux"'),
    (
        "User-Agent",
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Safari/537.36",
    ),
]
CHROME_ANDROID = [
    ("sec-ch-ua", '"Google Chrome";v="143", "Chromium";v="143", "Not A(Brand";v="24"'),
    ("sec-ch-ua-mobile", "?1"),
    ("sec-ch-ua-platform", '"Android"'),
    (
        "User-Agent",
        "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Mobile "
        "Safari/537.36",
    ),
]
SAMSUNG = [
    (
        "User-Agent",
        "Mozilla/5.0 (Linux; Android 15; SAMSUNG SM-S931B) AppleWebKit/537.36 (KHTML, like Gecko) "
        "SamsungBrowser/29.0 Chrome/136.0.0.0 Mobile Safari/537.36",
    )
]
FIREFOX_WIN = [("User-Agent", "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:146.0) Gecko/20100101 Firefox/146.0")]
SAFARI_MAC = [
    (
        "User-Agent",
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
        "Version/26.1 Safari/605.1.15",
    )
]
BROWSERS = {
    "chrome-linux": CHROME_LINUX,
    "chrome-android": CHROME_ANDROID,
    "samsung": SAMSUNG,
    "firefox-win": FIREFOX_WIN,
    "safari-mac": SAFARI_MAC,
}
LANGS = (
    "en-GB,en;q=0.9",
    "es-ES,es;q=0.9,en;q=0.8",
    "it-IT,it;q=0.9,en-US;q=0.8,en;q=0.7",
    "nl-NL,nl;q=0.9,en;q=0.8",
    "pl-PL,pl;q=0.9,en-US;q=0.8,en;q=0.7",
    "ko-KR,ko;q=0.9,en-US;q=0.8",
    "hi-IN,hi;q=0.9,en-IN;q=0.8,en;q=0.7",
    "tr-TR,tr;q=0.9,en;q=0.8",
    "uk-UA,uk;q=0.9,en;q=0.8",
    "vi-VN,vi;q=0.9",
)
CLIENTS = (
    "python-httpx/0.28.1",
    "got (https://github.com/sindresorhus/got)",
    "Java-http-client/21.0.5",
    "Dart/3.6 (dart:io)",
    "Ruby",
    "Faraday v2.12.2",
    "Apache-HttpClient/5.4.1 (Java/21.0.5)",
    "insomnia/11.0.2",
    "HTTPie/3.2.4",
)

NAMES = (
    ("Siobhán", "Ní Bhriain"),
    ("Darragh", "D'Arcy"),
    ("Đorđe", "Petrović"),
    ("Øyvind", "Ødegård"),
    ("Chiamaka", "Nwosu"),
    ("Tāne", "Ngata"),
    ("Nguyễn Thị", "Minh Khai"),
    ("Małgorzata", "Wiśniewska"),
    ("Jürgen", "Müller-Lüdenscheidt"),
    ("Inès", "de La Tour d'Auvergne"),
    ("Oluwaseun", "Adébáyọ̀"),
    ("Ayşe", "Çelik"),
    ("Ζωή", "Καραγιάννη"),
    ("Дмитро", "Коваленко"),
    ("Мария", "Смирнова"),
    ("فاطمة", "الزهراء"),
    ("יעל", "לוי"),
    ("प्रिया", "शर्मा"),
    ("தமிழ்", "செல்வன்"),
    ("王", "芳"),
    ("佐藤", "花子"),
    ("이", "서연"),
    ("สมชาย", "ใจดี"),
    ("Kalinda", "O'Neill-Walsh"),
    ("Pat", "McDonald-O'Hara"),
    ("J.R.R.", "Tolkien Jr."),
    ("Mx. Robin", "Smith (they/them)"),
    ("Hernán", "Núñez de Balboa"),
    ("Þóra", "Jónsdóttir"),
    ("Zsófia", "Szőke"),
    ("Delete", "Table"),
    ("Script", "Tagg"),
)
CITIES = (
    "'s-Hertogenbosch",
    "L'Aquila",
    "Saint-Jean-sur-Richelieu",
    "Hồ Chí Minh",
    "Rīga",
    "Łódź",
    "Göteborg",
    "Coeur d'Alene",
    "Llanfairpwllgwyngyll",
    "Ciudad de México",
    "Kyiv",
    "Thiruvananthapuram",
    "Αθήνα",
    "大阪",
    "부산",
    "الرياض",
    "Ōita",
    "Val-d'Or",
    "Stratford-upon-Avon",
    "Washington, D.C.",
)
STREETS = (
    "12 O'Connell Street",
    "Rue de l'Église 4",
    "Calle de Alcalá, 48",
    "221B Baker St.",
    "Hauptstraße 5/2",
    "1600 Amphitheatre Pkwy #200",
    "ul. Piotrkowska 104 m. 7",
    "Via dell'Indipendenza 8",
)
COMPANIES = ("Macy's", "Ben & Jerry's", "AT&T", "Procter & Gamble", "O'Reilly Media", "Müller GmbH & Co. KG")
SEARCHES = (
    "winter jacket men's",
    "kids' rain boots size 30",
    "git reset --hard undo",
    "docker run -p 8080:80 nginx",
    "C# async await deadlock",
    "1/2 cup to grams",
    "100% merino socks",
    "Ben & Jerry's cookie dough",
    "best laptop under $1000",
    "what does <br> do",
    "rm -rf node_modules windows",
    "SELECT TOP 10 vs LIMIT",
    "JOIN vs WHERE performance",
    "insert into select postgres",
    "how to drop a column",
    "python list comprehension if else",
    "regex for email address",
    "x = x + 1 vs x += 1",
    "5'11\" in cm",
    '24" monitor 144hz',
    "#hashtag ideas",
    "@mention not working",
    "key:value pairs",
    "tar -xzvf meaning",
    "chmod 755 vs 644",
    "sudo apt update error",
    "kubectl get pods -A",
    "npm install --save-dev",
    "import pandas as pd",
    'printf("%d", x)',
    "ping 8.8.8.8 timeout",
    "ipconfig /flushdns",
    "powershell Get-ChildItem -Recurse",
    "echo $PATH mac",
    "nginx location ~ regex",
    "curl -X POST json",
    "Mötley Crüe tickets",
    "crème brûlée recipe",
    "Straße vs Strasse",
    "北京 天气",
    "кофемашина купить",
    "hôtel à Paris pas cher",
    "ścieżka rowerowa Kraków",
    "cheap flights to New York",
    "return policy",
    "gift card balance",
    "track my order",
    "size guide",
    "store opening hours sunday",
    "is it safe to eat raw cookie dough",
    "why is my code not working",
    "javascript:void(0) meaning",
    "<script> tag placement",
    "if (a && b) in java",
    "a || b default value",
    "SELECT * FROM table WHERE id IN (1,2,3)",
    "1 or 2 bedroom apartment",
    "union jack flag",
    "table for 2 tonight",
    "delete account",
)
TICKETS = (
    "Since this morning checkout fails for EU customers. The log says:\n\n"
    "org.postgresql.util.PSQLException: ERROR: duplicate key value violates unique constraint "
    '"orders_pkey"\n  Detail: Key (id)=(88412) already exists.\n\nCan someone reset the sequence? I think '
    "SELECT setval('orders_id_seq', (SELECT MAX(id) FROM orders)); should do it.",
    "The report query times out after 30s:\n\nSELECT c.name, SUM(i.amount) AS total\nFROM invoices i\n"
    "INNER JOIN customers c ON c.id = i.customer_id\nWHERE i.issued_at BETWEEN '2026-01-01' AND '2026-06-30'\n"
    "GROUP BY c.name\nHAVING SUM(i.amount) > 1000\nORDER BY total DESC;",
    "MSSQL: Msg 208, Level 16, State 1, Line 1 Invalid object name 'dbo.Users'. We ran EXEC sp_helpdb and the "
    "database is there.",
    "Please grant read access: GRANT SELECT ON analytics.* TO 'reporting'@'%'; -- ticket approved by Maria",
    'Exception in thread "main" java.lang.IllegalStateException: Connection pool exhausted\n'
    "\tat com.zaxxer.hikari.pool.HikariPool.getConnection(HikariPool.java:213)\n"
    "\tat com.acme.shop.OrderRepository.findById(OrderRepository.java:57)",
    "PHP Fatal error:  Uncaught Error: Call to undefined function mysql_connect() in "
    "/var/www/html/legacy/db.php:12\nStack trace:\n#0 /var/www/html/index.php(4): require_once()\n#1 {main}",
    "nginx returns 502. error.log: connect() failed (111: Connection refused) while connecting to upstream, "
    'client: 10.0.3.7, server: shop.example.com, request: "GET /api/cart HTTP/1.1", upstream: '
    '"http://127.0.0.1:8081/api/cart"',
    "Terraform apply fails:\n\nError: creating S3 Bucket (acme-logs): BucketAlreadyExists\n  with "
    'aws_s3_bucket.logs,\n  on main.tf line 14, in resource "aws_s3_bucket" "logs":',
    'The CSV import breaks on names like O\'Connor and on "quoted, commas". Sample row:\n'
    '42,"O\'Connor, Sean",sean@example.com,"Dublin; Ireland"',
    "Our cron job stopped: `0 3 * * * /usr/local/bin/backup.sh > /var/log/backup.log 2>&1` -- the script "
    "runs fine by hand.",
    "PowerShell: Get-ADUser -Filter {Name -like '*smith*'} | Select-Object Name,Enabled returns nothing since "
    "the DC migration.",
    "Redis: (error) WRONGTYPE Operation against a key holding the wrong kind of value when calling "
    "HGETALL session:8f2c",
    "MongoDB query is slow: db.orders.find({ status: { $in: ['paid', 'shipped'] }, total: { $gt: 100 } })"
    ".sort({ createdAt: -1 })",
    "I think the bug is in this template: {% for item in cart.items %}{{ item.name | escape }}{% endfor %} -- "
    "names with <b> show as bold.",
    "Customer writes: \"I can't log in, it says 'invalid token'\". Browser is Safari 26, cookies enabled.",
    'Elasticsearch: query_shard_exception: Failed to parse query [title:(boots AND "rain") OR brand:Hunter*]',
)
SNIPPETS = (
    "```rust\nfn main() {\n    let v: Vec<i32> = (1..=10).filter(|x| x % 2 == 0).collect();\n"
    '    println!("{:?}", v);\n}\n```',
    '```java\ntry (var conn = ds.getConnection();\n     var ps = conn.prepareStatement("SELECT * FROM users '
    'WHERE email = ?")) {\n  ps.setString(1, email);\n}\n```',
    '```hcl\nresource "aws_iam_policy" "read" {\n  policy = jsonencode({\n    Statement = [{ Effect = "Allow", '
    'Action = ["s3:GetObject"], Resource = "arn:aws:s3:::acme/*" }]\n  })\n}\n```',
    "```dockerfile\nFROM python:3.13-slim\nRUN apt-get update && apt-get install -y --no-install-recommends "
    'curl && rm -rf /var/lib/apt/lists/*\nCMD ["gunicorn", "app:app", "-b", "0.0.0.0:8000"]\n```',
    "```powershell\nGet-Process | Where-Object { $_.CPU -gt 100 } | Stop-Process -Force\n```",
    '```nginx\nlocation ~* \\.(png|jpg|css|js)$ {\n    expires 30d;\n    add_header Cache-Control "public";\n}\n```',
    "```yaml\n{{- if .Values.ingress.enabled }}\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n"
    '  name: {{ include "app.fullname" . }}\n{{- end }}\n```',
    "```ts\nconst res = await fetch(`/api/users/${id}`, { method: 'DELETE', headers: { 'X-CSRF-Token': token } "
    "});\nif (!res.ok) throw new Error(await res.text());\n```",
    "```php\n<?php\n$stmt = $pdo->prepare('SELECT * FROM posts WHERE slug = :slug');\n$stmt->execute(['slug' "
    "=> $_GET['slug']]);\n```",
    '```bash\nfor f in *.log; do gzip -9 "$f" && mv "$f.gz" /archive/; done\n```',
    "```sql\nWITH ranked AS (\n  SELECT id, ROW_NUMBER() OVER (PARTITION BY email ORDER BY id) AS rn FROM users\n)"
    "\nDELETE FROM users WHERE id IN (SELECT id FROM ranked WHERE rn > 1);\n```",
    "```go\nif err := json.NewDecoder(r.Body).Decode(&req); err != nil {\n\thttp.Error(w, err.Error(), "
    "http.StatusBadRequest)\n\treturn\n}\n```",
)
HTML = (
    "<h2>Opening hours</h2><ul><li>Mon&ndash;Fri: 9:00&ndash;18:00</li><li>Sat: 10:00&ndash;14:00</li></ul>",
    '<figure class="wp-block-image"><img src="/media/2026/12/store.jpg" alt="Our new store in L\'Aquila" '
    'width="1200" height="800" loading="lazy"><figcaption>Grand opening</figcaption></figure>',
    '<p>Watch the demo:</p><div class="video"><iframe src="https://player.vimeo.com/video/76979871" '
    'allow="autoplay; fullscreen; picture-in-picture" allowfullscreen></iframe></div>',
    '<blockquote class="twitter-tweet"><p lang="en" dir="ltr">We&#39;re live! 🎉</p>&mdash; Acme (@acme) '
    '<a href="https://twitter.com/acme/status/1">December 1, 2026</a></blockquote>',
    '<table><thead><tr><th scope="col">Plan</th><th scope="col">Price</th></tr></thead><tbody><tr><td>Basic'
    "</td><td>&euro;9/month</td></tr><tr><td>Pro</td><td>&euro;29/month</td></tr></tbody></table>",
    "<p style=\"text-align:center;color:#333;font-family:'Helvetica Neue',Arial,sans-serif\">Free shipping "
    "over &pound;50 &amp; free returns.</p>",
    '<details><summary>How do I return an item?</summary><p>Print the label from <a href="/account/returns">'
    "your account</a> and drop the parcel at any post office.</p></details>",
    '<pre><code class="language-bash">curl -fsSL https://get.example.com | sh\nexample --version</code></pre>',
    '<form action="https://newsletter.example.com/subscribe" method="post"><input type="email" name="email" '
    'placeholder="you@example.com" required><button type="submit">Subscribe</button></form>',
    '<div class="callout callout--warning" data-icon="⚠️"><strong>Note:</strong> prices include 20% VAT.</div>',
    '<p><a href="mailto:press@example.com?subject=Press%20enquiry">press@example.com</a> &middot; '
    '<a href="tel:+441234567890">+44 1234 567890</a></p>',
    '<noscript><img height="1" width="1" style="display:none" '
    'src="https://www.facebook.com/tr?id=123456789&ev=PageView&noscript=1"/></noscript>',
)
ALT_TEXTS = (
    "Team photo at the offsite, Dec '26",
    "Diagram: request -> Envoy -> WAF -> backend",
    "Screenshot of the error dialog",
    "Logo (dark version)",
    "Rechnung November",
    "",
)
FILES = (
    ("IMG_20261103_141502.heic", "image/heic"),
    ("Rechnung_2026-11.pdf", "application/pdf"),
    ("contract (signed).docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    ("Screenshot 2026-12-01 at 09.41.22.png", "image/png"),
    ("export_customers.csv", "text/csv"),
    ("logo.svg", "image/svg+xml"),
    ("meeting-notes.md", "text/markdown"),
    ("backup-2026-12-01.tar.gz", "application/gzip"),
    ("résumé_José_Núñez.pdf", "application/pdf"),
    ("Quartalszahlen Q3.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    ("holiday_video.mp4", "video/mp4"),
    ("favicon.ico", "image/vnd.microsoft.icon"),
)
PASSWORD_WORDS = ("granite", "tulip", "Kaffee", "otoño", "vector", "lunar", "delete", "table", "script", "drop")


def package_texts() -> list[str]:
    """Runs of one to three consecutive blocks of the packages' long descriptions, 60 to 4,000 characters,
    read from .venv's installed metadata (the versions requirements.txt pins)."""
    sites = sorted(VENV.glob("lib/python3*/site-packages"))
    if not sites:
        raise RuntimeError(f"{VENV} has no site-packages: run `make setup` (the block's .venv) first")
    rng = random.Random(SEED)
    out = []
    for dist in PACKAGES:
        found = list(importlib.metadata.distributions(name=dist, path=[str(s) for s in sites]))
        if not found:
            raise RuntimeError(f"{dist} is not installed in {VENV}")
        meta = found[0].metadata
        text = meta.get_payload() or meta.get("Description") or ""  # type: ignore[attr-defined]
        blocks = [b.strip() for b in re.split(r"\n\s*\n(?=\S)", str(text)) if b.strip()]
        i = 0
        while i < len(blocks):
            n = rng.randint(1, 3)
            chunk = "\n\n".join(blocks[i : i + n])
            i += n
            if 60 <= len(chunk) <= 4000:
                out.append(chunk)
    return out


def package_versions() -> dict[str, str]:
    """The version of each package the texts come from (for the README's source list)."""
    sites = [str(s) for s in sorted(VENV.glob("lib/python3*/site-packages"))]
    return {d: next(iter(importlib.metadata.distributions(name=d, path=sites))).version for d in PACKAGES}


def adf(text: str) -> dict[str, Any]:
    """Atlassian Document Format: a paragraph per block, a code block for fenced code."""
    content: list[dict[str, Any]] = []
    for block in re.split(r"\n\s*\n", text):
        if block.startswith("```"):
            lines = block.strip("`").split("\n", 1)
            code = lines[1] if len(lines) > 1 else ""
            node: dict[str, Any] = {"type": "codeBlock", "attrs": {"language": lines[0] or "text"}}
            node["content"] = [{"type": "text", "text": code.rstrip("`").rstrip()}]
            content.append(node)
        elif block.strip():
            content.append({"type": "paragraph", "content": [{"type": "text", "text": block.strip()}]})
    return {"type": "doc", "version": 1, "content": content}


class Gen:
    def __init__(self) -> None:
        self.rng = random.Random(SEED)
        self.out: list[Request] = []
        self.texts = package_texts()

    def add(self, family: str, method: str, path: str, headers: list[tuple[str, str]], body: bytes = b"") -> None:
        rid = f"fresh-{family}-{len(self.out):05d}"
        # Held out whole: no request of this corpus is tuned on (`split` says so in every line).
        req = make(NAME, rid, family, method, path, headers, body, attack=False)
        self.out.append(dataclasses.replace(req, split="heldout"))

    def body(self, doc: Any) -> bytes:
        return json.dumps(doc, ensure_ascii=False).encode()

    # --- helpers -----------------------------------------------------------------------------------------
    def text(self, limit: int = 4000) -> str:
        return self.rng.choice(self.texts)[:limit]

    def uid(self) -> str:
        return str(uuid.UUID(bytes=self.rng.randbytes(16), version=4))

    def person(self) -> dict[str, str]:
        first, last = self.rng.choice(NAMES)
        local = re.sub(r"[^a-z0-9]", "", (first + last).lower().encode("ascii", "ignore").decode()) or "user"
        domain = self.rng.choice(("example.net", "mail.example", "example.co.uk", "example.io"))
        return {"first": first, "last": last, "email": f"{local}.{self.rng.randint(1, 999)}@{domain}"}

    def api_headers(self, host: str, content_type: str | None = "application/json") -> list[tuple[str, str]]:
        h = [("Host", host), ("User-Agent", self.rng.choice(CLIENTS)), ("Accept", "application/json")]
        if self.rng.random() < 0.5:
            h.append(("Authorization", "Bearer " + base64.b64encode(self.rng.randbytes(30)).decode()))
        else:
            h.append(
                ("PRIVATE-TOKEN", "glpat-" + "".join(self.rng.choices(string.ascii_letters + string.digits, k=20)))
            )
        if content_type:
            h.append(("Content-Type", content_type))
        return h

    def browser(self, nav: bool, accept: str | None = None) -> list[tuple[str, str]]:
        name = self.rng.choice(sorted(BROWSERS))
        h = [("Host", "shop.example.org"), *BROWSERS[name]]
        if nav:
            h.append(("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"))
            h.append(("Upgrade-Insecure-Requests", "1"))
        else:
            h.append(("Accept", accept or "*/*"))
        h += [("Accept-Language", self.rng.choice(LANGS)), ("Accept-Encoding", "gzip, deflate, br, zstd")]
        if name != "samsung":
            h += [
                ("Sec-Fetch-Site", self.rng.choice(("same-origin", "cross-site", "none")) if nav else "same-origin"),
                ("Sec-Fetch-Mode", "navigate" if nav else self.rng.choice(("cors", "no-cors"))),
                ("Sec-Fetch-Dest", "document" if nav else self.rng.choice(("empty", "script", "image"))),
            ]
        if self.rng.random() < 0.75:
            h.append(("Cookie", self.cookies()))
        if self.rng.random() < 0.6:
            h.append(("Referer", "https://shop.example.org/" + self.rng.choice(("", "c/outdoor", "p/4411", "help"))))
        if name.startswith("chrome") and self.rng.random() < 0.5:
            h.append(("sec-ch-ua-arch", '"x86"'))
        return h

    def cookies(self) -> str:
        stamp = base64.b64encode(self.rng.randbytes(30)).decode()
        consent = self.rng.choice(
            (
                "OptanonConsent=isGpcEnabled=0&datestamp=Mon+Dec+01+2026+10%3A12%3A01+GMT%2B0100&version=202411.1.0"
                "&groups=C0001%3A1%2CC0002%3A0%2CC0003%3A1%2CC0004%3A0&hosts=&landingPath=NotLandingPage",
                f"CookieConsent={{stamp:%27{stamp}%27%2Cnecessary:true%2Cpreferences:false%2Cstatistics:true"
                "%2Cmarketing:false%2Cmethod:%27explicit%27%2Cver:3%2Cutc:1796000000000%2Cregion:%27de%27}",
                "euconsent-v2=CQJ7x0AQJ7x0AAHABBENBSFgAP_gAAAAAAYgJ9NX_G__bWlr8X73aftkeY1P9_h77sQxBhfJE-4FzLvW_"
                "JwXx2ExNA36tqIKmRIAu3bBIQNlHJDUTVCgaogVryDMak2coTNKJ6BkiFMRM2dYCF5vmQtj-QKY5vp9d3dx2D-t_dv83dzyz8",
                "cmplz_consented_services=; cmplz_policy_id=33; cmplz_marketing=deny; cmplz_statistics=allow",
                "",
            )
        )
        parts = [
            f"_gcl_au=1.1.{self.rng.randint(10**8, 10**9)}.{self.rng.randint(1700000000, 1790000000)}",
            f"_fbp=fb.1.{self.rng.randint(10**12, 10**13)}.{self.rng.randint(10**8, 10**9)}",
            f"ajs_anonymous_id=%22{self.uid()}%22",
            f"sid={base64.urlsafe_b64encode(self.rng.randbytes(32)).decode().rstrip('=')}",
            f"lang={self.rng.choice(('en', 'es', 'pl', 'tr'))}",
        ]
        if consent:
            parts.insert(2, consent)
        if self.rng.random() < 0.3:
            parts.append(f"cart_id={self.uid()}")
        return "; ".join(parts)

    def password(self) -> str:
        style = self.rng.random()
        if style < 0.35:  # Bitwarden / 1Password style
            alphabet = string.ascii_letters + string.digits + "!@#$%^&*"
            return "".join(self.rng.choices(alphabet, k=self.rng.choice((16, 24, 32))))
        if style < 0.6:  # a passphrase with a separator and a digit
            words = self.rng.sample(PASSWORD_WORDS, 4)
            return self.rng.choice(("-", ".", " ", "_")).join(words) + str(self.rng.randint(0, 9))
        if style < 0.8:  # Apple's strong passwords
            parts = ["".join(self.rng.choices(string.ascii_lowercase + string.digits, k=6)) for _ in range(3)]
            return "-".join(parts).capitalize()
        return self.rng.choice(
            ("letmein!", "Dragon_2026", "qwerty;123", "I'm-the-admin", "P4ss\\word", '"quoted"pass', "1234 5678")
        )

    # --- families ----------------------------------------------------------------------------------------
    def issues(self, n: int) -> None:
        for i in range(n):
            text = self.text()
            if self.rng.random() < 0.35:
                text += "\n\n" + self.rng.choice(SNIPPETS)
            title = text.splitlines()[0].lstrip("#=*- ")[:90] or "Question"
            kind = i % 5
            host = "gitlab.example.com"
            if kind == 0:  # GitLab: a new issue
                doc: dict[str, Any] = {"title": title, "description": text, "labels": "bug,needs-triage"}
                path = f"/api/v4/projects/{self.rng.randint(1, 400)}/issues"
            elif kind == 1:  # GitLab: a note on an issue or merge request
                doc = {"body": text, "internal": self.rng.random() < 0.2}
                what = self.rng.choice(("issues", "merge_requests"))
                path = f"/api/v4/projects/{self.rng.randint(1, 400)}/{what}/{self.rng.randint(1, 900)}/notes"
            elif kind == 2:  # Jira Cloud: a new issue, its description in ADF
                host = "acme.atlassian.net"
                doc = {
                    "fields": {
                        "project": {"key": self.rng.choice(("OPS", "SHOP", "PLAT"))},
                        "summary": title,
                        "issuetype": {"name": self.rng.choice(("Bug", "Task", "Story"))},
                        "description": adf(text),
                        "labels": ["customer-reported"],
                    }
                }
                path = "/rest/api/3/issue"
            elif kind == 3:  # Jira Cloud: a comment
                host = "acme.atlassian.net"
                doc = {"body": adf(text)}
                path = f"/rest/api/3/issue/OPS-{self.rng.randint(1, 3000)}/comment"
            else:  # Linear: GraphQL issueCreate
                host = "api.linear.app"
                doc = {
                    "query": "mutation IssueCreate($input: IssueCreateInput!) { issueCreate(input: $input) { "
                    "success issue { id identifier url } } }",
                    "variables": {"input": {"teamId": self.uid(), "title": title, "description": text}},
                }
                path = "/graphql"
            self.add("api-issue", "POST" if kind != 1 or i % 7 else "PUT", path, self.api_headers(host), self.body(doc))

    def tickets(self, n: int) -> None:
        for i in range(n):
            text = self.rng.choice(TICKETS + SNIPPETS)
            p = self.person()
            if self.rng.random() < 0.4:
                text = f"Hello,\n\n{text}\n\nBest regards\n{p['first']}"
            subject = text.splitlines()[0][:70]
            kind = i % 3
            if kind == 0:  # Zendesk
                doc: dict[str, Any] = {
                    "ticket": {
                        "subject": subject,
                        "comment": {"body": text},
                        "priority": self.rng.choice(("low", "normal", "high", "urgent")),
                        "requester": {"name": f"{p['first']} {p['last']}", "email": p["email"]},
                    }
                }
                path, host = "/api/v2/tickets.json", "acme.zendesk.com"
            elif kind == 1:  # Freshdesk: the description is HTML
                html = "<div>" + text.replace("&", "&amp;").replace("<", "&lt;").replace("\n", "<br>") + "</div>"
                doc = {"subject": subject, "description": html, "email": p["email"], "priority": 2, "status": 2}
                path, host = "/api/v2/tickets", "acme.freshdesk.com"
            else:  # Intercom: a user's message
                doc = {"from": {"type": "user", "id": self.uid()}, "body": text}
                path, host = "/conversations", "api.intercom.io"
            self.add("api-ticket", "POST", path, self.api_headers(host), self.body(doc))

    def cms(self, n: int) -> None:
        for i in range(n):
            html = "".join(self.rng.sample(HTML, self.rng.randint(1, 3)))
            if self.rng.random() < 0.4:
                para = self.text(1500).split("\n\n")[0]
                html += "<p>" + para.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") + "</p>"
            title = self.rng.choice(("Winter sale", "Nuestra historia", "FAQ: returns & refunds", "Kontakt", "Jobs"))
            kind = i % 4
            if kind == 0:  # Ghost Admin API
                doc: dict[str, Any] = {"posts": [{"title": title, "html": html, "status": "draft", "tags": ["news"]}]}
                self.add(
                    "cms-html",
                    "POST",
                    "/ghost/api/admin/posts/?source=html",
                    self.api_headers("blog.example.org"),
                    self.body(doc),
                )
            elif kind == 1:  # Drupal JSON:API
                doc = {
                    "data": {
                        "type": "node--article",
                        "attributes": {"title": title, "body": {"value": html, "format": "basic_html"}},
                    }
                }
                self.add(
                    "cms-html",
                    "POST",
                    "/jsonapi/node/article",
                    self.api_headers("cms.example.org", "application/vnd.api+json"),
                    self.body(doc),
                )
            elif kind == 2:  # Strapi
                doc = {"data": {"title": title, "content": html, "excerpt": title + "."}}
                self.add(
                    "cms-html",
                    "PUT",
                    f"/api/articles/{self.rng.randint(1, 300)}",
                    self.api_headers("cms.example.org"),
                    self.body(doc),
                )
            else:  # WordPress's classic editor (post.php)
                form = {
                    "_wpnonce": "".join(self.rng.choices("0123456789abcdef", k=10)),
                    "action": "editpost",
                    "post_ID": str(self.rng.randint(1, 5000)),
                    "post_title": title,
                    "content": html,
                    "post_status": "draft",
                }
                headers = [
                    *self.browser(True),
                    ("Content-Type", "application/x-www-form-urlencoded"),
                    ("Origin", "https://shop.example.org"),
                ]
                self.add("cms-html", "POST", "/wp-admin/post.php", headers, urllib.parse.urlencode(form).encode())

    def search(self, n: int) -> None:
        for _ in range(n):
            q = self.rng.choice(SEARCHES)
            if self.rng.random() < 0.25:
                words = re.findall(r"[\w'.-]{3,}", self.text())
                if words:
                    q = " ".join(self.rng.sample(words, min(len(words), self.rng.randint(2, 4))))
            draw = self.rng.random()
            name, base = ("q", "/search") if draw < 0.75 else ("query", "/api/v2/search") if draw < 0.9 else ("s", "/")
            params = {name: q}
            if self.rng.random() < 0.4:
                params["page"] = str(self.rng.randint(1, 9))
            if self.rng.random() < 0.3:
                params["lang"] = self.rng.choice(("en", "es", "pl"))
            path = base + "?" + urllib.parse.urlencode(params, quote_via=urllib.parse.quote)
            self.add("search", "GET", path, self.browser(name != "query"))

    def users(self, n: int) -> None:
        abouts = (
            "Full-stack dev (TS/Go). Opinions my own.",
            "Maman, cycliste & amatrice de café ☕",
            "I write SQL for a living -- DROP me a line!",
            "Tech lead @ Acme; ex-Contoso",
            "<3 open source",
            "Rust 🦀 | Kubernetes | Berlin",
            "",
        )
        for i in range(n):
            p = self.person()
            kind = i % 3
            if kind == 0:  # a customer record, camelCase
                doc: dict[str, Any] = {
                    "firstName": p["first"],
                    "lastName": p["last"],
                    "email": p["email"],
                    "phone": f"+{self.rng.randint(1, 99)} {self.rng.randint(100, 999)} {self.rng.randint(1000, 9999)}",
                    "company": self.rng.choice(COMPANIES),
                    "address": {
                        "line1": self.rng.choice(STREETS),
                        "city": self.rng.choice(CITIES),
                        "postalCode": str(self.rng.randint(1000, 99999)),
                        "country": self.rng.choice(("IE", "IT", "NL", "PL", "VN", "TR", "UA")),
                    },
                }
                self.add("api-user", "POST", "/v1/customers", self.api_headers("api.example.org"), self.body(doc))
            elif kind == 1:  # a profile update
                doc = {"displayName": f"{p['first']} {p['last']}", "about": self.rng.choice(abouts)}
                self.add(
                    "api-user",
                    "PATCH",
                    "/v1/me/profile?fields=displayName,about",
                    self.api_headers("api.example.org"),
                    self.body(doc),
                )
            else:  # SCIM 2.0 provisioning (an identity provider creating a user)
                doc = {
                    "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
                    "userName": p["email"],
                    "name": {
                        "givenName": p["first"],
                        "familyName": p["last"],
                        "formatted": f"{p['first']} {p['last']}",
                    },
                    "emails": [{"value": p["email"], "type": "work", "primary": True}],
                    "active": True,
                }
                self.add(
                    "api-user",
                    "POST",
                    "/scim/v2/Users",
                    self.api_headers("idp-sync.example.org", "application/scim+json"),
                    self.body(doc),
                )

    def kubernetes(self, n: int) -> None:
        headers = [
            ("Host", "kube.example.org"),
            ("User-Agent", "kubectl/v1.35.0 (darwin/arm64) kubernetes/66452049"),
            ("Accept", "application/json"),
            ("Content-Type", "application/json"),
            ("Kubectl-Command", "kubectl create"),
        ]
        apps = ("checkout", "catalog", "search-api", "billing", "media-proxy", "notifier")
        for i in range(n):
            app = self.rng.choice(apps)
            ns = self.rng.choice(("prod", "staging", "team-blue"))
            meta = {"name": f"{app}-{i}", "namespace": ns, "labels": {"app.kubernetes.io/name": app}}
            kind = i % 7
            if kind == 0:
                obj: dict[str, Any] = {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "metadata": meta,
                    "spec": {
                        "replicas": self.rng.randint(2, 6),
                        "selector": {"matchLabels": {"app.kubernetes.io/name": app}},
                        "template": {
                            "metadata": {"labels": {"app.kubernetes.io/name": app}},
                            "spec": {
                                "containers": [
                                    {
                                        "name": app,
                                        "image": f"registry.example.org/{app}:1.{self.rng.randint(0, 40)}.0",
                                        "args": ["--listen=:8080", "--log-format=json"],
                                        "env": [
                                            {"name": "DATABASE_URL", "value": f"postgres://{app}@db:5432/{app}"},
                                            {"name": "JAVA_OPTS", "value": "-Xmx512m -XX:+UseG1GC"},
                                        ],
                                        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}},
                                    }
                                ]
                            },
                        },
                    },
                }
                path = f"/apis/apps/v1/namespaces/{ns}/deployments"
            elif kind == 1:
                obj = {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": meta,
                    "data": {
                        "nginx.conf": "server {\n  listen 8080;\n  location / {\n    proxy_pass http://127.0.0.1:3000;\n"
                        "    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n  }\n}\n",
                        "application.properties": f"spring.datasource.url=jdbc:postgresql://db:5432/{app}\n"
                        "spring.jpa.hibernate.ddl-auto=validate\nlogging.level.root=INFO\n",
                    },
                }
                path = f"/api/v1/namespaces/{ns}/configmaps"
            elif kind == 2:
                obj = {
                    "apiVersion": "batch/v1",
                    "kind": "CronJob",
                    "metadata": meta,
                    "spec": {
                        "schedule": "15 2 * * *",
                        "jobTemplate": {
                            "spec": {
                                "template": {
                                    "spec": {
                                        "restartPolicy": "OnFailure",
                                        "containers": [
                                            {
                                                "name": "backup",
                                                "image": "postgres:17",
                                                "command": ["/bin/sh", "-c"],
                                                "args": [
                                                    f"pg_dump -h db -U {app} {app} | gzip > /backup/{app}-$(date "
                                                    "+%F).sql.gz && find /backup -mtime +7 -delete"
                                                ],
                                            }
                                        ],
                                    }
                                }
                            }
                        },
                    },
                }
                path = f"/apis/batch/v1/namespaces/{ns}/cronjobs"
            elif kind == 3:
                obj = {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "metadata": meta,
                    "spec": {
                        "selector": {"app.kubernetes.io/name": app},
                        "ports": [{"name": "http", "port": 80, "targetPort": 8080}],
                    },
                }
                path = f"/api/v1/namespaces/{ns}/services"
            elif kind == 4:
                obj = {
                    "apiVersion": "monitoring.coreos.com/v1",
                    "kind": "PrometheusRule",
                    "metadata": meta,
                    "spec": {
                        "groups": [
                            {
                                "name": app,
                                "rules": [
                                    {
                                        "alert": "HighErrorRate",
                                        "expr": f'sum(rate(http_requests_total{{job="{app}",code=~"5.."}}[5m])) / '
                                        f'sum(rate(http_requests_total{{job="{app}"}}[5m])) > 0.05',
                                        "for": "10m",
                                        "annotations": {"summary": "{{ $labels.job }} returns 5xx for > 5%"},
                                    }
                                ],
                            }
                        ]
                    },
                }
                path = f"/apis/monitoring.coreos.com/v1/namespaces/{ns}/prometheusrules"
            elif kind == 5:
                obj = {
                    "apiVersion": "networking.k8s.io/v1",
                    "kind": "NetworkPolicy",
                    "metadata": meta,
                    "spec": {
                        "podSelector": {"matchLabels": {"app.kubernetes.io/name": app}},
                        "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"team": "edge"}}}]}],
                        "policyTypes": ["Ingress"],
                    },
                }
                path = f"/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies"
            else:
                obj = {
                    "apiVersion": "v1",
                    "kind": "Secret",
                    "metadata": meta,
                    "type": "Opaque",
                    "stringData": {
                        "config.yaml": "smtp:\n  host: smtp.example.org\n  user: 'mailer@example.org'\n  password: "
                        + "".join(self.rng.choices(string.ascii_letters + string.digits + "!#%&*+", k=24))
                        + "\n"
                    },
                }
                path = f"/api/v1/namespaces/{ns}/secrets"
            self.add("k8s-object", "POST", path + "?fieldManager=kubectl-create", headers, self.body(obj))

    def graphql(self, n: int) -> None:
        for i in range(n):
            kind = i % 4
            p = self.person()
            if kind == 0:  # a storefront search with Shopify's query syntax
                term = self.rng.choice(("title:boots AND tag:sale", "product_type:Jacket OR vendor:Acme", "price:<50"))
                doc: dict[str, Any] = {
                    "query": "query Products($first: Int!, $query: String) { products(first: $first, query: $query) "
                    "{ edges { node { id title handle priceRange { minVariantPrice { amount } } } } } }",
                    "variables": {"first": 24, "query": term},
                }
            elif kind == 1:  # a product review
                doc = {
                    "query": "mutation Review($input: ReviewInput!) { reviewCreate(input: $input) { review { id } "
                    "userErrors { field message } } }",
                    "variables": {
                        "input": {
                            "productId": "gid://shop/Product/" + str(self.rng.randint(10**9, 10**10)),
                            "rating": self.rng.randint(1, 5),
                            "body": self.text(1200).split("\n\n")[0],
                            "author": f"{p['first']} {p['last'][:1]}.",
                        }
                    },
                }
            elif kind == 2:  # GitLab's GraphQL: a note
                doc = {
                    "query": "mutation CreateNote($noteableId: NoteableID!, $body: String!) { createNote(input: "
                    "{noteableId: $noteableId, body: $body}) { note { id } errors } }",
                    "variables": {
                        "noteableId": f"gid://gitlab/Issue/{self.rng.randint(1, 99999)}",
                        "body": self.text(2000),
                    },
                }
            else:  # a customer's account
                doc = {
                    "query": "mutation Update($customer: CustomerUpdateInput!) { customerUpdate(customer: $customer) "
                    "{ customer { id firstName lastName } } }",
                    "variables": {
                        "customer": {"firstName": p["first"], "lastName": p["last"], "acceptsMarketing": False}
                    },
                    "operationName": "Update",
                }
            self.add(
                "graphql", "POST", "/api/2026-10/graphql.json", self.api_headers("shop.example.org"), self.body(doc)
            )

    def navigations(self, n: int) -> None:
        pages = (
            "/",
            "/c/outdoor/jackets?sort=price_asc&size=M&size=L",
            "/p/4411/trail-jacket-women-s",
            "/es/ofertas/invierno",
            "/pl/koszyk",
            "/tr/hesabım/siparişler",  # noqa: RUF001 (Turkish dotless i, on purpose)
            "/help/returns#label",
            "/account/addresses/edit?id=12",
            "/wishlist?share=7f3a9c",
            "/blog/how-to-wax-a-jacket",
            "/stores?lat=52.2297&lng=21.0122&radius=25km",
            "/checkout/confirm?order=SO-2026-004411",
            "/auth/callback?code=ya29.a0AfB_byC&state=eyJyZXR1cm4iOiIvIn0&scope=openid%20email",
            "/compare?ids=4411,4412,4415",
            "/gift-cards",
        )
        assets = (
            "/assets/index-B7x1cQ2e.js",
            "/assets/vendor-DZ4hAq9P.css",
            "/fonts/Inter-Variable.woff2",
            "/img/products/4411/main@3x.avif",
            "/manifest.webmanifest",
            "/sw.js",
        )
        xhrs = (
            "/api/v2/products?ids=4411,4412&fields=name,price,stock",
            "/api/v2/cart",
            "/api/v2/recommendations?for=4411&limit=8",
            "/api/v2/stores/nearby?lat=41.3874&lng=2.1686",
            "/api/v2/me",
        )
        for i in range(n):
            kind = i % 8
            if kind < 4:
                page = self.rng.choice(pages)
                path = urllib.parse.quote(page, safe="/?&=#%@.-_~,").split("#")[0]
                self.add("browser-nav", "GET", path, self.browser(True))
            elif kind == 4:
                self.add("browser-asset", "GET", self.rng.choice(assets), self.browser(False))
            elif kind in (5, 6):
                self.add("browser-xhr", "GET", self.rng.choice(xhrs), self.browser(False, "application/json"))
            else:  # an analytics event or a cart update, as a page's JavaScript sends them
                if self.rng.random() < 0.5:
                    doc: dict[str, Any] = {
                        "event": self.rng.choice(("Product Viewed", "Added to Cart", "Checkout Started")),
                        "properties": {"product_id": "4411", "price": 129.95, "currency": "EUR", "url": "/p/4411"},
                        "anonymousId": self.uid(),
                        "context": {"page": {"title": "Trail jacket (women's) | Shop", "referrer": ""}},
                    }
                    path = "/api/v2/track"
                else:
                    doc = {"lineItems": [{"variantId": str(self.rng.randint(1000, 9999)), "quantity": 1}], "note": ""}
                    path = "/api/v2/cart/lines"
                headers = [
                    *self.browser(False, "application/json"),
                    ("Content-Type", "application/json"),
                    ("Origin", "https://shop.example.org"),
                ]
                self.add("browser-xhr", "POST", path, headers, self.body(doc))

    def forms(self, n: int) -> None:
        for i in range(n):
            p = self.person()
            token = base64.b64encode(self.rng.randbytes(32)).decode()
            kind = i % 4
            if kind == 0:  # Rails (Devise): sign-up
                password = self.password()
                fields = {
                    "authenticity_token": token,
                    "user[first_name]": p["first"],
                    "user[last_name]": p["last"],
                    "user[email]": p["email"],
                    "user[password]": password,
                    "user[password_confirmation]": password,
                    "commit": "Sign up",
                }
                path = "/users"
            elif kind == 1:  # Rails (Devise): login
                fields = {
                    "authenticity_token": token,
                    "user[email]": p["email"],
                    "user[password]": self.password(),
                    "user[remember_me]": "1",
                    "commit": "Log in",
                }
                path = "/users/sign_in"
            elif kind == 2:  # Django: sign-up
                password = self.password()
                fields = {
                    "csrfmiddlewaretoken": token,
                    "username": re.sub(r"[^a-z0-9]", "", p["email"].split("@")[0]) or "user",
                    "email": p["email"],
                    "password1": password,
                    "password2": password,
                }
                path = "/accounts/signup/"
            else:  # a password change
                new = self.password()
                fields = {"csrf": token, "current_password": self.password(), "new_password": new, "confirm": new}
                path = "/account/security/password"
            headers = [
                *self.browser(True),
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Origin", "https://shop.example.org"),
            ]
            self.add("form", "POST", path, headers, urllib.parse.urlencode(fields).encode())

    def uploads(self, n: int) -> None:
        for _ in range(n):
            name, ctype = self.rng.choice(FILES)
            content = self.file_bytes(name)
            boundary = "----geckoformboundary" + self.rng.randbytes(16).hex()
            field = self.rng.choice(("attachment", "upload", "files[]"))
            alt = self.rng.choice(ALT_TEXTS)
            body = (
                (
                    f'--{boundary}\r\nContent-Disposition: form-data; name="alt"\r\n\r\n{alt}\r\n'
                    f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; filename="{name}"\r\n'
                    f"Content-Type: {ctype}\r\n\r\n"
                ).encode()
                + content
                + f"\r\n--{boundary}--\r\n".encode()
            )
            headers = [
                *self.browser(False, "application/json"),
                ("Content-Type", f"multipart/form-data; boundary={boundary}"),
                ("Origin", "https://shop.example.org"),
            ]
            self.add("upload", "POST", self.rng.choice(("/api/v2/uploads", "/media/upload")), headers, body)

    def file_bytes(self, name: str) -> bytes:
        size = self.rng.randint(300, 8000)
        if name.endswith(".heic"):
            return b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + self.rng.randbytes(size)
        if name.endswith(".png"):
            return b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + self.rng.randbytes(size)
        if name.endswith(".mp4"):
            return b"\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41" + self.rng.randbytes(size)
        if name.endswith(".ico"):
            return b"\x00\x00\x01\x00\x01\x00\x10\x10" + self.rng.randbytes(size)
        if name.endswith(".gz"):
            return b"\x1f\x8b\x08\x00" + self.rng.randbytes(size)
        if name.endswith(".pdf"):
            return b"%PDF-1.6\n%\xe2\xe3\xcf\xd3\n" + self.rng.randbytes(size) + b"\n%%EOF\n"
        if name.endswith((".docx", ".xlsx")):
            return b"PK\x03\x04\x14\x00\x06\x00\x08\x00" + self.rng.randbytes(size)
        if name.endswith(".svg"):
            return (
                b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 120 40"><title>Acme</title>'
                b'<path d="M10 30 L20 10 L30 30 Z" fill="#e33"/><text x="40" y="28" font-family="Inter">Acme</text>'
                b"</svg>"
            )
        if name.endswith(".csv"):
            rows = ["customer_id;name;city;revenue"] + [
                f"{i};{' '.join(self.rng.choice(NAMES))};{self.rng.choice(CITIES)};{self.rng.randint(1, 99999)},00"
                for i in range(self.rng.randint(5, 50))
            ]
            return "\n".join(rows).encode()
        return self.text().encode()

    def webhooks(self, n: int) -> None:
        for i in range(n):
            kind = i % 5
            p = self.person()
            content_type = "application/json"
            doc: dict[str, Any] = {}
            if kind == 0:  # GitLab push
                doc = {
                    "object_kind": "push",
                    "ref": "refs/heads/main",
                    "checkout_sha": self.rng.randbytes(20).hex(),
                    "user_name": f"{p['first']} {p['last']}",
                    "project": {"path_with_namespace": "acme/shop", "web_url": "https://gitlab.example.com/acme/shop"},
                    "commits": [
                        {
                            "id": self.rng.randbytes(20).hex(),
                            "message": self.text(600).split("\n\n")[0],
                            "author": {"name": f"{p['first']} {p['last']}", "email": p["email"]},
                        }
                    ],
                }
                headers = [("X-Gitlab-Event", "Push Hook"), ("X-Gitlab-Token", self.rng.randbytes(16).hex())]
                path = "/hooks/gitlab"
            elif kind == 1:  # GitLab issue
                doc = {
                    "object_kind": "issue",
                    "user": {"name": f"{p['first']} {p['last']}", "username": "jdoe"},
                    "object_attributes": {
                        "iid": self.rng.randint(1, 900),
                        "title": self.text(100).splitlines()[0],
                        "description": self.text(),
                        "action": "open",
                    },
                }
                headers = [("X-Gitlab-Event", "Issue Hook"), ("X-Gitlab-Token", self.rng.randbytes(16).hex())]
                path = "/hooks/gitlab"
            elif kind == 2:  # Shopify orders/create
                doc = {
                    "id": self.rng.randint(10**12, 10**13),
                    "email": p["email"],
                    "note": self.rng.choice(("", "Please leave at the neighbour's door", "Gift -- no prices please")),
                    "customer": {"first_name": p["first"], "last_name": p["last"]},
                    "shipping_address": {"address1": self.rng.choice(STREETS), "city": self.rng.choice(CITIES)},
                    "total_price": f"{self.rng.randint(10, 900)}.{self.rng.randint(0, 99):02d}",
                }
                headers = [
                    ("X-Shopify-Topic", "orders/create"),
                    ("X-Shopify-Hmac-Sha256", base64.b64encode(self.rng.randbytes(32)).decode()),
                ]
                path = "/hooks/shopify"
            elif kind == 3:  # PagerDuty v3
                doc = {
                    "event": {
                        "id": self.uid(),
                        "event_type": "incident.triggered",
                        "data": {
                            "type": "incident",
                            "title": self.rng.choice(
                                (
                                    "CPU > 90% on db-primary",
                                    "5xx rate > 5% for checkout",
                                    "Disk /var/lib/postgresql 95% full",
                                    "Certificate for *.example.org expires in 7 days",
                                )
                            ),
                            "urgency": "high",
                            "html_url": "https://acme.pagerduty.com/incidents/Q1ABC",
                        },
                    }
                }
                headers = [("X-PagerDuty-Signature", "v1=" + self.rng.randbytes(32).hex())]
                path = "/hooks/pagerduty"
            else:  # Twilio: an inbound SMS, form-encoded
                content_type = "application/x-www-form-urlencoded"
                form = {
                    "MessageSid": "SM" + self.rng.randbytes(16).hex(),
                    "From": f"+1555{self.rng.randint(1000000, 9999999)}",
                    "To": "+15550001111",
                    "Body": self.rng.choice(
                        ("Running 10 min late, sorry!", "STOP", "Yes, Tuesday 3pm works", "Where is my order #4411?")
                    ),
                    "NumMedia": "0",
                }
                headers = [("X-Twilio-Signature", base64.b64encode(self.rng.randbytes(20)).decode())]
                path = "/hooks/twilio/sms"
            body = urllib.parse.urlencode(form).encode() if kind == 4 else self.body(doc)
            base = [
                ("Host", "hooks.example.org"),
                (
                    "User-Agent",
                    (
                        "GitLab/18.6.0",
                        "GitLab/18.6.0",
                        "Shopify-Captain-Hook",
                        "PagerDuty-Webhook/V3.0",
                        "TwilioProxy/1.1",
                    )[kind],
                ),
                ("Accept", "*/*"),
                ("Content-Type", content_type),
            ]
            self.add("webhook", "POST", path, base + headers, body)


def generate() -> Iterator[Request]:
    g = Gen()
    g.issues(160)
    g.tickets(80)
    g.cms(80)
    g.search(160)
    g.users(105)
    g.kubernetes(140)
    g.graphql(80)
    g.navigations(200)
    g.forms(105)
    g.uploads(65)
    g.webhooks(80)
    yield from g.out


def main() -> int:
    return generator_main(__doc__, CORPORA / f"{NAME}.jsonl", generate)


if __name__ == "__main__":
    sys.exit(main())
