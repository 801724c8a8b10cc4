"""Build waf/corpora/benign-fifth.jsonl: a fifth benign corpus, the held-out benign set of the fourth tuning
round (2026-12-07), written and committed before anything was measured on it and before the round changed
any exclusion.

benign-fourth was read after the third round (docs/waf.md lists its false positives), so it is tuning data
from then on; this corpus takes its place. It is different in kind and in field names from the four others:
e-commerce carts, checkouts and product reviews (Shopify Storefront-like carts, WooCommerce Store API,
commercetools, Trustpilot- and Yotpo-like reviews and product questions), chat and messaging (Rocket.Chat,
Microsoft Teams' Bot Framework activities, Slack's chat.postMessage with blocks, Chatwoot, Twist), CI/CD and
infrastructure APIs (Jenkins parameters, Drone, Tekton, Argo Workflows, AWX job launches with extra vars,
Nomad jobs, Woodpecker, Spinnaker, GitHub deployments), calendar and mail (Google Calendar events, JMAP
Email/set, Microsoft Graph sendMail, CalDAV-like tasks), translation and i18n payloads (DeepL's form, Google
Translate v2, Crowdin, Lokalise and Phrase key uploads with ICU message format, i18next bundles), log search
queries (Splunk SPL, Datadog logs, CloudWatch Logs Insights, LogQL over GET, NRQL, Graylog), support tickets
under helpdesks' own field names (Help Scout, Front, Zammad, osTicket, Gorgias) with the SQL, shell and
punctuation people paste into them, and account settings forms.

Every text here was written for this corpus (the project's own licence); nothing is read at generation time.
Deterministic: every choice comes from random.Random(SEED) in a fixed order:

    python -m envoy_waf.fifth           # from waf/, in .venv-waf (make waf-corpora)

The templates are not to be edited because of a verdict: a changed template makes a new corpus, which has to
be measured as a new held-out set (waf/corpora/README.md).
"""

# ruff: noqa: RUF001 (names and texts in other scripts hold letters that look like Latin ones, on purpose)
from __future__ import annotations

import string
import sys
import urllib.parse
from collections.abc import Iterator
from typing import Any

from .traffic import CORPORA, HeldOutGen, Request, generator_main, query

SEED = 5555
NAME = "benign-fifth"

# --- clients -----------------------------------------------------------------------------------------------
TOOLS = (
    "node-fetch/3.3.2",
    "axios/1.8.4",
    "okhttp/4.12.0",
    "Go-http-client/2.0",
    "python-requests/2.32.5",
    "Ruby",
    "RestSharp/112.1.0.0",
    "reqwest/0.12.12",
    "Jenkins/2.492.1",
    "Terraform/1.10.5",
    "aws-sdk-js/3.750.0",
    "Botkit/4.15",
)
BROWSER_UAS = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 "
    "Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:146.0) Gecko/20100101 Firefox/146.0",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 26_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/26.1 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 15; Pixel 9) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Mobile "
    "Safari/537.36",
)
LANGUAGES = (
    "en-GB,en;q=0.9",
    "nl-NL,nl;q=0.9,en;q=0.8",
    "pt-BR,pt;q=0.9,en;q=0.8",
    "it-IT,it;q=0.9,en;q=0.8",
    "pl-PL,pl;q=0.9,en;q=0.8",
    "sv-SE,sv;q=0.9,en;q=0.8",
    "tr-TR,tr;q=0.9,en;q=0.8",
    "zh-CN,zh;q=0.9,en;q=0.8",
    "id-ID,id;q=0.9,en;q=0.8",
)

# --- texts, written for this corpus -----------------------------------------------------------------------
PEOPLE = (
    ("Maarten", "de Vries"),
    ("Inês", "Conceição"),
    ("Giulia", "Dell'Orto"),
    ("Wojciech", "Szymański"),
    ("Astrid", "Lindqvist"),
    ("Emre", "Çelik"),
    ("王", "芳"),
    ("Siti", "Nurhaliza"),
    ("Liam", "O'Sullivan"),
    ("Chiara", "D'Angelo"),
    ("Rhys", "ap Gruffydd"),
    ("Thandiwe", "Nkosi"),
    ("Mateus", "Araújo"),
    ("Hana", "Nováková"),
    ("Ólafur", "Þórsson"),
    ("Yuki", "Tanaka-Smith"),
    ("Aoife", "Mac Giolla"),
    ("José María", "García-Lorca"),
)
PRODUCTS = (
    ("Merino crew sock (3-pack)", "SOCK-MER-3PK"),
    ('Cast-iron skillet, 10"', "SKL-CI-10"),
    ("Kids' rain jacket – navy/yellow", "KRJ-NVY-116"),
    ("USB-C cable 2 m (100 W)", "CBL-USBC-2M"),
    ("Espresso beans 'Nocturne' 1 kg", "COF-NOC-1KG"),
    ("Desk lamp w/ dimmer & USB port", "LMP-DSK-01"),
    ("Board game: Cities & Knights (EN/DE)", "BG-CK-ENDE"),
    ("Linen duvet cover 200x220 cm", "LIN-DUV-200"),
    ("Trail shoes, men's 44½", "TRL-M-445"),
    ("Notebook A5 dotted (pack of 2)", "NB-A5-DOT-2"),
)
GIFT_NOTES = (
    "Happy b'day, Mom! <3 Love, T.",
    "Congrats on the new job!!! (finally...)",
    "For the office kitchen - please don't leave it at reception :)",
    "Merry Christmas & a happy 2027 -- the Janssens",
    "Sorry it's late; the \"express\" shipping wasn't.",
    "To: Gran / From: all of us (incl. the dog)",
    "Leave at the back door if nobody answers; code is 4#21",
)
DELIVERY_NOTES = (
    "Ring twice, the bell's broken. Flat 3B (2nd floor, left).",
    "Please don't leave with neighbour @ no. 12 again!",
    "Deliver between 8-12 a.m. only; I work nights.",
    "Gate code: *1234# -- then 3rd door on the right",
    "If not home, use the parcel locker 'Packstation 118'.",
    "Fragile!! Glass inside (wine glasses x6)",
)
COUPONS = ("WELCOME10", "BF-2026", "FREESHIP", "SAVE15NOW", "XMAS_25", "STUDENT-EDU")
REVIEW_TITLES = (
    "Does exactly what it says",
    "Not bad, but... (read before buying)",
    "5 stars!!! would buy again",
    "Returned it - size 'M' is more like an 'S'",
    'Great value for $29.99 - "premium" it is not',
    "Solid; one minor gripe",
    "Meh.",
    "Works with my 2019 MacBook (after a firmware update)",
)
REVIEW_TEXTS = (
    "Arrived in 2 days. The cable is thicker than I expected (good!) and charges my laptop at full 100W.",
    "I've had it for 3 months now: no pilling, no holes. Wash at 30°C and don't tumble dry, that's all.",
    "The handle gets HOT -- use a mitt. Otherwise it's the best pan I've owned; seasoning held up fine.",
    "Sizing runs small. My son is 116 cm and the 116 fits him 'just'. Order one size up, or two if you "
    "want it to last a winter.",
    "Beans are fresh (roasted 5 days before delivery) but a bit too dark for my taste; 3.5/5 on a V60, 4.5/5 "
    "as espresso.",
    "Update: customer service replaced the faulty dimmer within a week, no questions asked. Raising to 4 stars.",
    "Rules are in English & German, which is great for our family. Box says 3-4 players; it works with 2 too.",
    "Compared to the 'Sleepwell' one it's softer, but the buttons (yes, buttons, not a zip) are fiddly.",
    "Don't bother with the 'wide' version if you have narrow feet... they slip at the heel after ~10 km.",
    "Paper takes fountain pen ink without bleeding through. Tried: Lamy blue, Pilot Iroshizuku, Diamine.",
    "Wish it came with a plug; it's USB-only. Also: the light is 4000K, not 'warm white' as advertised?",
    "Honestly? It's fine. Nothing more, nothing less. Price/quality = OK.",
    "Ottimo prodotto, spedizione veloce. L'unica pecca: la scatola era un po' rovinata.",
    "Heel goed! Past perfect, en de kleur is precies zoals op de foto's.",
    "Produto chegou antes do prazo; recomendo (mas o manual é só em inglês).",
    "Çok güzel, fiyatına göre kaliteli. Kargo biraz gecikti ama sorun değil.",
    "质量很好，物流也快。就是颜色比图片上的稍微深一点。",
)
PRODUCT_QUESTIONS = (
    "Is this dishwasher-safe? The listing says 'hand wash' but the box says otherwise.",
    'Does it fit a 15.6" laptop (35.8 x 24.5 cm)?',
    "Can I use it on induction hobs?",
    "What's the difference between this & the 'Pro' version?",
    "Will it be restocked before the 20th? Need it for a gift :(",
)
CHAT_LINES = (
    "lunch @ 12:30? the thai place (not the other one) 🍜",
    "can someone approve my PR? it's a one-liner: `retries = 3` -> `retries = 5`",
    "prod deploy is done ✅ -- watch the error rate for the next 15 min pls",
    "FYI the staging DB password rotated; grab it from the vault, not from Slack (!!)",
    "who broke main? `go test ./...` fails on TestCheckout (timeout after 30s)",
    "Running `kubectl -n shop rollout undo deploy/cart` now, ping me if anything looks off",
    "The query was `SELECT id, status FROM orders WHERE created_at > now() - interval '1 day'` -- 12k rows",
    "ok so `rm -rf node_modules && npm ci` fixed it... classic",
    'is it "e-mail" or "email" in the style guide? asking for the onboarding copy',
    "Retro notes: (1) flaky tests, (2) too many meetings, (3) on-call handover. Add yours below ⬇️",
    "@here the office is closed on Dec 24th & 31st; remote is fine",
    "grep for it: `grep -rn 'TODO(release)' src/ | wc -l` gives 41 right now",
    "Ik ben er morgen niet, mijn taken staan in het bord (kolom 'wacht op review').",
    "Alguém sabe por que o job 'nightly-export' falhou? O log diz: permission denied (publickey).",
    "Qualcuno ha accesso a Grafana? Il pannello 'p99 latency' è vuoto da ieri sera.",
    "nvm, found it -- the env var was `DATABASE_URL=postgres://app@db:5432/shop?sslmode=require`",
    "Reminder: 1:1s this week are 25 min, not 30 (calendar's updated)",
    "does `curl -sS https://status.example.org/api | jq '.components[] | select(.status != \"ok\")'` work for you?",
)
PIPELINE_COMMANDS = (
    "make lint test",
    "npm ci && npm run build -- --mode production",
    "./gradlew :app:assembleRelease --no-daemon",
    "docker build -t registry.example.org/shop/cart:${GIT_COMMIT} .",
    "helm upgrade --install cart charts/cart -f values/prod.yaml --atomic --timeout 10m",
    "pytest -q -k 'not slow' --maxfail=3",
    "terraform plan -out=tfplan -var-file=env/prod.tfvars",
    "cargo test --workspace --locked",
    "ansible-playbook site.yml -l 'web:&prod' --diff",
    "mvn -B verify -Dspring.profiles.active=ci",
    "bundle exec rspec spec/models --format progress",
    "kubectl apply -k overlays/staging && kubectl rollout status deploy/api -n staging",
)
BRANCHES = ("main", "release/2026.12", "feature/cart-v2", "fix/checkout-rounding", "renovate/go-1.24")
MEETING_SUMMARIES = (
    "Sprint planning (team Cart)",
    "Q1 roadmap review",
    "1:1 Maarten / Inês",
    "Incident review: checkout outage (Dec 3rd)",
    "Lunch & learn: Postgres indexes 101",
    "Interview – Senior SRE (round 2)",
    "Board prep -- DO NOT MOVE",
)
MEETING_DESCRIPTIONS = (
    "Agenda:\n1. Last sprint's carry-over\n2. Capacity (2 people out)\n3. Pick stories from the top of the "
    "backlog\n\nJoin: https://meet.example.com/abc-defg-hij",
    'Pre-read: the doc "Roadmap 2027 (draft v3)" -- comments by Thursday, please.',
    "Timeline, root cause and actions. We'll go through the `pg_stat_activity` dump and the deploy log.",
    "Bring questions! We'll cover EXPLAIN ANALYZE, btree vs. gin, and why `WHERE lower(email) = ...` "
    "ignored our index.",
    "Panel: Ana, Rhys. Focus on incident handling & Kubernetes (no trivia questions).",
    "Dial-in: +31 20 123 4567, PIN 998877#",
)
LOCATIONS = (
    "Room 4.12 'Amsterdam' (4th floor)",
    "Café Central, Herrengasse 14, Wien",
    "Online (Google Meet)",
    "HQ – big kitchen",
    "Rua Augusta 120, Lisboa",
)
MAIL_SUBJECTS = (
    "Re: your order #100482 (delayed)",
    "Invoice 2026-1187 – payment reminder",
    "Fwd: [Action required] Renew your TLS certificate",
    "Out of office until Jan 5th",
    "Quick question about the API rate limits",
    'Meeting notes: "Checkout v2" kickoff',
)
MAIL_BODIES = (
    "Hi Liam,\n\nthanks for the quick reply. Could you re-send the invoice as PDF? The link says 'expired'.\n\n"
    "Best,\nGiulia",
    "Hello,\n\nI'm out of the office until Jan 5th with limited access to e-mail. For urgent matters, "
    "contact support@shop.example (or call +44 20 7946 0000).\n\nRegards",
    "Hi team,\n\nthe cert for *.shop.example expires on 2026-12-20. Steps:\n  1) certbot renew --dry-run\n"
    "  2) systemctl reload nginx\n\nPlease confirm once done!",
    "Dear Sir/Madam,\n\nwe are hitting HTTP 429 at ~50 req/s. Is the limit per key or per IP? We use "
    "`Authorization: Bearer ...` from 3 servers.\n\nKind regards,\nWojciech",
    '<p>Hi all,</p><p>notes from today are <a href="https://docs.example.com/d/checkout-v2">here</a>. '
    "Actions:</p><ul><li>Astrid: price rounding</li><li>Emre: load test (k6)</li></ul>",
)
# i18n: source strings as products ship them (ICU message format, printf, placeholders, HTML tags in
# strings), and their translations.
I18N_STRINGS = (
    ("cart.items", "{count, plural, one {# item} other {# items}} in your cart"),
    ("cart.remove_confirm", 'Remove "{product}" from your cart?'),
    ("checkout.total", "Total: %s (incl. %s VAT)"),
    ("checkout.free_shipping", "Add {amount} more for <b>free shipping</b>!"),
    ("review.helpful", "{name} and {n, plural, =0 {nobody else} one {one other} other {# others}} found this helpful"),
    ("errors.required", 'Please fill in "{field}".'),
    ("account.greeting", "Welcome back, %1$s! You have %2$d new messages."),
    ("footer.copyright", "© 2026 Shop & Co. – All rights reserved."),
    ("search.no_results", "No results for '{query}'. Try fewer words, or check the spelling."),
    ("orders.status", "{status, select, shipped {Shipped on {date}} delivered {Delivered} other {Processing}}"),
    ("password.hint", "At least 12 characters; use letters, numbers & symbols (e.g. ! ? # %)."),
    ("a11y.close", "Close dialog (Esc)"),
)
I18N_TRANSLATIONS = {
    "de": (
        "{count, plural, one {# Artikel} other {# Artikel}} im Warenkorb",
        "„{product}“ aus dem Warenkorb entfernen?",
        "Gesamt: %s (inkl. %s MwSt.)",
        "Noch {amount} bis zum <b>kostenlosen Versand</b>!",
    ),
    "fr": (
        "{count, plural, one {# article} other {# articles}} dans votre panier",
        "Retirer « {product} » de votre panier ?",
        "Total : %s (dont %s de TVA)",
        "Plus que {amount} pour la <b>livraison gratuite</b> !",
    ),
    "it": (
        "{count, plural, one {# articolo} other {# articoli}} nel carrello",
        'Rimuovere "{product}" dal carrello?',
        "Totale: %s (IVA %s inclusa)",
        "Aggiungi {amount} per la <b>spedizione gratuita</b>!",
    ),
    "pl": (
        "{count, plural, one {# produkt} few {# produkty} many {# produktów} other {# produktu}} w koszyku",
        "Usunąć „{product}” z koszyka?",
        "Razem: %s (w tym %s VAT)",
        "Jeszcze {amount} do <b>darmowej dostawy</b>!",
    ),
    "ja": (
        "カートに{count}点の商品があります",
        "「{product}」をカートから削除しますか？",
        "合計：%s（うち消費税 %s）",
        "あと{amount}で<b>送料無料</b>！",
    ),
    "tr": (
        "Sepetinizde {count} ürün var",
        '"{product}" sepetten çıkarılsın mı?',
        "Toplam: %s (%s KDV dahil)",
        "<b>Ücretsiz kargo</b> için {amount} daha ekleyin!",
    ),
}
TRANSLATE_TEXTS = (
    "Where's the nearest train station? I'd like to get to the airport by 6 a.m.",
    "The package (order #4471) hasn't arrived yet -- can you check?",
    "Terms & Conditions apply; see section 4(b).",
    "Hi! Is the apartment still available for Dec 27-30? We're 2 adults + 1 child.",
    "Error: \"Connection refused\" when I click 'Sync now'.",
    "Mix flour, sugar & butter; bake at 180 °C for 25-30 min (or until golden).",
    'Please select the items you\'d like to return, then click "Next".',
)
# Log searches as people type them in their tools' query languages.
SPLUNK = (
    "search index=web sourcetype=nginx status>=500 | stats count by uri_path | sort -count | head 20",
    'search index=app "payment failed" earliest=-24h | timechart span=1h count',
    'search index=k8s namespace=shop container=cart level=error | rex "order_id=(?<order>\\d+)" | table _time '
    "order msg",
    "search index=auth action=failure user=* | stats dc(src_ip) as ips by user | where ips > 5",
    'search index=db "deadlock detected" OR "could not serialize access" | top limit=10 host',
)
DATADOG = (
    "service:checkout status:error @http.status_code:[500 TO 599]",
    "env:prod service:cart -@http.url_details.path:/health* @duration:>2000000000",
    '@error.kind:TimeoutError "upstream request timeout"',
    "source:postgresql @db.statement:*UPDATE* @duration:>1s",
    "host:web-0? (status:warn OR status:error) -service:synthetics",
)
CLOUDWATCH = (
    "fields @timestamp, @message | filter @message like /ERROR/ | sort @timestamp desc | limit 50",
    "stats count(*) by bin(5m) | filter statusCode >= 500",
    "fields @timestamp, requestId, latency | filter latency > 1000 and path != '/health' | sort latency desc",
    "parse @message '[*] *: *' as level, logger, msg | filter level = 'WARN' | stats count() by logger",
)
LOGQL = (
    '{namespace="shop", app="cart"} |= "error" != "healthz"',
    'sum by (status) (rate({job="nginx"} | json | status >= 500 [5m]))',
    '{app="payments"} | logfmt | duration > 2s | line_format "{{.method}} {{.path}} {{.duration}}"',
    'count_over_time({container="worker"} |~ "(?i)timeout|deadline exceeded" [1h])',
)
NRQL = (
    "SELECT count(*) FROM Transaction WHERE appName = 'cart-api' AND httpResponseCode >= '500' SINCE 1 hour "
    "ago TIMESERIES",
    "SELECT percentile(duration, 95) FROM Transaction FACET name SINCE yesterday LIMIT 20",
    "SELECT average(cpuPercent) FROM SystemSample WHERE hostname LIKE 'web-%' SINCE 30 minutes ago",
    "SELECT uniqueCount(session) FROM PageView WHERE pageUrl LIKE '%/checkout%' SINCE today COMPARE WITH 1 week ago",
)
GRAYLOG = (
    "source:web-01 AND http_status:[500 TO 599]",
    'message:"OutOfMemoryError" AND NOT application:batch',
    "level:<=3 AND facility:kernel",
    "_exists_:user_id AND action:(login OR logout)",
)
# Support tickets: what customers and engineers type, with the SQL, shell, paths and punctuation they paste.
TICKET_SUBJECTS = (
    "Export to CSV doesn't include the 'notes' column",
    "Can't log in after password reset (error 'invalid_grant')",
    "Refund for order #100917?",
    "API returns 500 when the name contains an apostrophe",
    "Webhook retries never stop",
    "Slow dashboard since last update",
    'Import fails: "unexpected end of file"',
    "Billing address won't save (Côte d'Ivoire)",
)
TICKET_BODIES = (
    "Hi,\n\nwhen I export orders the 'notes' column is empty, although the UI shows notes. Steps: Orders > "
    "Export > CSV (all columns). Browser: Firefox 146.\n\nThanks!",
    "Since the update our nightly job fails. The query it runs is:\n\n    SELECT o.id, o.total, c.email\n"
    "    FROM orders o JOIN customers c ON c.id = o.customer_id\n    WHERE o.status = 'paid' AND o.updated_at >= "
    "'2026-12-01';\n\nIt used to take 2s, now it times out after 60s. Did you drop an index?",
    'Customer "O\'Brien & Sons" can\'t be saved, the API answers 500. Request body was {"name": "O\'Brien & '
    'Sons", "vat": "IE1234567T"}. Other names work fine.',
    "Your webhook keeps retrying even though our endpoint answers 200. From our nginx log:\n\n"
    '  203.0.113.7 - - [06/Dec/2026:22:14:03 +0000] "POST /hooks/shop HTTP/1.1" 200 2 "-" '
    '"Shop-Webhooks/2.1"\n\nSame event id every 5 minutes (evt_8KQ...).',
    "I ran `curl -v -H 'Authorization: Bearer <token>' https://api.shop.example/v2/orders?limit=1` and get "
    "401 every time; the token was created 5 minutes ago (scope: orders:read).",
    'The import stops at line 1,204. That line is: 4471;"Kids\' rain jacket – navy/yellow";2;19,99;"gift; '
    'wrap it"\nIs the semicolon inside quotes the problem?',
    "Our admin deleted a product by mistake (id 88213). Can you restore it? We tried `DELETE` -> `UNDO` in "
    "the audit log but the button is greyed out.",
    "Dashboard takes ~40s to load since Tuesday. Console shows: Uncaught (in promise) TypeError: "
    "Cannot read properties of undefined (reading 'map') at chart.js:1:88412",
    "On our server (Ubuntu 24.04) the CLI fails: `shopctl sync --since=2026-12-01 > /tmp/sync.log 2>&1` "
    "exits with code 137. dmesg says: Out of memory: Killed process 4123 (shopctl).",
    'Billing address with "Côte d\'Ivoire" as country is rejected ("invalid value"). Also tried '
    "'Ivory Coast' - same thing.",
    "Bonjour, je n'arrive pas à télécharger ma facture (erreur « 403 Forbidden »). Pouvez-vous m'aider ?",
    'Hallo, die Suche findet "Kinder-Regenjacke" nicht, nur "Regenjacke". Ist das ein Bug?',
    "Is there a way to bulk-update prices? Something like UPDATE products SET price = price * 1.05 WHERE "
    "category = 'socks'; but via the API :)",
    'We see duplicate orders when customers double-click "Pay". Could you add an idempotency key (like '
    "Stripe's)? Our workaround: `if (busy) return;` in the button handler...",
)


class Gen(HeldOutGen):
    def __init__(self) -> None:
        super().__init__(NAME, "fifth", SEED)

    # --- helpers -----------------------------------------------------------------------------------------

    def api(self, host: str, content_type: str | None = "application/json") -> list[tuple[str, str]]:
        h = [("Host", host), ("User-Agent", self.pick(TOOLS)), ("Accept", "application/json")]
        h.append(("Authorization", "Bearer " + self.b64url(32)))
        if content_type:
            h.append(("Content-Type", content_type))
        return h

    def browser(self, host: str, content_type: str | None = None) -> list[tuple[str, str]]:
        h = [("Host", host), ("User-Agent", self.pick(BROWSER_UAS))]
        h += [("Accept", "application/json, text/plain, */*"), ("Accept-Language", self.pick(LANGUAGES))]
        h += [("Accept-Encoding", "gzip, deflate, br, zstd"), ("Origin", f"https://{host}")]
        h.append(("Cookie", f"session={self.b64url(24)}; cart_token={self.hex(12)}"))
        if content_type:
            h.append(("Content-Type", content_type))
        return h

    def person(self) -> dict[str, str]:
        first, last = self.pick(PEOPLE)
        local = "".join(c for c in (first + last).lower() if c in string.ascii_lowercase) or "user"
        return {"first": first, "last": last, "email": f"{local}.{self.rng.randint(2, 98)}@post.example"}

    # --- families ----------------------------------------------------------------------------------------
    def carts(self, n: int) -> None:
        """Carts and checkouts: a storefront's GraphQL cart, WooCommerce's Store API, commercetools' update
        actions, a checkout form with delivery notes."""
        for i in range(n):
            kind = i % 5
            name, sku = self.pick(PRODUCTS)
            if kind == 0:
                doc: dict[str, Any] = {
                    "query": "mutation cartLinesAdd($cartId: ID!, $lines: [CartLineInput!]!) { cartLinesAdd("
                    "cartId: $cartId, lines: $lines) { cart { id totalQuantity } userErrors { field message } } }",
                    "variables": {
                        "cartId": f"gid://shop/Cart/{self.hex(12)}",
                        "lines": [
                            {
                                "merchandiseId": f"gid://shop/ProductVariant/{self.rng.randint(10**9, 10**10)}",
                                "quantity": self.rng.randint(1, 4),
                                "attributes": [{"key": "Gift note", "value": self.pick(GIFT_NOTES)}],
                            }
                        ],
                    },
                }
                self.add(
                    "cart",
                    "POST",
                    "/api/2026-10/graphql.json",
                    self.browser("shop.example", "application/json"),
                    self.json(doc),
                )
            elif kind == 1:
                doc = {
                    "id": self.rng.randint(100, 9999),
                    "quantity": self.rng.randint(1, 3),
                    "variation": [{"attribute": "Size", "value": self.pick(("S", "M", "L", "44½", "116"))}],
                }
                h = [*self.browser("woo.example.net", "application/json"), ("Nonce", self.hex(5))]
                self.add("cart", "POST", "/wp-json/wc/store/v1/cart/add-item", h, self.json(doc))
            elif kind == 2:
                doc = {
                    "version": self.rng.randint(1, 40),
                    "actions": [
                        {"action": "addLineItem", "sku": sku, "quantity": self.rng.randint(1, 5)},
                        {"action": "setCustomField", "name": "deliveryNote", "value": self.pick(DELIVERY_NOTES)},
                        {"action": "addDiscountCode", "code": self.pick(COUPONS)},
                    ],
                }
                path = f"/shop-eu/me/carts/{self.uid()}"
                self.add("cart", "POST", path, self.api("api.europe-west1.commerce.example"), self.json(doc))
            elif kind == 3:
                p = self.person()
                fields = [
                    ("billing_first_name", p["first"]),
                    ("billing_last_name", p["last"]),
                    ("billing_email", p["email"]),
                    (
                        "billing_address_1",
                        self.pick(
                            (
                                "12 O'Connell Street",
                                "Rua das Flores, 45 - 2º Esq.",
                                "Via dell'Orso 7/B",
                                "ul. Świętokrzyska 30 m. 12",
                            )
                        ),
                    ),
                    ("billing_postcode", self.pick(("D01 F5P2", "1200-195", "20121", "00-116"))),
                    ("order_comments", self.pick(DELIVERY_NOTES)),
                    ("payment_method", self.pick(("stripe", "paypal", "bacs"))),
                    ("woocommerce-process-checkout-nonce", self.hex(5)),
                    ("_wp_http_referer", "/?wc-ajax=update_order_review"),
                ]
                h = self.browser("woo.example.net", "application/x-www-form-urlencoded; charset=UTF-8")
                self.add("cart", "POST", "/?wc-ajax=checkout", h, self.form(fields))
            else:
                doc = {
                    "coupon_code": self.pick(COUPONS),
                    "cart_id": self.uid(),
                    "gift_wrap": {"enabled": True, "message": self.pick(GIFT_NOTES)},
                    "items": [{"sku": sku, "name": name, "qty": self.rng.randint(1, 2)}],
                }
                self.add(
                    "cart",
                    "PUT",
                    "/storefront/v1/cart",
                    self.browser("store.example.org", "application/json"),
                    self.json(doc),
                )

    def reviews(self, n: int) -> None:
        """Product reviews and questions: a reviews platform's JSON, a shop's own review form."""
        for i in range(n):
            kind = i % 4
            name, sku = self.pick(PRODUCTS)
            p = self.person()
            if kind == 0:
                doc: dict[str, Any] = {
                    "sku": sku,
                    "product_title": name,
                    "review_score": self.rng.randint(1, 5),
                    "review_title": self.pick(REVIEW_TITLES),
                    "review_content": self.pick(REVIEW_TEXTS),
                    "display_name": f"{p['first']} {p['last'][0]}.",
                    "email": p["email"],
                    "custom_fields": {"--fit": self.pick(("Runs small", "True to size", "Runs large"))},
                }
                self.add(
                    "review",
                    "POST",
                    "/v1/widget/reviews",
                    self.browser("reviews.example.io", "application/json"),
                    self.json(doc),
                )
            elif kind == 1:
                doc = {
                    "stars": self.rng.randint(1, 5),
                    "title": self.pick(REVIEW_TITLES),
                    "text": self.pick(REVIEW_TEXTS),
                    "reference": f"order-{self.rng.randint(100000, 999999)}",
                    "consumer": {"name": f"{p['first']} {p['last']}", "locale": self.pick(("en-GB", "it-IT", "nl-NL"))},
                }
                self.add(
                    "review",
                    "POST",
                    "/v1/private/business-units/5f1c/reviews",
                    self.api("api.trust.example"),
                    self.json(doc),
                )
            elif kind == 2:
                fields = {
                    "rating": str(self.rng.randint(1, 5)),
                    "review[title]": self.pick(REVIEW_TITLES),
                    "review[body]": self.pick(REVIEW_TEXTS),
                    "review[author]": f"{p['first']} {p['last']}",
                    "authenticity_token": self.b64url(32),
                }
                h = self.browser("shop.example", "application/x-www-form-urlencoded")
                self.add("review", "POST", f"/products/{sku.lower()}/reviews", h, self.form(fields))
            else:
                doc = {
                    "product_id": self.rng.randint(1000, 99999),
                    "question": self.pick(PRODUCT_QUESTIONS),
                    "asker": {"nickname": p["first"]},
                    "notify": True,
                }
                self.add(
                    "review", "POST", "/api/questions", self.browser("shop.example", "application/json"), self.json(doc)
                )

    def chat(self, n: int) -> None:
        """Messaging: Rocket.Chat, a Teams bot's reply activity, Slack's chat.postMessage with blocks,
        Chatwoot conversations, Twist threads."""
        for i in range(n):
            kind = i % 5
            line = self.pick(CHAT_LINES)
            if kind == 0:
                doc: dict[str, Any] = {
                    "message": {
                        "rid": self.b64url(12),
                        "msg": line,
                        "tmid": self.pick((None, self.b64url(12))),
                    }
                }
                h = [*self.api("chat.example.com"), ("X-User-Id", self.b64url(12))]
                self.add("chat", "POST", "/api/v1/chat.sendMessage", h, self.json(doc))
            elif kind == 1:
                doc = {
                    "type": "message",
                    "from": {"id": f"28:{self.uid()}", "name": "Release Bot"},
                    "conversation": {"id": f"19:{self.hex(16)}@thread.tacv2"},
                    "text": line,
                    "textFormat": "markdown",
                    "replyToId": str(self.rng.randint(10**12, 10**13)),
                }
                conv = f"19%3A{self.hex(16)}%40thread.tacv2"
                self.add(
                    "chat",
                    "POST",
                    f"/v3/conversations/{conv}/activities",
                    self.api("smba.trafficmanager.example"),
                    self.json(doc),
                )
            elif kind == 2:
                doc = {
                    "channel": "C0" + self.b64url(6).upper(),
                    "text": line,
                    "blocks": [
                        {"type": "section", "text": {"type": "mrkdwn", "text": line}},
                        {"type": "context", "elements": [{"type": "mrkdwn", "text": "posted by *deploy-bot*"}]},
                    ],
                    "unfurl_links": False,
                }
                self.add(
                    "chat",
                    "POST",
                    "/api/chat.postMessage",
                    self.api("slack.example.com", "application/json; charset=utf-8"),
                    self.json(doc),
                )
            elif kind == 3:
                doc = {
                    "content": line,
                    "message_type": "outgoing",
                    "private": self.rng.random() < 0.3,
                    "content_attributes": {},
                }
                path = f"/api/v1/accounts/{self.rng.randint(1, 9)}/conversations/{self.rng.randint(100, 9999)}/messages"
                self.add("chat", "POST", path, self.api("support.chatwoot.example"), self.json(doc))
            else:
                fields = {
                    "thread_id": str(self.rng.randint(10**6, 10**7)),
                    "content": line,
                    "notify": "everyone" if self.rng.random() < 0.2 else "none",
                }
                h = self.api("api.twist.example", "application/x-www-form-urlencoded")
                self.add("chat", "POST", "/api/v3/comments/add", h, self.form(fields))

    def cicd(self, n: int) -> None:
        """CI/CD and infrastructure APIs: Jenkins parameters, Drone, Tekton, Argo Workflows, AWX, Nomad,
        Woodpecker, Spinnaker, GitHub deployments."""
        for i in range(n):
            kind = i % 9
            cmd = self.pick(PIPELINE_COMMANDS)
            branch = self.pick(BRANCHES)
            if kind == 0:
                fields = {"BRANCH": branch, "EXTRA_ARGS": cmd, "DRY_RUN": self.pick(("true", "false"))}
                h = self.api("jenkins.example.internal", "application/x-www-form-urlencoded")
                self.add("cicd", "POST", "/job/shop/job/cart/buildWithParameters", h, self.form(fields))
            elif kind == 1:
                path = f"/api/repos/shop/cart/builds?{query({'branch': branch, 'DEPLOY_TO': 'staging'})}"
                self.add("cicd", "POST", path, self.api("drone.example.internal", None))
            elif kind == 2:
                doc: dict[str, Any] = {
                    "apiVersion": "tekton.dev/v1",
                    "kind": "PipelineRun",
                    "metadata": {"generateName": "cart-build-"},
                    "spec": {
                        "pipelineRef": {"name": "build-and-push"},
                        "params": [{"name": "revision", "value": branch}, {"name": "build-cmd", "value": cmd}],
                    },
                }
                self.add(
                    "cicd",
                    "POST",
                    "/apis/tekton.dev/v1/namespaces/ci/pipelineruns",
                    self.api("tekton.example.internal"),
                    self.json(doc),
                )
            elif kind == 3:
                doc = {
                    "namespace": "argo",
                    "resourceKind": "WorkflowTemplate",
                    "resourceName": "nightly-export",
                    "submitOptions": {
                        "parameters": [f"since={self.pick(('2026-12-01', 'yesterday'))}", f"cmd={cmd}"],
                        "labels": "trigger=api",
                    },
                }
                self.add(
                    "cicd", "POST", "/api/v1/workflows/argo/submit", self.api("argo.example.internal"), self.json(doc)
                )
            elif kind == 4:
                doc = {
                    "extra_vars": {
                        "target_hosts": self.pick(("web:&prod", "db-replicas", "all:!bastion")),
                        "app_version": f"2026.12.{self.rng.randint(0, 9)}",
                        "pre_task_shell": cmd,
                    },
                    "limit": self.pick(("eu-west", "", "web-0[1:4]")),
                    "job_tags": "deploy,migrate",
                }
                path = f"/api/v2/job_templates/{self.rng.randint(5, 80)}/launch/"
                self.add("cicd", "POST", path, self.api("awx.example.internal"), self.json(doc))
            elif kind == 5:
                doc = {
                    "Job": {
                        "ID": "cart-worker",
                        "Datacenters": ["eu-west-1"],
                        "TaskGroups": [
                            {
                                "Name": "worker",
                                "Count": self.rng.randint(1, 6),
                                "Tasks": [
                                    {
                                        "Name": "worker",
                                        "Driver": "exec",
                                        "Config": {"command": "/bin/sh", "args": ["-c", cmd]},
                                        "Env": {"QUEUE": "orders", "LOG_LEVEL": "info"},
                                    }
                                ],
                            }
                        ],
                    }
                }
                self.add("cicd", "POST", "/v1/jobs", self.api("nomad.example.internal"), self.json(doc))
            elif kind == 6:
                doc = {"branch": branch, "variables": {"DEPLOY_ENV": "prod", "SMOKE_TEST": cmd}}
                self.add("cicd", "POST", "/api/repos/42/pipelines", self.api("ci.woodpecker.example"), self.json(doc))
            elif kind == 7:
                doc = {
                    "type": "manual",
                    "application": "cart",
                    "pipelineNameOrId": "deploy-prod",
                    "parameters": {"tag": f"v2026.12.{self.rng.randint(0, 9)}", "canary": "10%"},
                    "user": self.person()["email"],
                }
                self.add("cicd", "POST", "/pipelines/v2/trigger", self.api("gate.spinnaker.example"), self.json(doc))
            else:
                doc = {
                    "ref": branch,
                    "environment": self.pick(("production", "staging", "review/feature-cart-v2")),
                    "description": f"Deploy {branch} ({self.pick(('hotfix', 'weekly release', 'rollback'))})",
                    "auto_merge": False,
                    "required_contexts": [],
                    "payload": {"run": cmd},
                }
                h = [*self.api("api.github.example"), ("X-GitHub-Api-Version", "2022-11-28")]
                self.add("cicd", "POST", "/repos/shop/cart/deployments", h, self.json(doc))

    def calendar_mail(self, n: int) -> None:
        """Calendar and mail: Google Calendar events, JMAP Email/set, Microsoft Graph sendMail, a task API."""
        for i in range(n):
            kind = i % 4
            p, q = self.person(), self.person()
            if kind == 0:
                day = self.rng.randint(8, 23)
                doc: dict[str, Any] = {
                    "summary": self.pick(MEETING_SUMMARIES),
                    "description": self.pick(MEETING_DESCRIPTIONS),
                    "location": self.pick(LOCATIONS),
                    "start": {"dateTime": f"2026-12-{day:02d}T10:00:00+01:00", "timeZone": "Europe/Amsterdam"},
                    "end": {"dateTime": f"2026-12-{day:02d}T10:45:00+01:00", "timeZone": "Europe/Amsterdam"},
                    "attendees": [{"email": p["email"]}, {"email": q["email"], "optional": True}],
                    "recurrence": [self.pick(("RRULE:FREQ=WEEKLY;BYDAY=MO", "RRULE:FREQ=DAILY;COUNT=5"))],
                    "reminders": {"useDefault": False, "overrides": [{"method": "popup", "minutes": 10}]},
                }
                path = "/calendar/v3/calendars/primary/events?" + query({"sendUpdates": "all"})
                self.add("calendar-mail", "POST", path, self.api("calendar.example.com"), self.json(doc))
            elif kind == 1:
                doc = {
                    "using": ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail"],
                    "methodCalls": [
                        [
                            "Email/set",
                            {
                                "accountId": self.hex(6),
                                "create": {
                                    "draft1": {
                                        "from": [{"name": f"{p['first']} {p['last']}", "email": p["email"]}],
                                        "to": [{"name": q["first"], "email": q["email"]}],
                                        "subject": self.pick(MAIL_SUBJECTS),
                                        "textBody": [{"partId": "1", "type": "text/plain"}],
                                        "bodyValues": {"1": {"value": self.pick(MAIL_BODIES)}},
                                        "keywords": {"$draft": True},
                                    }
                                },
                            },
                            "c0",
                        ]
                    ],
                }
                self.add("calendar-mail", "POST", "/jmap/api/", self.api("mail.example.org"), self.json(doc))
            elif kind == 2:
                body = self.pick(MAIL_BODIES)
                doc = {
                    "message": {
                        "subject": self.pick(MAIL_SUBJECTS),
                        "body": {"contentType": "HTML" if body.startswith("<") else "Text", "content": body},
                        "toRecipients": [{"emailAddress": {"address": q["email"]}}],
                        "ccRecipients": [],
                    },
                    "saveToSentItems": True,
                }
                self.add("calendar-mail", "POST", "/v1.0/me/sendMail", self.api("graph.mail.example"), self.json(doc))
            else:
                doc = {
                    "content": self.pick(
                        (
                            "Buy wrapping paper (not the glittery one!)",
                            "Renew passport -> book appointment @ city hall",
                            "Call plumber re: kitchen tap (again)",
                            "Prep slides for 'Q1 roadmap review'",
                        )
                    ),
                    "due_string": self.pick(("tomorrow at 9", "every monday", "Dec 20", "next week")),
                    "priority": self.rng.randint(1, 4),
                    "labels": [self.pick(("home", "work", "errands"))],
                }
                self.add("calendar-mail", "POST", "/rest/v2/tasks", self.api("api.todo.example"), self.json(doc))

    def i18n(self, n: int) -> None:
        """Translation and i18n: DeepL's form API, Google Translate v2, key uploads to Crowdin, Lokalise and
        Phrase with ICU message format, an i18next bundle saved from an editor."""
        langs = sorted(I18N_TRANSLATIONS)
        for i in range(n):
            kind = i % 5
            if kind == 0:
                fields = [
                    ("text", self.pick(TRANSLATE_TEXTS)),
                    ("target_lang", self.pick(("DE", "FR", "IT", "PL", "JA", "TR"))),
                ]
                fields.append(("formality", self.pick(("default", "prefer_less"))))
                h = [
                    ("Host", "api.deepl.example"),
                    ("User-Agent", self.pick(TOOLS)),
                    ("Authorization", f"DeepL-Auth-Key {self.uid()}:fx"),
                    ("Content-Type", "application/x-www-form-urlencoded"),
                ]
                self.add("i18n", "POST", "/v2/translate", h, self.form(fields))
            elif kind == 1:
                doc: dict[str, Any] = {
                    "q": [self.pick(TRANSLATE_TEXTS), self.pick(TRANSLATE_TEXTS)],
                    "target": self.pick(langs),
                    "format": "text",
                    "source": "en",
                }
                self.add("i18n", "POST", "/language/translate/v2", self.api("translation.example.com"), self.json(doc))
            elif kind == 2:
                key, text = self.pick(I18N_STRINGS)
                doc = {
                    "identifier": key,
                    "text": text,
                    "context": f"Used in {key.split('.')[0]} page",
                    "isHidden": False,
                    "maxLength": 0,
                }
                path = f"/api/v2/projects/{self.rng.randint(100, 999)}/strings"
                self.add("i18n", "POST", path, self.api("api.crowdin.example"), self.json(doc))
            elif kind == 3:
                lang = self.pick(langs)
                keys = []
                for j, (key, text) in enumerate(I18N_STRINGS[:4]):
                    keys.append(
                        {
                            "key_name": key,
                            "platforms": ["web"],
                            "translations": [
                                {"language_iso": "en", "translation": text},
                                {"language_iso": lang, "translation": I18N_TRANSLATIONS[lang][j]},
                            ],
                        }
                    )
                path = f"/api2/projects/{self.hex(8)}.{self.hex(4)}/keys"
                self.add("i18n", "POST", path, self.api("api.lokalise.example"), self.json({"keys": keys}))
            else:
                lang = self.pick(langs)
                bundle = dict(self.rng.sample(I18N_STRINGS, 5))
                doc = {"locale": lang, "namespace": "common", "resources": bundle}
                h = self.browser("translate.shop.example", "application/json")
                self.add("i18n", "PUT", f"/locales/{lang}/common.json", h, self.json(doc))

    def logsearch(self, n: int) -> None:
        """Log searches: Splunk's search jobs (form), Datadog's logs search, CloudWatch Logs Insights,
        Loki over GET, New Relic's NerdGraph NRQL, Graylog's universal search."""
        for i in range(n):
            kind = i % 6
            if kind == 0:
                fields = {
                    "search": self.pick(SPLUNK),
                    "earliest_time": "-4h",
                    "latest_time": "now",
                    "output_mode": "json",
                }
                h = self.api("splunk.example.internal:8089", "application/x-www-form-urlencoded")
                self.add("logsearch", "POST", "/services/search/jobs", h, self.form(fields))
            elif kind == 1:
                doc: dict[str, Any] = {
                    "filter": {"query": self.pick(DATADOG), "from": "now-15m", "to": "now", "indexes": ["main"]},
                    "sort": "-timestamp",
                    "page": {"limit": 100},
                }
                self.add(
                    "logsearch", "POST", "/api/v2/logs/events/search", self.api("api.datadog.example"), self.json(doc)
                )
            elif kind == 2:
                doc = {
                    "logGroupNames": [f"/ecs/{self.pick(('cart', 'checkout', 'payments'))}"],
                    "startTime": 1796000000 + self.rng.randint(0, 10**5),
                    "endTime": 1796100000,
                    "queryString": self.pick(CLOUDWATCH),
                    "limit": 1000,
                }
                h = [
                    *self.api("logs.eu-west-1.aws.example", "application/x-amz-json-1.1"),
                    ("X-Amz-Target", "Logs_20140328.StartQuery"),
                ]
                self.add("logsearch", "POST", "/", h, self.json(doc))
            elif kind == 3:
                params = {
                    "query": self.pick(LOGQL),
                    "limit": "1000",
                    "direction": "backward",
                    "start": str(1796000000 + self.rng.randint(0, 10**5)) + "000000000",
                }
                self.add(
                    "logsearch",
                    "GET",
                    "/loki/api/v1/query_range?" + query(params),
                    self.api("loki.example.internal", None),
                )
            elif kind == 4:
                nrql = self.pick(NRQL).replace('"', '\\"')
                doc = {
                    "query": f'{{ actor {{ account(id: {self.rng.randint(10**6, 10**7)}) {{ nrql(query: "{nrql}")'
                    " { results } } } }"
                }
                self.add("logsearch", "POST", "/graphql", self.api("api.newrelic.example"), self.json(doc))
            else:
                params = {
                    "query": self.pick(GRAYLOG),
                    "range": str(self.pick((300, 3600, 86400))),
                    "limit": "150",
                    "sort": "timestamp:desc",
                }
                h = [*self.api("graylog.example.internal", None), ("X-Requested-By", "cli")]
                self.add("logsearch", "GET", "/api/search/universal/relative?" + query(params), h)

    def support(self, n: int) -> None:
        """Helpdesks under their own field names: Help Scout threads, Front messages, Zammad articles,
        osTicket's API, Gorgias tickets, and a site's contact form."""
        for i in range(n):
            kind = i % 6
            p = self.person()
            subject, text = self.pick(TICKET_SUBJECTS), self.pick(TICKET_BODIES)
            if kind == 0:
                doc: dict[str, Any] = {
                    "customer": {"email": p["email"]},
                    "text": text,
                    "imported": False,
                    "status": "active",
                }
                path = f"/v2/conversations/{self.rng.randint(10**6, 10**7)}/reply"
                self.add("support", "POST", path, self.api("api.helpscout.example"), self.json(doc))
            elif kind == 1:
                doc = {
                    "sender": {"handle": p["email"], "name": f"{p['first']} {p['last']}"},
                    "subject": subject,
                    "body": text,
                    "body_format": "markdown",
                    "metadata": {"headers": {"X-Order": str(self.rng.randint(10**5, 10**6))}},
                }
                path = f"/channels/cha_{self.b64url(4)}/incoming_messages"
                self.add("support", "POST", path, self.api("api2.front.example"), self.json(doc))
            elif kind == 2:
                doc = {
                    "title": subject,
                    "group": "Support L1",
                    "customer_id": f"guess:{p['email']}",
                    "article": {"subject": subject, "body": text, "type": "note", "internal": False},
                }
                self.add("support", "POST", "/api/v1/tickets", self.api("helpdesk.zammad.example"), self.json(doc))
            elif kind == 3:
                doc = {
                    "alert": True,
                    "autorespond": True,
                    "source": "API",
                    "name": f"{p['first']} {p['last']}",
                    "email": p["email"],
                    "subject": subject,
                    "ip": f"198.51.100.{self.rng.randint(1, 254)}",
                    "message": f"data:text/plain;charset=utf-8,{urllib.parse.quote(text)}",
                }
                h = [
                    ("Host", "tickets.example.org"),
                    ("User-Agent", self.pick(TOOLS)),
                    ("X-API-Key", self.hex(16).upper()),
                    ("Content-Type", "application/json"),
                ]
                self.add("support", "POST", "/api/tickets.json", h, self.json(doc))
            elif kind == 4:
                doc = {
                    "customer": {"email": p["email"]},
                    "channel": "email",
                    "via": "api",
                    "subject": subject,
                    "messages": [
                        {
                            "sender": {"email": p["email"]},
                            "channel": "email",
                            "from_agent": False,
                            "body_text": text,
                            "via": "api",
                        }
                    ],
                }
                self.add("support", "POST", "/api/tickets", self.api("shop.gorgias.example"), self.json(doc))
            else:
                fields = {
                    "your-name": f"{p['first']} {p['last']}",
                    "your-email": p["email"],
                    "your-subject": subject,
                    "your-message": text,
                    "_wpcf7": str(self.rng.randint(10, 99)),
                    "_wpcf7_unit_tag": f"wpcf7-f{self.rng.randint(10, 99)}-p2-o1",
                }
                h = self.browser("www.shop.example", "application/x-www-form-urlencoded")
                self.add(
                    "support", "POST", "/wp-json/contact-form-7/v1/contact-forms/12/feedback", h, self.form(fields)
                )

    def account(self, n: int) -> None:
        """Account settings: notification preferences, an address book, a newsletter sign-up, an order
        history page with filters."""
        for i in range(n):
            kind = i % 4
            p = self.person()
            if kind == 0:
                doc: dict[str, Any] = {
                    "email_notifications": {
                        "order_updates": True,
                        "newsletter": False,
                        "price_drops": self.rng.random() < 0.5,
                    },
                    "quiet_hours": {"from": "22:00", "to": "07:30"},
                    "language": self.pick(("en-GB", "pt-BR", "it", "pl", "tr", "zh-Hans")),
                }
                self.add(
                    "account",
                    "PATCH",
                    "/api/me/preferences",
                    self.browser("shop.example", "application/json"),
                    self.json(doc),
                )
            elif kind == 1:
                doc = {
                    "label": self.pick(("Home", "Work (reception)", "Mum's", "Holiday flat")),
                    "recipient": f"{p['first']} {p['last']}",
                    "street": self.pick(
                        (
                            "12 O'Connell Street",
                            "Via dell'Orso 7/B",
                            "Keizersgracht 123-II",
                            "Rua das Flores, 45 - 2º Esq.",
                        )
                    ),
                    "zip": self.pick(("D01 F5P2", "20121", "1015 CJ", "1200-195")),
                    "phone": self.pick(("+353 1 234 5678", "+39 02 1234 5678", "(555) 010-4477")),
                    "instructions": self.pick(DELIVERY_NOTES),
                }
                self.add(
                    "account",
                    "POST",
                    "/api/me/addresses",
                    self.browser("shop.example", "application/json"),
                    self.json(doc),
                )
            elif kind == 2:
                fields = {
                    "EMAIL": p["email"],
                    "FNAME": p["first"],
                    "LNAME": p["last"],
                    "group[4021][1]": "1",
                    "b_" + self.hex(10): "",
                }
                h = self.browser("shop.example", "application/x-www-form-urlencoded")
                self.add(
                    "account",
                    "POST",
                    f"/subscribe/post?u={self.hex(12)}&id={self.hex(5)}",
                    h,
                    self.form(fields),
                )
            else:
                params = {
                    "status": self.pick(("delivered", "returned", "open")),
                    "from": "2026-01-01",
                    "sort": self.pick(("-date", "total")),
                    "page": str(self.rng.randint(1, 5)),
                }
                h = self.browser("shop.example")
                self.add("account", "GET", "/api/me/orders?" + query(params), h)


def generate() -> Iterator[Request]:
    g = Gen()
    g.carts(110)
    g.reviews(100)
    g.chat(110)
    g.cicd(108)
    g.calendar_mail(100)
    g.i18n(100)
    g.logsearch(108)
    g.support(108)
    g.account(76)
    yield from g.out


def main() -> int:
    return generator_main(__doc__, CORPORA / f"{NAME}.jsonl", generate)


if __name__ == "__main__":
    sys.exit(main())
