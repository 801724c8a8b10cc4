"""Build waf/corpora/benign-third.jsonl: a third benign corpus, written before the WAF parsed `+json` media types
as JSON and before anything was measured on it, as a second held-out benign set of `make waf-efficacy`.

It is different in kind from benign-modern and benign-fresh, not another draw of their families: other
requests people's tools send (OAuth 2.0 / OpenID Connect flows, OpenAPI and AsyncAPI documents sent to an API
registry, Terraform JSON and Terraform Cloud variables, Argo CD applications with Helm values, CI
configurations sent to GitLab's lint API, Buildkite and CircleCI, chat messages with code in Mattermost,
Matrix, Discord and Zulip, ndjson and CSV bulk uploads, GraphQL mutations of Hasura and Saleor, the S3 API
with its XML bodies and signed URLs, JSON:API storefront calls, kubectl patches, webhooks of Sentry,
Bitbucket, SendGrid, Mailgun, Alertmanager and CloudEvents, searches in many languages under other parameter
names, pages of other sites with other browsers, and Laravel, Symfony and ASP.NET forms). Every text here was
written for this corpus (no package descriptions, none of the other corpora's templates).

Media types as APIs send them: most JSON bodies are application/json; the `+json` types (JSON:API, kubectl's
merge, strategic-merge and JSON patches, CloudEvents, Terraform Cloud's JSON:API) are about one JSON body in
eight, about 6% of the corpus (62 of 1,066), and a few bodies are types the CRS does not list (application/x-ndjson,
text/csv, application/octet-stream, application/apply-patch+yaml), as real clients send them.

Deterministic: every choice comes from random.Random(SEED) in a fixed order; nothing is read from outside:

    python -m envoy_waf.third           # from waf/, in .venv-waf (make waf-corpora)

The templates were written before any of them was measured, and are not to be edited because of a verdict:
a changed template makes a new corpus, which has to be measured as a new held-out set (waf/corpora/README.md).
"""

from __future__ import annotations

import base64
import hashlib
import json
import string
import sys
import urllib.parse
from collections.abc import Iterator
from typing import Any

from .traffic import CORPORA, HeldOutGen, Request, generator_main

SEED = 4040
NAME = "benign-third"

# --- clients -----------------------------------------------------------------------------------------------
EDGE_WIN = [
    ("sec-ch-ua", '"Microsoft Edge";v="142", "Chromium";v="142", "Not_A Brand";v="99"'),
    ("sec-ch-ua-mobile", "?0"),
    ("sec-ch-ua-platform", '"Windows"'),
    (
        "User-Agent",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 "
        "Safari/537.36 Edg/142.0.0.0",
    ),
]
FIREFOX_ANDROID = [("User-Agent", "Mozilla/5.0 (Android 15; Mobile; rv:145.0) Gecko/145.0 Firefox/145.0")]
SAFARI_IOS = [
    (
        "User-Agent",
        "Mozilla/5.0 (iPhone; CPU iPhone OS 26_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
        "Version/26.1 Mobile/15E148 Safari/604.1",
    )
]
BRAVE_MAC = [
    ("sec-ch-ua", '"Brave";v="142", "Chromium";v="142", "Not_A Brand";v="99"'),
    ("sec-ch-ua-mobile", "?0"),
    ("sec-ch-ua-platform", '"macOS"'),
    (
        "User-Agent",
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 "
        "Safari/537.36",
    ),
]
OPERA_WIN = [
    (
        "User-Agent",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/141.0.0.0 "
        "Safari/537.36 OPR/126.0.0.0",
    )
]
BROWSERS = {"edge": EDGE_WIN, "firefox-android": FIREFOX_ANDROID, "safari-ios": SAFARI_IOS, "brave": BRAVE_MAC}
BROWSERS["opera"] = OPERA_WIN
LANGUAGES = (
    "de-AT,de;q=0.9,en;q=0.6",
    "fr-CA,fr;q=0.9,en-CA;q=0.8,en;q=0.7",
    "pt-BR,pt;q=0.9,en-US;q=0.8,en;q=0.7",
    "ja,en-US;q=0.9,en;q=0.8",
    "zh-TW,zh;q=0.9,en;q=0.8",
    "ar-SA,ar;q=0.9,en;q=0.8",
    "he-IL,he;q=0.9,en;q=0.8",
    "sv-SE,sv;q=0.9,en;q=0.8",
    "cs-CZ,cs;q=0.9",
    "id-ID,id;q=0.9,en;q=0.8",
)
TOOLS = (
    "kubectl/v1.35.0 (linux/amd64) kubernetes/66452b3",
    "Terraform/1.14.2 (+https://www.terraform.io) go-tfe/1.95.0",
    "argocd-client/v3.2.1",
    "okhttp/5.2.1",
    "axios/1.13.2",
    "node-fetch/3.3.2",
    "Go-http-client/2.0",
    "aws-sdk-js/3.940.0 ua/2.1 os/linux lang/js md/nodejs#22.12.0 api/s3#3.940.0",
    "Boto3/1.41.5 md/Botocore#1.41.5 ua/2.1 os/linux#6.12 md/arch#x86_64 lang/python#3.13.1",
    "PostmanRuntime/7.49.1",
    "Bruno/2.14.0",
    "reqwest/0.12.24",
)

# --- texts, written for this corpus -----------------------------------------------------------------------
CHAT = (
    "Moin! Hat jemand eine Idee, warum `docker compose up` bei mir mit exit code 137 abbricht? RAM ist genug da.",
    "deploy is green on staging, promoting to prod after lunch 🍜",
    "Le build casse depuis ce matin : `npm ERR! ERESOLVE unable to resolve dependency tree`. Quelqu'un a touché "
    "au package-lock ?",
    "can someone review my PR? it's the one that renames `user_id` to `account_id` in the events table",
    "Olá pessoal, a fila do RabbitMQ está com 40 mil mensagens paradas. Alguém reiniciou o consumer?",
    "リリースノートを更新しました。確認をお願いします🙏",
    "Try this:\n```python\n"
    "with open(path, encoding='utf-8') as fh:\n    rows = [line.split('\\t') for line in fh]\n```",
    "the query planner picks a seq scan here:\n```sql\nEXPLAIN ANALYZE SELECT * FROM events WHERE created_at > "
    "now() - interval '1 day' AND tenant_id = 42;\n```\nindex on (tenant_id, created_at) exists though",
    "¿Alguien sabe cómo forzar HTTP/2 en el ingress? El cliente dice que sigue viendo HTTP/1.1",
    "rollback done, error rate back to 0.2%. postmortem doc tomorrow",
    "В логах вижу `context deadline exceeded` при обращении к платёжному шлюзу, таймаут 5s. Увеличим до 10?",  # noqa: RUF001 (Cyrillic, on purpose)
    "I used `git rebase -i HEAD~5` and squashed the fixups, force-pushed with --force-with-lease",
    "Regex that finally worked for the invoice numbers: `^INV-\\d{4}-[A-Z]{2}$`",
    "the cron is `*/15 * * * *` but it fires twice because both replicas run it 🤦",
    "見積もりの件、来週の月曜日でも大丈夫ですか？",  # noqa: RUF001 (a Japanese full-width question mark, on purpose)
    "lgtm, just one nit: use `Path.read_text()` instead of open().read()",
    "who owns the `payments-eu` namespace? its pods keep getting OOMKilled",
    "Bash one-liner for the disk report: `du -sh /var/lib/* 2>/dev/null | sort -h | tail -n 5`",
    "ok so the fix was `SET statement_timeout = '30s';` in the migration session",
    "Kann jemand kurz bestätigen, dass der Zahlungsanbieter wieder erreichbar ist? Status-Seite sagt 'degraded'.",
    "مرحبا، هل يمكن أن تراجع طلب الدمج الخاص بي اليوم؟",
    "shalom, the Hebrew locale shows the price before the currency sign, is that right for he-IL?",
    "Heads-up: the `v2/orders` endpoint will return 410 Gone from March 1st",
    "PowerShell ist hier einfacher: `Get-Content .\\app.log -Tail 50 -Wait`",
    'Test failed: expected `<div class="price">€ 12,00</div>` but got `<div class="price">12,00 €</div>`',
    "I'd rather keep `SELECT ... FOR UPDATE SKIP LOCKED` for the job queue than add Redis",
    "Ping @channel: maintenance window tonight 22:00–23:00 CET, the admin UI will be read-only",  # noqa: RUF001 (an en dash, as people type it)
    "¡Gracias! Ya funciona con `export NODE_OPTIONS=--max-old-space-size=4096`",
    "function looks fine, but `if (x == null)` also catches undefined, was that intended?",
    "merged 🎉 thanks everyone",
)
MARKDOWN_NOTES = (
    "## Changelog\n\n- Fix: totals rounded half-even\n- New: `GET /v3/invoices?status=open`\n- Removed: legacy "
    "`/export.php` endpoint",
    "### Steps to reproduce\n\n1. Open *Settings → Billing*\n2. Change the VAT id to `ATU12345678`\n3. Click **Save**"
    "\n\nExpected: saved. Actual: 422 `vat_id is invalid`.",
    "Release checklist:\n\n- [x] tag `v4.2.0`\n- [x] `make release`\n- [ ] announce in #general",
    "The migration adds a partial index:\n\n```sql\nCREATE INDEX CONCURRENTLY idx_orders_open ON orders (customer_id) "
    "WHERE status = 'open';\n```",
    "Runbook: if the consumer lag exceeds 10k, scale with `kubectl scale deploy/consumer --replicas=6 -n events`.",
)
SEARCHES = (
    ("de", "Fahrradhelm Kinder 52-56 cm"),
    ("de", "Rückgaberecht 30 Tage Bedingungen"),
    ("de", "Glühbirne E27 warmweiß dimmbar"),
    ("fr", "chaussures de randonnée imperméables femme"),
    ("fr", "livraison gratuite à partir de 50 €"),
    ("fr", "où est ma commande ?"),
    ("es", "cafetera italiana 6 tazas inducción"),
    ("es", "horario de atención al cliente"),
    ("pt", "tênis de corrida masculino nº 42"),
    ("pt", "nota fiscal segunda via"),
    ("it", "zaino porta pc 15,6 pollici"),
    ("nl", "regenjas heren maat L"),
    ("sv", "vinterdäck 205/55 R16"),
    ("pl", "ładowarka USB-C 65W"),
    ("cs", "dětská postýlka s matrací"),
    ("tr", "çelik termos 1 lt"),
    ("ru", "зимние шины 205/55 R16"),
    ("uk", "повербанк 20000 мАг"),
    ("el", "καφετιέρα φίλτρου"),
    ("ar", "سماعات لاسلكية بلوتوث"),
    ("he", "מטען אלחוטי לאייפון"),
    ("hi", "बच्चों के जूते"),
    ("ja", "ワイヤレスイヤホン ノイズキャンセリング"),
    ("ja", "返品 送料 無料"),
    ("zh", "无线 充电器 苹果"),
    ("zh", "退貨 流程"),
    ("ko", "무선 이어폰 추천"),
    ("th", "หูฟังไร้สาย"),
    ("vi", "giày chạy bộ nam"),
    ("id", "tas ransel laptop anti air"),
    ("en", "usb-c to hdmi 4k 60hz"),
    ("en", "size 10.5 wide"),
    ("en", "gift for dad under 50"),
    ("en", "replacement filter model AX-200"),
    ("en", "how to cancel subscription"),
    ("en", "2-in-1 laptop with pen"),
)
PRODUCTS = (
    ("Merino-Wollpullover", "Weicher Pullover aus 100 % Merinowolle, maschinenwaschbar bei 30 °C."),
    ("Théière en fonte", "Théière japonaise en fonte émaillée, 0,8 l, avec filtre inox."),
    ("Mochila urbana", 'Mochila impermeable de 20 L con compartimento acolchado para portátil de 15".'),
    ("竹製まな板", "天然竹を使用した軽くて丈夫なまな板です。食洗機は使用できません。"),
    ("Ceramic mug (350 ml)", "Hand-glazed stoneware; microwave & dishwasher safe. Colours vary slightly."),
    ("Lampa biurkowa LED", "Regulowana jasność, 3 tryby barwy światła, port USB do ładowania."),
    ("Kaffekvarn", "Manuell kaffekvarn med keramiska malstenar – 18 grovleksinställningar."),  # noqa: RUF001 (an en dash, as people type it)
    ("Пледы из льна", "Лёгкий льняной плед 140×200 см, натуральный цвет."),  # noqa: RUF001 (Cyrillic and a multiplication sign, on purpose)
)
PEOPLE = (
    ("Anneliese", "Vogelsang-Brückner"),
    ("Théo", "Lefèvre-Dubois"),
    ("João Pedro", "da Conceição"),
    ("Ngozi", "Okonkwo-Adeyemi"),
    ("Hiroshi", "Takahashi"),
    ("Mei-Ling", "Chen"),
    ("Sven", "Åkesson"),
    ("Radka", "Dvořáková"),
    ("Emre", "Yıldız"),  # noqa: RUF001 (a Turkish dotless i, on purpose)
    ("Nadia", "El-Amrani"),
    ("Yosef", "Ben-David"),
    ("Aarav", "Mehta"),
    ("Ngaio", "Te Whare"),
    ("Olga", "Ivanova"),
    ("Bridget", "O'Sullivan"),
    ("Luca", "D'Angelo"),
)
ADDRESSES = (
    ("Mariahilfer Straße 88/3", "1070", "Wien", "AT"),
    ("14, rue du Faubourg Saint-Denis", "75010", "Paris", "FR"),
    ("Rua Augusta, 1508 - apto 52", "01304-001", "São Paulo", "BR"),
    ("1-2-3 Shibuya, Shibuya-ku", "150-0002", "東京都", "JP"),
    ("Drottninggatan 71", "111 36", "Stockholm", "SE"),
    ("Vinohradská 1511/230", "100 00", "Praha 10", "CZ"),
    ("İstiklal Cd. No:12", "34433", "İstanbul", "TR"),
    ("Unit 4, 22 O'Connell St", "2000", "Sydney NSW", "AU"),
)
SPEC_SUMMARIES = (
    "Returns the invoices of the authenticated account, newest first.",
    "Creates a shipment; the carrier is chosen from the destination's country (ISO 3166-1 alpha-2).",
    "Deletes a webhook subscription. Idempotent: a second call returns 204 as well.",
    "Lists the events of a tenant. Filter with `since` (RFC 3339) and `type` (comma separated).",
    "Uploads a document (PDF, at most 10 MiB) and returns its id.",
)
CI_SCRIPTS = (
    ["npm ci", "npm run lint", "npm test -- --coverage"],
    ["pip install -r requirements.txt", "pytest -q --junitxml=report.xml"],
    ["go vet ./...", "go test -race -count=1 ./..."],
    ["cargo fmt --check", "cargo clippy -- -D warnings", "cargo test --locked"],
    ["./gradlew build --no-daemon", "./gradlew test jacocoTestReport"],
    [
        'docker build -t "$CI_REGISTRY_IMAGE:$CI_COMMIT_SHORT_SHA" .',
        'docker push "$CI_REGISTRY_IMAGE:$CI_COMMIT_SHORT_SHA"',
    ],
    ["helm lint charts/app", "helm template charts/app --values charts/app/values-prod.yaml > /dev/null"],
    ["terraform fmt -check -recursive", "terraform init -backend=false", "terraform validate"],
    ["export VERSION=$(git describe --tags --always)", 'echo "building ${VERSION}"', "make dist"],
    ["bundle install --jobs 4", "bundle exec rspec --format progress"],
)
ALERTS = (
    (
        "HighRequestLatency",
        "p99 latency above 500ms for 10m",
        "histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket[5m]))) > 0.5",
    ),
    (
        "DiskWillFillIn4Hours",
        "Disk on {{ $labels.instance }} fills within 4h",
        'predict_linear(node_filesystem_avail_bytes{fstype!="tmpfs"}[6h], 4*3600) < 0',
    ),
    ("PodCrashLooping", "Pod is restarting often", "increase(kube_pod_container_status_restarts_total[15m]) > 3"),
    (
        "CertificateExpiry",
        "TLS certificate expires in less than 14 days",
        "probe_ssl_earliest_cert_expiry - time() < 14*86400",
    ),
)
ERRORS = (
    "TypeError: Cannot read properties of undefined (reading 'map')\n    at ProductList (webpack-internal:///./src/"
    "components/ProductList.tsx:42:23)",
    'ZeroDivisionError: division by zero\n  File "/srv/app/reports/margin.py", line 88, in compute\n    return '
    "profit / revenue",
    "java.util.ConcurrentModificationException\n\tat java.base/java.util.ArrayList$Itr.checkForComodification"
    "(ArrayList.java:1095)",
    "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 42 [running]:\nmain.parse(...)\n"
    "\t/src/cmd/importer/main.go:117",
    "ActiveRecord::RecordNotUnique: PG::UniqueViolation: ERROR:  duplicate key value violates unique constraint "
    '"index_users_on_email"',
)


class Gen(HeldOutGen):
    def __init__(self) -> None:
        super().__init__(NAME, "third", SEED)

    # --- helpers -----------------------------------------------------------------------------------------

    def jwt(self) -> str:
        """A signed JWT's shape (header.claims.signature, base64url): bearer tokens and client assertions."""
        head = base64.urlsafe_b64encode(b'{"alg":"RS256","typ":"JWT","kid":"k1"}').decode().rstrip("=")
        claims = {"sub": self.uid(), "iat": 1796000000 + self.rng.randint(0, 10**6), "aud": "https://id.example.app"}
        payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
        return f"{head}.{payload}.{self.b64url(64)}"

    def api(self, host: str, content_type: str | None = "application/json") -> list[tuple[str, str]]:
        h = [("Host", host), ("User-Agent", self.pick(TOOLS)), ("Accept", "application/json")]
        h.append(("Authorization", "Bearer " + self.jwt()))
        if content_type:
            h.append(("Content-Type", content_type))
        return h

    def person(self) -> dict[str, str]:
        first, last = self.pick(PEOPLE)
        local = "".join(c for c in (first + last).lower() if c in string.ascii_lowercase) or "kunde"
        return {"first": first, "last": last, "email": f"{local}{self.rng.randint(2, 98)}@post.example"}

    def browser(self, host: str, nav: bool) -> list[tuple[str, str]]:
        name = self.pick(sorted(BROWSERS))
        h = [("Host", host), *BROWSERS[name]]
        accept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
        h.append(("Accept", accept if nav else "*/*"))
        h += [("Accept-Language", self.pick(LANGUAGES)), ("Accept-Encoding", "gzip, deflate, br, zstd")]
        if name not in ("safari-ios",):
            h += [("Sec-Fetch-Site", "same-origin"), ("Sec-Fetch-Mode", "navigate" if nav else "cors")]
            h.append(("Sec-Fetch-Dest", "document" if nav else "empty"))
        if self.rng.random() < 0.7:
            h.append(("Cookie", self.cookies()))
        return h

    def cookies(self) -> str:
        parts = [
            f"_pk_id.3.1fff={self.hex(8)}.{1796000000 + self.rng.randint(0, 10**6)}.",
            "_pk_ses.3.1fff=1",
            f"hubspotutk={self.hex(16)}",
            f"__hstc=20629287.{self.hex(16)}.1796000000000.1796100000000.1796200000000.3",
            f"_shopify_y={self.uid()}",
            f"XSRF-TOKEN={self.b64url(30)}%3D",
            f"laravel_session={self.b64url(120)}%3D%3D",
        ]
        if self.rng.random() < 0.4:
            parts.append("uc_user_interaction=true")
        if self.rng.random() < 0.3:
            parts.append(f"locale={self.pick(('de_AT', 'fr_CA', 'pt_BR', 'ja_JP'))}")
        self.rng.shuffle(parts)
        return "; ".join(parts[: self.rng.randint(3, len(parts))])

    # --- families ----------------------------------------------------------------------------------------
    def oauth(self, n: int) -> None:
        clients = ("web-portal", "ios-app", "cli", "partner-42", "grafana")
        for i in range(n):
            kind = i % 6
            h = [("Host", "id.example.app"), ("User-Agent", self.pick(TOOLS)), ("Accept", "application/json")]
            if kind == 0:  # authorization request with PKCE
                q = {
                    "response_type": "code",
                    "client_id": self.pick(clients),
                    "redirect_uri": self.pick(
                        (
                            "https://portal.example.app/callback",
                            "com.example.app:/oauth2redirect",
                            "http://127.0.0.1:8250/oidc/callback",
                        )
                    ),
                    "scope": self.pick(
                        (
                            "openid profile email",
                            "openid offline_access orders:read",
                            "openid email https://api.example.app/invoices.readonly",
                        )
                    ),
                    "state": self.b64url(24),
                    "nonce": self.b64url(16),
                    "code_challenge": self.b64url(32),
                    "code_challenge_method": "S256",
                }
                if self.rng.random() < 0.4:
                    q["prompt"] = self.pick(("login", "consent", "select_account"))
                    q["ui_locales"] = self.pick(("de-AT de en", "ja en", "pt-BR"))
                self.add(
                    "oauth",
                    "GET",
                    "/oauth2/authorize?" + urllib.parse.urlencode(q),
                    self.browser("id.example.app", True),
                )
            elif kind == 1:  # token: authorization code
                f = {
                    "grant_type": "authorization_code",
                    "code": self.b64url(32),
                    "redirect_uri": "https://portal.example.app/callback",
                    "code_verifier": self.b64url(48),
                    "client_id": self.pick(clients),
                }
                h.append(("Content-Type", "application/x-www-form-urlencoded"))
                self.add("oauth", "POST", "/oauth2/token", h, urllib.parse.urlencode(f).encode())
            elif kind == 2:  # token: refresh, or client credentials with a JWT assertion
                if self.rng.random() < 0.5:
                    f = {
                        "grant_type": "refresh_token",
                        "refresh_token": self.b64url(48),
                        "scope": "openid offline_access",
                    }
                    h.append(("Authorization", "Basic " + base64.b64encode(b"cli:" + self.rng.randbytes(18)).decode()))
                else:
                    f = {
                        "grant_type": "client_credentials",
                        "scope": "reports:write",
                        "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                        "client_assertion": self.jwt(),
                    }
                h.append(("Content-Type", "application/x-www-form-urlencoded"))
                self.add("oauth", "POST", "/oauth2/token", h, urllib.parse.urlencode(f).encode())
            elif kind == 3:  # device flow and token exchange
                if self.rng.random() < 0.5:
                    f = {"client_id": "cli", "scope": "openid profile deploy:write"}
                    path = "/oauth2/device_authorization"
                else:
                    f = {
                        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
                        "subject_token": self.jwt(),
                        "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
                        "audience": "https://api.example.app",
                    }
                    path = "/oauth2/token"
                h.append(("Content-Type", "application/x-www-form-urlencoded"))
                self.add("oauth", "POST", path, h, urllib.parse.urlencode(f).encode())
            elif kind == 4:  # discovery, JWKS, userinfo
                path = self.pick(
                    (
                        "/.well-known/openid-configuration",
                        "/.well-known/jwks.json",
                        "/oauth2/userinfo",
                        "/.well-known/oauth-authorization-server",
                    )
                )
                if path == "/oauth2/userinfo":
                    h.append(("Authorization", "Bearer " + self.jwt()))
                self.add("oauth", "GET", path, h)
            elif self.rng.random() < 0.6:
                f = {
                    "token": self.b64url(40),
                    "token_type_hint": self.pick(("access_token", "refresh_token")),
                }
                h.append(("Content-Type", "application/x-www-form-urlencoded"))
                path = self.pick(("/oauth2/introspect", "/oauth2/revoke"))
                self.add("oauth", "POST", path, h, urllib.parse.urlencode(f).encode())
            else:
                q = {
                    "id_token_hint": self.jwt(),
                    "post_logout_redirect_uri": "https://portal.example.app/",
                    "state": self.b64url(12),
                }
                self.add(
                    "oauth",
                    "GET",
                    "/oidc/logout?" + urllib.parse.urlencode(q),
                    self.browser("id.example.app", True),
                )

    def openapi(self, n: int) -> None:
        for i in range(n):
            resource = self.pick(("invoices", "shipments", "webhooks", "events", "documents", "tenants"))
            summary = self.pick(SPEC_SUMMARIES)
            if i % 3 == 2:  # AsyncAPI 3
                doc: dict[str, Any] = {
                    "asyncapi": "3.0.0",
                    "info": {"title": f"{resource.title()} events", "version": f"1.{i}.0"},
                    "channels": {
                        f"{resource}.created": {
                            "address": f"tenant/{{tenantId}}/{resource}/created",
                            "messages": {"created": {"$ref": f"#/components/messages/{resource}Created"}},
                        }
                    },
                    "operations": {
                        "onCreated": {
                            "action": "receive",
                            "channel": {"$ref": f"#/channels/{resource}.created"},
                            "summary": summary,
                        }
                    },
                    "components": {
                        "messages": {
                            f"{resource}Created": {
                                "contentType": "application/json",
                                "payload": {
                                    "type": "object",
                                    "required": ["id"],
                                    "properties": {"id": {"type": "string", "format": "uuid"}},
                                },
                            }
                        }
                    },
                }
            else:  # OpenAPI 3.1
                doc = {
                    "openapi": "3.1.0",
                    "info": {
                        "title": f"{resource.title()} API",
                        "version": f"2.{i}.0",
                        "description": "Rate limits: 600 requests/min per token. Errors use RFC 9457 "
                        "(`application/problem+json`).",
                    },
                    "servers": [{"url": "https://api.example.app/v2"}],
                    "paths": {
                        f"/{resource}": {
                            "get": {
                                "summary": summary,
                                "operationId": f"list{resource.title()}",
                                "parameters": [
                                    {"name": "cursor", "in": "query", "schema": {"type": "string"}},
                                    {
                                        "name": "limit",
                                        "in": "query",
                                        "schema": {"type": "integer", "minimum": 1, "maximum": 200},
                                    },
                                ],
                                "responses": {
                                    "200": {"description": "OK"},
                                    "429": {
                                        "description": "Too many requests",
                                        "headers": {"Retry-After": {"schema": {"type": "integer"}}},
                                    },
                                },
                            }
                        },
                        f"/{resource}/{{id}}": {
                            "delete": {"summary": summary, "responses": {"204": {"description": "Deleted"}}}
                        },
                    },
                    "components": {
                        "schemas": {
                            "Id": {"type": "string", "pattern": "^[a-z]{3}_[0-9A-Za-z]{24}$"},
                            "Email": {"type": "string", "format": "email", "maxLength": 254},
                        },
                        "securitySchemes": {
                            "oauth": {
                                "type": "oauth2",
                                "flows": {
                                    "clientCredentials": {
                                        "tokenUrl": "https://id.example.app/oauth2/token",
                                        "scopes": {f"{resource}:read": "Read"},
                                    }
                                },
                            }
                        },
                    },
                }
            path = f"/api/registry/apis/{resource}/versions"
            if self.rng.random() < 0.3:
                path = f"/v1/specs/{self.uid()}?overwrite=true"
            self.add("openapi", self.pick(("POST", "PUT")), path, self.api("registry.example.dev"), self.json(doc))

    def iac(self, n: int) -> None:
        for i in range(n):
            kind = (0, 1, 2, 3, 0, 0, 2, 3)[i % 8]  # Terraform Cloud's JSON:API one in eight
            if kind == 0:  # Terraform JSON configuration sent to a plan service
                doc: dict[str, Any] = {
                    "terraform": {"required_providers": {"aws": {"source": "hashicorp/aws", "version": "~> 6.20"}}},
                    "variable": {"env": {"type": "string", "default": self.pick(("staging", "prod", "dev"))}},
                    "resource": {
                        "aws_s3_bucket": {
                            "logs": {
                                "bucket": "${var.env}-access-logs-" + self.hex(3),
                                "tags": {"Team": self.pick(("platform", "data"))},
                            }
                        },
                        "aws_cloudwatch_log_group": {
                            "app": {"name": "/ecs/${var.env}/checkout", "retention_in_days": self.pick((14, 30, 90))}
                        },
                    },
                    "output": {"bucket_arn": {"value": "${aws_s3_bucket.logs.arn}"}},
                }
                self.add(
                    "iac",
                    "POST",
                    f"/api/plans?workspace={self.pick(('eu-central', 'us-east'))}",
                    self.api("plans.example.dev"),
                    self.json(doc),
                )
            elif kind == 1:  # Terraform Cloud's variables API (JSON:API)
                key, value, hcl = self.pick(
                    (
                        ("instance_type", "t4g.medium", False),
                        ("allowed_cidrs", '["198.51.100.0/24", "203.0.113.0/24"]', True),
                        ("tags", '{ CostCenter = "4711", Owner = "platform" }', True),
                        ("db_password", self.b64url(18), False),
                    )
                )
                doc = {
                    "data": {
                        "type": "vars",
                        "attributes": {
                            "key": key,
                            "value": value,
                            "category": "terraform",
                            "hcl": hcl,
                            "sensitive": key == "db_password",
                            "description": "set by the pipeline",
                        },
                    }
                }
                self.add(
                    "iac",
                    "POST",
                    f"/api/v2/workspaces/ws-{self.b64url(12)}/vars",
                    self.api("app.terraform.example", "application/vnd.api+json"),
                    self.json(doc),
                )
            elif kind == 2:  # Argo CD application with Helm values
                values = (
                    f"replicaCount: {self.rng.randint(2, 6)}\nimage:\n  repository: registry.example.dev/shop/web\n"
                    f'  tag: "{self.rng.randint(1, 9)}.{self.rng.randint(0, 30)}.0"\ningress:\n  enabled: true\n'
                    "  annotations:\n    nginx.ingress.kubernetes.io/proxy-body-size: 8m\n  hosts:\n"
                    '    - host: shop.example.app\n      paths: ["/"]\n'
                    "resources:\n  limits: {cpu: 500m, memory: 512Mi}\n"
                    'env:\n  - name: JAVA_OPTS\n    value: "-XX:MaxRAMPercentage=75 -Dfile.encoding=UTF-8"\n'
                )
                doc = {
                    "metadata": {"name": f"web-{self.pick(('eu', 'us', 'ap'))}", "namespace": "argocd"},
                    "spec": {
                        "project": "shop",
                        "destination": {"server": "https://kubernetes.default.svc", "namespace": "shop"},
                        "source": {
                            "repoURL": "https://git.example.dev/shop/charts.git",
                            "path": "web",
                            "targetRevision": "main",
                            "helm": {"values": values, "parameters": [{"name": "image.tag", "value": "latest"}]},
                        },
                        "syncPolicy": {
                            "automated": {"prune": True, "selfHeal": True},
                            "syncOptions": ["CreateNamespace=true", "ServerSideApply=true"],
                        },
                    },
                }
                self.add(
                    "iac",
                    self.pick(("POST", "PUT")),
                    "/api/v1/applications?upsert=true",
                    self.api("argocd.example.dev"),
                    self.json(doc),
                )
            else:  # Terraform state lock and outputs read (a state backend's HTTP API)
                doc = {
                    "ID": self.uid(),
                    "Operation": "OperationTypeApply",
                    "Info": "",
                    "Who": f"runner@ci-{self.rng.randint(1, 40)}",
                    "Version": "1.14.2",
                    "Created": "2026-12-05T09:14:22.123456Z",
                    "Path": "",
                }
                self.add(
                    "iac",
                    "POST",
                    f"/state/{self.pick(('network', 'dns', 'cluster'))}/lock",
                    self.api("tfstate.example.dev"),
                    self.json(doc),
                )

    def ci(self, n: int) -> None:
        for i in range(n):
            script = self.pick(CI_SCRIPTS)
            kind = i % 3
            if kind == 0:  # GitLab CI lint: the YAML as a string
                yml = (
                    'stages: [test, build]\n\nvariables:\n  GIT_DEPTH: "20"\n\ntest:\n  stage: test\n'
                    f"  image: {self.pick(('node:24-alpine', 'python:3.13', 'golang:1.25', 'rust:1.91'))}\n"
                    "  script:\n"
                    + "".join(f"    - {line}\n" for line in script)
                    + '  rules:\n    - if: $CI_PIPELINE_SOURCE == "merge_request_event"\n'
                    "    - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH\n"
                )
                doc: dict[str, Any] = {"content": yml, "dry_run": self.rng.random() < 0.5}
                self.add(
                    "ci",
                    "POST",
                    f"/api/v4/projects/{self.rng.randint(10, 9000)}/ci/lint",
                    self.api("gitlab.example.dev"),
                    self.json(doc),
                )
            elif kind == 1:  # Buildkite pipeline upload
                steps = [
                    {
                        "label": ":hammer: build",
                        "command": script,
                        "agents": {"queue": "linux"},
                        "artifact_paths": "dist/**/*",
                    },
                    {"wait": None},
                    {
                        "label": ":rocket: deploy",
                        "command": "scripts/deploy.sh --env staging",
                        "branches": "main",
                        "concurrency": 1,
                        "concurrency_group": "deploy/staging",
                    },
                ]
                self.add(
                    "ci",
                    "POST",
                    f"/v2/organizations/example/pipelines/web/builds/{self.rng.randint(1, 9999)}/pipeline",
                    self.api("api.buildkite.example"),
                    self.json({"pipeline": {"steps": steps}}),
                )
            else:  # CircleCI / GitHub Actions triggers with parameters
                if self.rng.random() < 0.5:
                    doc = {
                        "branch": "main",
                        "parameters": {
                            "run_e2e": True,
                            "deploy_target": "eu-central-1",
                            "extra_args": "--tags smoke,payments",
                        },
                    }
                    path = "/api/v2/project/gh/example/web/pipeline"
                else:
                    doc = {
                        "ref": "main",
                        "inputs": {
                            "environment": "staging",
                            "version": f"v4.{i}.0",
                            "notes": "Hotfix für die Rundung der Summen (#812)",
                        },
                    }
                    path = "/repos/example/web/actions/workflows/deploy.yml/dispatches"
                self.add("ci", "POST", path, self.api("ci.example.dev"), self.json(doc))

    def chat(self, n: int) -> None:
        for i in range(n):
            text = self.pick(CHAT)
            if self.rng.random() < 0.15:
                text += "\n\n" + self.pick(MARKDOWN_NOTES)
            kind = i % 4
            if kind == 0:  # Mattermost
                doc: dict[str, Any] = {
                    "channel_id": self.hex(13),
                    "message": text,
                    "root_id": self.hex(13) if self.rng.random() < 0.3 else "",
                }
                self.add("chat", "POST", "/api/v4/posts", self.api("chat.example.team"), self.json(doc))
            elif kind == 1:  # Matrix client-server API, with formatted_body for the HTML variant
                doc = {"msgtype": "m.text", "body": text}
                if "`" in text and self.rng.random() < 0.5:
                    doc["format"] = "org.matrix.custom.html"
                    doc["formatted_body"] = text.replace("`", "<code>", 1).replace("`", "</code>", 1)
                room = "!" + self.b64url(12) + ":matrix.example.org"
                txn = self.rng.randint(10**12, 10**13)
                path = f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/send/m.room.message/m{txn}"
                self.add("chat", "PUT", path, self.api("matrix.example.org"), self.json(doc))
            elif kind == 2:  # Discord bot message, with an embed now and then
                doc = {"content": text[:2000], "allowed_mentions": {"parse": []}}
                if self.rng.random() < 0.3:
                    doc["embeds"] = [
                        {
                            "title": "Build #" + str(self.rng.randint(100, 999)),
                            "color": 3066993,
                            "description": self.pick(ERRORS)[:300],
                        }
                    ]
                self.add(
                    "chat",
                    "POST",
                    f"/api/v10/channels/{self.rng.randint(10**17, 10**18)}/messages",
                    self.api("discord.example.com"),
                    self.json(doc),
                )
            else:  # Zulip: form-encoded
                f = {
                    "type": "stream",
                    "to": self.pick(("backend", "releases", "support-de")),
                    "topic": self.pick(("deploys", "Fehler im Checkout", "weekly sync")),
                    "content": text,
                }
                h = self.api("zulip.example.team", "application/x-www-form-urlencoded")
                self.add("chat", "POST", "/api/v1/messages", h, urllib.parse.urlencode(f).encode())

    def bulk(self, n: int) -> None:
        for i in range(n):
            kind = i % 4
            if kind in (0, 1):  # Elasticsearch / OpenSearch _bulk: ndjson
                lines = []
                for _ in range(self.rng.randint(2, 8)):
                    lines.append(json.dumps({"index": {"_index": "orders-2026.12", "_id": self.uid()}}))
                    name, desc = self.pick(PRODUCTS)
                    lines.append(
                        json.dumps(
                            {
                                "product": name,
                                "note": desc,
                                "qty": self.rng.randint(1, 5),
                                "country": self.pick(ADDRESSES)[3],
                            },
                            ensure_ascii=False,
                        )
                    )
                body = ("\n".join(lines) + "\n").encode()
                self.add(
                    "bulk",
                    "POST",
                    "/_bulk?refresh=wait_for",
                    self.api("search.example.dev", "application/x-ndjson"),
                    body,
                )
            elif kind == 2:  # Salesforce-style Bulk API 2.0: raw CSV upload
                rows = ["FirstName,LastName,Email,MailingCity"]
                for _ in range(self.rng.randint(3, 20)):
                    p = self.person()
                    rows.append(f'"{p["first"]}","{p["last"]}",{p["email"]},"{self.pick(ADDRESSES)[2]}"')
                self.add(
                    "bulk",
                    "PUT",
                    f"/services/data/v62.0/jobs/ingest/750{self.hex(6)}/batches",
                    self.api("crm.example.dev", "text/csv"),
                    ("\r\n".join(rows) + "\r\n").encode(),
                )
            else:  # CSV as a multipart upload from a browser's import dialog
                rows = ["sku;name;price_eur"] + [
                    f"SKU-{self.rng.randint(1000, 9999)};{self.pick(PRODUCTS)[0]};"
                    f"{self.rng.randint(3, 400)},{self.rng.randint(0, 99):02d}"
                    for _ in range(self.rng.randint(3, 15))
                ]
                boundary = "----WebKitFormBoundary" + self.b64url(12)
                body = (
                    f'--{boundary}\r\nContent-Disposition: form-data; name="import[file]"; filename="preise.csv"\r\n'
                    f"Content-Type: text/csv\r\n\r\n" + "\n".join(rows) + f"\r\n--{boundary}\r\n"
                    'Content-Disposition: form-data; name="import[delimiter]"\r\n\r\n;\r\n'
                    f"--{boundary}--\r\n"
                ).encode()
                h = [
                    *self.browser("admin.example.shop", False),
                    ("Content-Type", f"multipart/form-data; boundary={boundary}"),
                ]
                self.add("bulk", "POST", "/admin/products/import", h, body)

    def graphql(self, n: int) -> None:
        for i in range(n):
            if i % 2 == 0:  # Hasura insert with nested objects
                name, desc = self.pick(PRODUCTS)
                doc: dict[str, Any] = {
                    "query": "mutation InsertReview($object: reviews_insert_input!) { insert_reviews_one(object: "
                    "$object, on_conflict: {constraint: reviews_pkey, update_columns: [rating, body_md]}) "
                    "{ id created_at } }",
                    "variables": {
                        "object": {
                            "product_name": name,
                            "rating": self.rng.randint(1, 5),
                            "body_md": desc
                            + " "
                            + self.pick(("👍", "Würde ich wieder kaufen.", "Entrega rápida.", "")),
                            "author_id": self.uid(),
                        }
                    },
                    "operationName": "InsertReview",
                }
                self.add(
                    "graphql",
                    "POST",
                    "/v1/graphql",
                    [*self.api("hasura.example.dev"), ("x-hasura-role", "customer")],
                    self.json(doc),
                )
            else:  # Saleor checkout
                street, postal, city, country = self.pick(ADDRESSES)
                p = self.person()
                doc = {
                    "query": "mutation CheckoutShip($id: ID!, $address: AddressInput!) { checkoutShippingAddressUpdate("
                    "id: $id, shippingAddress: $address) { errors { field code message } checkout { id } } }",
                    "variables": {
                        "id": base64.b64encode(f"Checkout:{self.uid()}".encode()).decode(),
                        "address": {
                            "firstName": p["first"],
                            "lastName": p["last"],
                            "streetAddress1": street,
                            "postalCode": postal,
                            "city": city,
                            "country": country,
                            "phone": f"+43 660 {self.rng.randint(1000000, 9999999)}",
                        },
                    },
                }
                self.add("graphql", "POST", "/graphql/", self.api("saleor.example.shop"), self.json(doc))

    def s3(self, n: int) -> None:
        for i in range(n):
            kind = i % 5
            bucket = self.pick(("media-eu", "backups", "invoices-2026", "static-assets"))
            date = "20261205"
            auth = (
                f"AWS4-HMAC-SHA256 Credential=AKIA{self.hex(8).upper()}/{date}/eu-central-1/s3/aws4_request, "
                f"SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature={self.hex(32)}"
            )
            h = [
                ("Host", f"{bucket}.s3.example.dev"),
                ("User-Agent", self.pick(TOOLS[7:9])),
                ("x-amz-date", f"{date}T0914{self.rng.randint(10, 59)}Z"),
                ("Authorization", auth),
            ]
            if kind == 0:  # CompleteMultipartUpload
                parts = "".join(
                    f'<Part><PartNumber>{k}</PartNumber><ETag>"{self.hex(16)}"</ETag></Part>'
                    for k in range(1, self.rng.randint(2, 6))
                )
                body = (
                    '<?xml version="1.0" encoding="UTF-8"?>\n<CompleteMultipartUpload xmlns="http://s3.amazonaws.'
                    f'com/doc/2006-03-01/">{parts}</CompleteMultipartUpload>'
                ).encode()
                h += [("x-amz-content-sha256", hashlib.sha256(body).hexdigest()), ("Content-Type", "application/xml")]
                self.add("s3", "POST", f"/video/{self.uid()}.mp4?uploadId={self.b64url(40)}", h, body)
            elif kind == 1:  # DeleteObjects
                keys = "".join(
                    f"<Object><Key>tmp/{self.pick(('Rechnung', 'export', 'thumb'))}-{k}.pdf</Key></Object>"
                    for k in range(self.rng.randint(1, 6))
                )
                body = f'<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Quiet>true</Quiet>{keys}</Delete>'.encode()
                h += [
                    ("Content-MD5", base64.b64encode(hashlib.md5(body, usedforsecurity=False).digest()).decode()),
                    ("x-amz-content-sha256", hashlib.sha256(body).hexdigest()),
                    ("Content-Type", "application/xml"),
                ]
                self.add("s3", "POST", "/?delete", h, body)
            elif kind == 2:  # lifecycle or tagging configuration
                body = (
                    b'<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Rule><ID>expire-tmp'
                    b"</ID><Filter><Prefix>tmp/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>7</Days>"
                    b"</Expiration></Rule></LifecycleConfiguration>"
                )
                if self.rng.random() < 0.5:
                    body = (
                        "<Tagging><TagSet><Tag><Key>cost-center</Key><Value>4711</Value></Tag><Tag><Key>owner</Key>"
                        f"<Value>{self.pick(PEOPLE)[0]}</Value></Tag></TagSet></Tagging>"
                    ).encode()
                h += [("x-amz-content-sha256", hashlib.sha256(body).hexdigest()), ("Content-Type", "application/xml")]
                self.add("s3", "PUT", "/?lifecycle" if b"Lifecycle" in body else "/report.pdf?tagging", h, body)
            elif kind == 3:  # ListObjectsV2, and presigned GETs from a browser
                if self.rng.random() < 0.5:
                    q = {
                        "list-type": "2",
                        "prefix": self.pick(("2026/12/", "users/42/avatars/", "Rechnungen/")),
                        "delimiter": "/",
                        "max-keys": "1000",
                    }
                    h.append(("x-amz-content-sha256", hashlib.sha256(b"").hexdigest()))
                    self.add("s3", "GET", "/?" + urllib.parse.urlencode(q), h)
                else:
                    q = {
                        "X-Amz-Algorithm": "AWS4-HMAC-SHA256",
                        "X-Amz-Credential": f"AKIA{self.hex(8).upper()}/{date}/eu-central-1/s3/aws4_request",
                        "X-Amz-Date": f"{date}T091500Z",
                        "X-Amz-Expires": "900",
                        "X-Amz-SignedHeaders": "host",
                        "response-content-disposition": 'attachment; filename="Übersicht Q4.pdf"',
                        "X-Amz-Signature": self.hex(32),
                    }
                    key = urllib.parse.quote(f"exports/Übersicht Q4 ({self.rng.randint(1, 9)}).pdf")
                    self.add(
                        "s3",
                        "GET",
                        f"/{key}?" + urllib.parse.urlencode(q),
                        self.browser(f"{bucket}.s3.example.dev", True),
                    )
            else:  # PutObject / UploadPart of bytes
                body = self.rng.randbytes(self.rng.randint(500, 6000))
                h += [("x-amz-content-sha256", "UNSIGNED-PAYLOAD"), ("Content-Type", "application/octet-stream")]
                dump, part = self.rng.randint(1, 30), self.rng.randint(1, 9)
                path = f"/backups/db-{dump:02d}.dump?partNumber={part}&uploadId={self.b64url(30)}"
                self.add("s3", "PUT", path, h, body)

    def jsonapi(self, n: int) -> None:
        """A storefront that speaks JSON:API (application/vnd.api+json), as Spree's and Solidus' do."""
        for i in range(n):
            h = self.api("store.example.shop", "application/vnd.api+json")
            h[2] = ("Accept", "application/vnd.api+json")
            if i % 3 == 0:
                doc: dict[str, Any] = {
                    "variant_id": str(self.rng.randint(100, 999)),
                    "quantity": self.rng.randint(1, 3),
                    "options": {
                        "gift_note": self.pick(
                            ("Alles Gute zum Geburtstag!", "Joyeux Noël 🎄", "", "Para você, com carinho")
                        )
                    },
                }
                self.add("jsonapi", "POST", "/api/v2/storefront/cart/add_item?include=line_items", h, self.json(doc))
            elif i % 3 == 1:
                street, postal, city, country = self.pick(ADDRESSES)
                p = self.person()
                doc = {
                    "data": {
                        "type": "address",
                        "attributes": {
                            "firstname": p["first"],
                            "lastname": p["last"],
                            "address1": street,
                            "zipcode": postal,
                            "city": city,
                            "country_iso": country,
                            "label": self.pick(("Büro", "Casa", "自宅")),
                        },
                    }
                }
                self.add("jsonapi", "POST", "/api/v2/storefront/account/addresses", h, self.json(doc))
            else:
                self.add(
                    "jsonapi",
                    "GET",
                    "/api/v2/storefront/products?"
                    + urllib.parse.urlencode(
                        {
                            "filter[name]": self.pick(SEARCHES)[1],
                            "include": "images,default_variant",
                            "fields[product]": "name,price,slug",
                            "page": str(self.rng.randint(1, 4)),
                            "sort": "-updated_at",
                        }
                    ),
                    h[:4],
                )

    def kubectl(self, n: int) -> None:
        """kubectl's writes: merge and strategic merge patches (+json), JSON patches, server-side apply (YAML)."""
        for i in range(n):
            h = self.api("k8s-prod.example.dev")
            ns = self.pick(("payments", "search", "web"))
            name = self.pick(("api", "worker", "frontend"))
            kind = i % 5
            if kind == 0:
                h[-1] = ("Content-Type", "application/strategic-merge-patch+json")
                doc: Any = {
                    "spec": {
                        "template": {
                            "metadata": {
                                "annotations": {
                                    "kubectl.kubernetes.io/restartedAt": f"2026-12-05T09:{self.rng.randint(10, 59)}:00Z"
                                }
                            }
                        }
                    }
                }
                self.add(
                    "kubectl",
                    "PATCH",
                    f"/apis/apps/v1/namespaces/{ns}/deployments/{name}?fieldManager=kubectl-rollout",
                    h,
                    self.json(doc),
                )
            elif kind == 1:
                h[-1] = ("Content-Type", "application/merge-patch+json")
                doc = {"metadata": {"labels": {"team": self.pick(("checkout", "search")), "tier": "backend"}}}
                self.add(
                    "kubectl",
                    "PATCH",
                    f"/api/v1/namespaces/{ns}/services/{name}?fieldManager=kubectl-label",
                    h,
                    self.json(doc),
                )
            elif kind == 2:
                h[-1] = ("Content-Type", "application/strategic-merge-patch+json")
                doc = {
                    "spec": {
                        "template": {
                            "spec": {
                                "containers": [
                                    {
                                        "name": name,
                                        "image": f"registry.example.dev/{ns}/{name}:v{self.rng.randint(1, 9)}."
                                        f"{self.rng.randint(0, 40)}.{self.rng.randint(0, 9)}",
                                    }
                                ]
                            }
                        }
                    }
                }
                self.add(
                    "kubectl",
                    "PATCH",
                    f"/apis/apps/v1/namespaces/{ns}/deployments/{name}?fieldManager=kubectl-set",
                    h,
                    self.json(doc),
                )
            elif kind == 3:
                h[-1] = ("Content-Type", "application/json-patch+json")
                doc = [{"op": "replace", "path": "/spec/replicas", "value": self.rng.randint(2, 8)}]
                self.add(
                    "kubectl", "PATCH", f"/apis/apps/v1/namespaces/{ns}/deployments/{name}/scale", h, self.json(doc)
                )
            else:
                h[-1] = ("Content-Type", "application/apply-patch+yaml")
                body = (
                    f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}-flags\n  namespace: {ns}\ndata:\n"
                    f'  FEATURE_NEW_CHECKOUT: "{self.pick(("true", "false"))}"\n  LOG_LEVEL: info\n'
                )
                self.add(
                    "kubectl",
                    "PATCH",
                    f"/api/v1/namespaces/{ns}/configmaps/{name}-flags?fieldManager=kubectl&force=true",
                    h,
                    body.encode(),
                )

    def webhooks(self, n: int) -> None:
        for i in range(n):
            kind = i % 6
            h = [("Host", "hooks.example.app"), ("User-Agent", "")]
            if kind == 0:  # Sentry issue alert
                h[1] = ("User-Agent", "sentry")
                h += [
                    ("Sentry-Hook-Resource", "event_alert"),
                    ("Sentry-Hook-Signature", self.hex(32)),
                    ("Content-Type", "application/json"),
                ]
                doc: Any = {
                    "action": "triggered",
                    "data": {
                        "event": {
                            "title": self.pick(ERRORS).split("\n")[0],
                            "culprit": self.pick(("checkout.views.pay", "ProductList")),
                            "platform": self.pick(("python", "javascript", "go")),
                            "exception": {
                                "values": [
                                    {
                                        "stacktrace": {
                                            "frames": [
                                                {"filename": "app/models/order.rb", "lineno": 88, "function": "total"}
                                            ]
                                        }
                                    }
                                ]
                            },
                        },
                        "triggered_rule": "Errors in production",
                    },
                }
                self.add("webhook", "POST", "/sentry", h, self.json(doc))
            elif kind == 1:  # Bitbucket push
                h[1] = ("User-Agent", "Bitbucket-Webhooks/2.0")
                h += [("X-Event-Key", "repo:push"), ("X-Hook-UUID", self.uid()), ("Content-Type", "application/json")]
                doc = {
                    "push": {
                        "changes": [
                            {
                                "new": {
                                    "type": "branch",
                                    "name": "feature/preise-ch",
                                    "target": {
                                        "hash": self.hex(20),
                                        "message": self.pick(
                                            (
                                                "Fix VAT rounding for CH\n",
                                                "Übersetzungen ergänzt\n",
                                                "Merge branch 'main' into feature/preise-ch\n",
                                            )
                                        ),
                                    },
                                }
                            }
                        ]
                    },
                    "actor": {"display_name": " ".join(self.pick(PEOPLE))},
                }
                self.add("webhook", "POST", "/bitbucket", h, self.json(doc))
            elif kind == 2:  # SendGrid event webhook: a JSON array
                h[1] = ("User-Agent", "SendGrid Event API")
                h += [
                    ("X-Twilio-Email-Event-Webhook-Signature", base64.b64encode(self.rng.randbytes(70)).decode()),
                    ("Content-Type", "application/json"),
                ]
                doc = [
                    {
                        "email": self.person()["email"],
                        "timestamp": 1796000000 + k,
                        "event": self.pick(("delivered", "open", "click", "bounce")),
                        "sg_message_id": self.b64url(16) + ".filter0001",
                        "url": "https://shop.example.app/de/angebote?utm_source=newsletter",
                    }
                    for k in range(self.rng.randint(1, 5))
                ]
                self.add("webhook", "POST", "/sendgrid/events", h, self.json(doc))
            elif kind == 3:  # Mailgun inbound route: form-encoded
                h[1] = ("User-Agent", "mailgun/treq-2.0")
                p = self.person()
                f = {
                    "sender": p["email"],
                    "recipient": "support@example.app",
                    "subject": self.pick(("Re: Ihre Bestellung #4711", "Problème de livraison", "請求書について")),
                    "body-plain": self.pick(CHAT),
                    "timestamp": str(1796000000 + i),
                    "token": self.hex(25),
                    "signature": self.hex(32),
                }
                h.append(("Content-Type", "application/x-www-form-urlencoded"))
                self.add("webhook", "POST", "/mailgun/inbound", h, urllib.parse.urlencode(f).encode())
            elif kind == 4:  # Alertmanager
                h[1] = ("User-Agent", "Alertmanager/0.29.0")
                h.append(("Content-Type", "application/json"))
                name, summary, expr = self.pick(ALERTS)
                doc = {
                    "version": "4",
                    "status": self.pick(("firing", "resolved")),
                    "receiver": "platform-team",
                    "groupLabels": {"alertname": name},
                    "alerts": [
                        {
                            "status": "firing",
                            "labels": {
                                "alertname": name,
                                "severity": "warning",
                                "instance": f"10.0.{self.rng.randint(0, 9)}.{self.rng.randint(2, 250)}:9100",
                            },
                            "annotations": {"summary": summary, "expr": expr},
                            "startsAt": "2026-12-05T09:14:22Z",
                            "generatorURL": "http://prometheus:9090/graph?g0.expr=up",
                        }
                    ],
                }
                self.add("webhook", "POST", "/alertmanager", h, self.json(doc))
            else:  # CloudEvents: structured mode (+json) or binary mode (ce- headers)
                h[1] = ("User-Agent", "Go-http-client/1.1")
                data = {
                    "orderId": self.uid(),
                    "total": {"amount": str(self.rng.randint(500, 90000)), "currency": "EUR"},
                }
                if self.rng.random() < 0.5:
                    h.append(("Content-Type", "application/cloudevents+json; charset=utf-8"))
                    doc = {
                        "specversion": "1.0",
                        "type": "app.example.order.paid",
                        "source": "/payments/eu",
                        "id": self.uid(),
                        "time": "2026-12-05T09:14:22Z",
                        "datacontenttype": "application/json",
                        "data": data,
                    }
                    self.add("webhook", "POST", "/events", h, self.json(doc))
                else:
                    h += [
                        ("ce-specversion", "1.0"),
                        ("ce-type", "app.example.order.paid"),
                        ("ce-source", "/payments/eu"),
                        ("ce-id", self.uid()),
                        ("Content-Type", "application/json"),
                    ]
                    self.add("webhook", "POST", "/events", h, self.json(data))

    def search(self, n: int) -> None:
        names = ("search", "keyword", "term", "k", "suche", "recherche")
        for i in range(n):
            lang, phrase = self.pick(SEARCHES)
            kind = i % 4
            if kind in (0, 1):  # a site's search page
                q = {self.pick(names): phrase}
                if self.rng.random() < 0.4:
                    q["sort"] = self.pick(("price_asc", "relevance", "newest"))
                    q["lang"] = lang
                self.add(
                    "search",
                    "GET",
                    f"/{lang}/search?" + urllib.parse.urlencode(q),
                    self.browser("www.example.shop", True),
                )
            elif kind == 2:  # Algolia-style multi-query (JSON, params as a query string inside)
                params = urllib.parse.urlencode(
                    {"query": phrase, "hitsPerPage": 24, "facetFilters": f'[["lang:{lang}"]]'}
                )
                doc: dict[str, Any] = {"requests": [{"indexName": f"products_{lang}", "params": params}]}
                h = [*self.browser("search.example.shop", False), ("Content-Type", "application/x-www-form-urlencoded")]
                h.append(("x-algolia-application-id", "EXAMPLE42"))
                self.add("search", "POST", "/1/indexes/*/queries", h, self.json(doc))
            else:  # a JSON search API with filters
                doc = {
                    "text": phrase,
                    "filters": {"in_stock": True, "price": {"lte": self.rng.randint(20, 500)}},
                    "locale": lang,
                    "page": {"size": 20, "number": self.rng.randint(1, 3)},
                }
                h = [*self.browser("www.example.shop", False), ("Content-Type", "application/json")]
                self.add("search", "POST", "/api/catalog/search", h, self.json(doc))

    def pages(self, n: int) -> None:
        """Pages and fragments of other sites: HTMX, Turbo and Next.js requests with their own headers."""
        paths = (
            "/de/",
            "/fr-ca/produits/theiere-en-fonte",
            "/pt-br/conta/pedidos",
            "/ja/cart",
            "/sv/kassa",
            "/cs/kontakt",
            "/blog/2026/12/winter-sale",
            "/hilfe/rueckgabe",
        )
        for i in range(n):
            kind = i % 4
            h = self.browser("www.example.shop", kind == 0)
            if kind == 0:
                self.add("browser", "GET", self.pick(paths), h)
            elif kind == 1:  # HTMX
                h += [
                    ("HX-Request", "true"),
                    ("HX-Current-URL", "https://www.example.shop" + self.pick(paths)),
                    ("HX-Target", self.pick(("cart-count", "search-results", "reviews"))),
                ]
                self.add(
                    "browser",
                    "GET",
                    f"/partials/{self.pick(('cart', 'reviews', 'stock'))}?sku=SKU-{self.rng.randint(1000, 9999)}",
                    h,
                )
            elif kind == 2:  # Next.js App Router (RSC) navigation
                tree = json.dumps(
                    [
                        "",
                        {
                            "children": [
                                "(shop)",
                                {"children": ["produkte", {"children": ["__PAGE__", {}, None, None]}, None, None]},
                                None,
                                None,
                            ]
                        },
                        None,
                        None,
                        True,
                    ]
                )
                h += [("RSC", "1"), ("Next-Router-State-Tree", urllib.parse.quote(tree)), ("Next-Url", "/produkte")]
                self.add("browser", "GET", f"/produkte/{self.rng.randint(100, 999)}?_rsc={self.b64url(4)}", h)
            elif self.rng.random() < 0.5:
                h += [("Turbo-Frame", "order_summary"), ("Accept", "text/vnd.turbo-stream.html, text/html")]
                self.add("browser", "GET", "/checkout/summary", h)
            else:
                doc = {
                    "type": "pageview",
                    "url": "https://www.example.shop" + self.pick(paths),
                    "referrer": "https://www.google.com/",
                    "screen": "390x844",
                }
                h.append(("Content-Type", "text/plain;charset=UTF-8"))
                self.add("browser", "POST", "/api/event", h, self.json(doc))

    def forms(self, n: int) -> None:
        for i in range(n):
            kind = i % 4
            h = self.browser("www.example.shop", False)
            h.append(("Content-Type", "application/x-www-form-urlencoded"))
            p = self.person()
            street, postal, city, country = self.pick(ADDRESSES)
            if kind == 0:  # Laravel contact form
                f = {
                    "_token": self.b64url(30),
                    "name": f"{p['first']} {p['last']}",
                    "email": p["email"],
                    "nachricht": self.pick(CHAT),
                    "privacy": "on",
                }
                self.add("form", "POST", "/kontakt", h, urllib.parse.urlencode(f).encode())
            elif kind == 1:  # Symfony registration
                secret = "".join(self.rng.choices(string.ascii_letters + string.digits + "!#%&*+-=?", k=18))
                f = {
                    "registration_form[email]": p["email"],
                    "registration_form[plainPassword][first]": secret,
                    "registration_form[plainPassword][second]": secret,
                    "registration_form[agreeTerms]": "1",
                    "registration_form[_token]": self.b64url(32),
                }
                self.add("form", "POST", "/register", h, urllib.parse.urlencode(f).encode())
            elif kind == 2:  # ASP.NET WebForms postback
                f = {
                    "__EVENTTARGET": "ctl00$MainContent$btnSave",
                    "__EVENTARGUMENT": "",
                    "__VIEWSTATE": base64.b64encode(self.rng.randbytes(self.rng.randint(120, 600))).decode(),
                    "__VIEWSTATEGENERATOR": self.hex(4).upper(),
                    "__EVENTVALIDATION": base64.b64encode(self.rng.randbytes(80)).decode(),
                    "ctl00$MainContent$txtCompany": self.pick(
                        ("Müller & Söhne KG", "Lefèvre SARL", "株式会社サンプル")
                    ),
                    "ctl00$MainContent$txtStreet": street,
                    "ctl00$MainContent$ddlCountry": country,
                }
                self.add(
                    "form",
                    "POST",
                    "/Kunden/Bearbeiten.aspx?id=" + str(self.rng.randint(1, 9999)),
                    h,
                    urllib.parse.urlencode(f).encode(),
                )
            else:  # Magento checkout address step (form-encoded with nested names)
                f = {
                    "form_key": self.b64url(12),
                    "firstname": p["first"],
                    "lastname": p["last"],
                    "street[0]": street,
                    "postcode": postal,
                    "city": city,
                    "country_id": country,
                    "telephone": f"+{self.rng.randint(30, 99)} {self.rng.randint(100, 999)} "
                    f"{self.rng.randint(100000, 999999)}",
                    "customer_notes": self.pick(("Bitte beim Nachbarn abgeben", "Sonner deux fois", "", "置き配希望")),
                }
                self.add("form", "POST", "/checkout/address/save", h, urllib.parse.urlencode(f).encode())


def generate() -> Iterator[Request]:
    g = Gen()
    g.oauth(96)
    g.openapi(45)
    g.iac(72)
    g.ci(60)
    g.chat(132)
    g.bulk(40)
    g.graphql(70)
    g.s3(60)
    g.jsonapi(21)
    g.kubectl(40)
    g.webhooks(90)
    g.search(140)
    g.pages(120)
    g.forms(80)
    yield from g.out


def main() -> int:
    return generator_main(__doc__, CORPORA / f"{NAME}.jsonl", generate)


if __name__ == "__main__":
    sys.exit(main())
