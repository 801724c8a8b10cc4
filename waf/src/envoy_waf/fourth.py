"""Build waf/corpora/benign-fourth.jsonl: a fourth benign corpus, the held-out benign set of the third tuning
round (2026-12-07), written and committed before anything was measured on it.

benign-fresh and benign-third were read to generalise the curated exclusions in that round, so they are tuning
data from then on; this corpus takes their place as the held-out set. It is different in kind and in field
names from the three others: other public API styles (OData and Microsoft Graph queries, JSON-RPC of Ethereum,
Odoo and Zabbix, Salesforce SOQL, OpenTelemetry and Loki telemetry, FHIR resources, Mastodon and ActivityPub,
Stripe-style form APIs), other languages' frameworks (Spring, ASP.NET Core Identity, Flask-WTF, Phoenix,
JavaServer Faces, Drupal, Joomla, WordPress comments, SvelteKit, Livewire, Inertia), other search syntaxes
(Elasticsearch query DSL, Solr, Typesense, JQL, GitHub's), notebooks and dashboards that hold code (Jupyter,
Grafana, Metabase), webhooks of other senders (Jira, Linear, Telegram, WhatsApp Cloud, Typeform, Twitch, Zoom),
and names in other scripts (Korean, Thai, Devanagari, Greek, Georgian, Armenian, Ethiopic, Tamil, Bengali,
Vietnamese, Ukrainian, Persian).

Every text here was written for this corpus (the project's own licence); nothing is read at generation time.
Deterministic: every choice comes from random.Random(SEED) in a fixed order:

    python -m envoy_waf.fourth          # from waf/, in .venv-waf (make waf-corpora)

The templates are not to be edited because of a verdict: a changed template makes a new corpus, which has to
be measured as a new held-out set (waf/corpora/README.md).
"""

# ruff: noqa: RUF001 (names and texts in other scripts hold letters that look like Latin ones, on purpose)
from __future__ import annotations

import base64
import json
import string
import sys
from collections.abc import Iterator
from typing import Any

from .traffic import CORPORA, HeldOutGen, Request, generator_main, query

SEED = 4444
NAME = "benign-fourth"

# --- clients -----------------------------------------------------------------------------------------------
VIVALDI_LINUX = [
    ("sec-ch-ua", '"Vivaldi";v="7.7", "Chromium";v="143", "Not_A Brand";v="24"'),
    ("sec-ch-ua-mobile", "?0"),
    ("sec-ch-ua-platform", '"Linux"'),
    (
        "User-Agent",
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Safari/537.36",
    ),
]
CHROMEOS = [
    ("sec-ch-ua", '"Google Chrome";v="143", "Chromium";v="143", "Not_A Brand";v="24"'),
    ("sec-ch-ua-mobile", "?0"),
    ("sec-ch-ua-platform", '"Chrome OS"'),
    (
        "User-Agent",
        "Mozilla/5.0 (X11; CrOS x86_64 16433.48.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 "
        "Safari/537.36",
    ),
]
FIREFOX_ESR = [("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0")]
SAFARI_IPAD = [
    (
        "User-Agent",
        "Mozilla/5.0 (iPad; CPU OS 26_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.1 "
        "Mobile/15E148 Safari/604.1",
    )
]
YANDEX = [
    (
        "User-Agent",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 "
        "YaBrowser/25.10.0.0 Safari/537.36",
    )
]
BROWSERS = {
    "vivaldi": VIVALDI_LINUX,
    "chromeos": CHROMEOS,
    "firefox-esr": FIREFOX_ESR,
    "safari-ipad": SAFARI_IPAD,
    "yandex": YANDEX,
}
LANGUAGES = (
    "ko-KR,ko;q=0.9,en-US;q=0.8,en;q=0.7",
    "th-TH,th;q=0.9,en;q=0.8",
    "hi-IN,hi;q=0.9,en-IN;q=0.8,en;q=0.7",
    "el-GR,el;q=0.9,en;q=0.8",
    "ka-GE,ka;q=0.9,en;q=0.8",
    "uk-UA,uk;q=0.9,en;q=0.8",
    "vi-VN,vi;q=0.9,en;q=0.8",
    "fa-IR,fa;q=0.9,en;q=0.8",
    "ta-IN,ta;q=0.9,en;q=0.8",
    "am-ET,am;q=0.9,en;q=0.8",
)
TOOLS = (
    "python-httpx/0.28.1",
    "Apache-HttpClient/5.4.2 (Java/21.0.5)",
    "Java-http-client/21.0.5",
    "Microsoft.Graph.Client/6.0 (.NET 9.0)",
    "Faraday v2.13.1",
    "GuzzleHttp/7 curl/8.11.1 PHP/8.4.1",
    "Dart/3.6 (dart:io)",
    "ktor-client",
    "opentelemetry-collector-contrib/0.118.0",
    "Grafana/12.3.0",
    "web3.py/7.8.0",
    "curl/8.11.1",
)

# --- texts, written for this corpus -----------------------------------------------------------------------
# (first name, last name) in many scripts, romanised and not.
PEOPLE = (
    ("지민", "박"),
    ("서연", "김"),
    ("สมชาย", "ใจดี"),
    ("อรุณี", "ศรีสุข"),
    ("अनन्या", "शर्मा"),
    ("राहुल", "वर्मा"),
    ("Γιώργος", "Παπαδόπουλος"),
    ("Ελένη", "Κωνσταντίνου"),
    ("ნინო", "ბერიძე"),
    ("Արամ", "Պետրոսյան"),
    ("ሰላም", "ተስፋዬ"),
    ("முருகன்", "சுப்பிரமணியம்"),
    ("অর্পিতা", "দাস"),
    ("Nguyễn Thị", "Hằng"),
    ("Trần", "Quốc Bảo"),
    ("Олена", "Коваленко"),
    ("Тарас", "Шевчук"),
    ("مریم", "حسینی"),
    ("Siobhán", "Ní Bhriain"),
    ("Seán", "Ó Súilleabháin"),
    ("Jean-Luc", "D'Amato"),
    ("Zoë", "van 't Hof"),
    ("Dara", "O'Neil-Ríos"),
    ("Björk", "Guðmundsdóttir"),
    ("Łukasz", "Wróbel-Żak"),
    ("Ayşe", "Yılmaz"),
    ("Kwame", "Mensah"),
    ("Ngozi", "Okonkwo-Adebayo"),
    ("Aarav", "Iyer"),
    ("Hana", "Nováková"),
)
ADDRESSES = (
    ("서울특별시 강남구 테헤란로 152", "06236", "서울", "KR"),
    ("99/1 ถนนสุขุมวิท แขวงคลองเตย", "10110", "กรุงเทพมหานคร", "TH"),
    ("12, MG Road, Near St. Mark's Church", "560001", "Bengaluru", "IN"),
    ("Λεωφόρος Βασιλίσσης Σοφίας 1", "106 71", "Αθήνα", "GR"),
    ("რუსთაველის გამზ. 12", "0108", "თბილისი", "GE"),
    ("Abovyan St. 7, Apt. 3", "0001", "Yerevan", "AM"),
    ("Bole Road, Friendship Bldg #4", "1000", "Addis Ababa", "ET"),
    ("số 8 Phố Tràng Tiền, Hoàn Kiếm", "100000", "Hà Nội", "VN"),
    ("вул. Хрещатик, 22, кв. 5", "01001", "Київ", "UA"),
    ("1 O'Connell Bridge House, D'Olier St", "D02 XE80", "Dublin", "IE"),
    ("Rua D. Pedro V, 90 - 2º Esq.", "1250-094", "Lisboa", "PT"),
    ("Unit 4/27 King's Rd", "2000", "Sydney", "AU"),
)
# Status posts, chat lines and comments: what people type, some with code or markup.
POSTS = (
    "Just shipped v2.3 of our CLI 🎉 `brew upgrade tidepool` and you're good. Changelog: https://tidepool.example/changelog",
    "오늘 회고: 배포 파이프라인이 너무 느려요. 캐시를 다시 설정해야 할 듯",
    "PSA: if your cron says `0 */6 * * *` it runs at 00:00, 06:00, 12:00 and 18:00, not every 6h from now",
    "Does anyone know why `SELECT * FROM orders WHERE created_at > now() - interval '1 day'` ignores my index? "
    "#postgres",
    "Ένα μικρό tip: `git log --oneline --graph --all` για να δεις όλα τα branches",
    "हमारी टीम hiring कर रही है! Backend (Go/Rust) — DM करें",
    "TIL: in bash `${VAR:-default}` and `${VAR:=default}` are not the same thing",
    "Reminder that <br> tags in your markdown won't render on every client :)",
    "Night mode is live for everyone. Toggle it under Settings > Appearance > Theme",
    "Я оновив документацію: тепер `docker run -p 8080:80 nginx` працює і в розділі про Windows",
    "Thread 🧵 on why we moved off of `rm -rf node_modules && npm install` as a fix for everything (1/7)",
    'Coffee ☕ + rust borrow checker = a Monday. fn main() { let s = String::from("hi"); }',
    "Our status page was wrong for 20 min: the check hit /healthz?verbose=1 which returns 503 on purpose. Fixed.",
    "Δοκιμάστε το νέο API: curl -H 'Accept: application/json' https://api.example.gr/v1/stations",
    "Vừa thử `python -m http.server 8000` để chia sẻ file nhanh trong mạng LAN, tiện ghê",
    "سلام! کسی می‌دونه چرا `pip install` پشت پروکسی خطای SSL می‌ده؟",
    "Weekend project: a tiny <canvas> game in 300 lines of JS. Source on my blog",
    "If you paste `' OR 1=1` into our search box now you get a cute 404 page instead of an error. Thanks for the "
    "report!",
    "We're hiring a Staff SRE — on-call is 1 week in 6, PagerDuty & Grafana. Apply: https://jobs.example.io/sre",
    "ሰላም ለሁላችሁ! የአዲሱ ስሪት ማስታወሻ ተለቋል",
)
SQL_STATEMENTS = (
    "SELECT id, email FROM users WHERE id = $1",
    "UPDATE carts SET updated_at = now() WHERE session_id = $1 AND status = 'open'",
    "INSERT INTO events (type, payload) VALUES ($1, $2) RETURNING id",
    "SELECT p.id, p.title, count(c.id) FROM posts p LEFT JOIN comments c ON c.post_id = p.id GROUP BY p.id "
    "ORDER BY 3 DESC LIMIT 20",
    "DELETE FROM sessions WHERE expires_at < now()",
    "SELECT * FROM inventory WHERE sku IN (?, ?, ?) FOR UPDATE",
    "BEGIN",
    "COMMIT",
    "SELECT 1",
    "WITH recent AS (SELECT * FROM orders WHERE placed_at > now() - interval '7 days') SELECT customer_id, "
    "sum(total) FROM recent GROUP BY customer_id HAVING sum(total) > 1000",
)
LOG_LINES = (
    'level=info ts=2026-12-07T10:15:02Z caller=main.go:88 msg="server started" addr=:8080',
    "2026-12-07 10:15:03,114 WARN  [http-nio-8080-exec-4] o.s.w.s.PageNotFound : No mapping for GET /favicon.ico",
    '127.0.0.1 - - [07/Dec/2026:10:15:04 +0000] "GET /api/v1/orders?page=2 HTTP/1.1" 200 5123 "-" "okhttp/5.2.1"',
    'ERROR: duplicate key value violates unique constraint "users_email_key" DETAIL: Key (email)=(a@b.example) '
    "already exists.",
    "Traceback (most recent call last):\n  File \"/app/worker.py\", line 41, in run\n    job()\nKeyError: 'tenant_id'",
    'java.lang.NullPointerException: Cannot invoke "String.length()" because "name" is null\n\tat '
    "com.example.shop.CartService.add(CartService.java:57)",
    'msg="upstream connect error or disconnect/reset before headers" upstream="10.0.3.17:8080"',
    "[notice] 1#1: signal 3 (SIGQUIT) received, shutting down",
    "kubelet: Back-off restarting failed container app in pod checkout-7d9c8b5f4-x2m9q_default",
    "cron[2201]: (root) CMD (/usr/local/bin/backup.sh > /var/log/backup.log 2>&1)",
)
SEARCH_PHRASES = (
    "노트북 거치대",
    "ที่ชาร์จ usb-c",
    "बच्चों के जूते",
    "ομπρέλα αυτόματη",
    "ფეხსაცმელი",
    "sách lập trình python",
    "зимові черевики 42",
    "کفش کوهنوردی",
    "men's waterproof jacket",
    "tables & chairs",
    '4K monitor 27"',
    "c# async await",
    "node.js vs deno",
    "how to exit vim",
    "select all shortcut mac",
    "drop shipping",
    "union jack flag",
    '1/2" copper pipe',
    "50% off",
    "rock 'n' roll vinyl",
)
GRAFANA_EXPRS = (
    'sum(rate(http_requests_total{job="api", code=~"5.."}[5m])) / sum(rate(http_requests_total{job="api"}[5m]))',
    'histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{route!="/healthz"}[5m])))',
    'increase(kube_pod_container_status_restarts_total{namespace="prod"}[1h]) > 3',
    'avg_over_time(node_load1[10m]) > on(instance) count by (instance) (node_cpu_seconds_total{mode="idle"})',
    '{app="checkout"} |= "error" | json | line_format "{{.msg}}"',
)
RAW_SQL = (
    "SELECT $__timeGroupAlias(created_at, '1h'), count(*) AS orders FROM orders WHERE $__timeFilter(created_at) "
    "GROUP BY 1 ORDER BY 1",
    "SELECT status, count(*) FROM tickets WHERE team = '$team' GROUP BY status",
    "SELECT date_trunc('day', paid_at) AS day, sum(amount_cents) / 100.0 AS revenue FROM payments "
    "WHERE paid_at >= now() - interval '30 days' GROUP BY 1 ORDER BY 1;",
    "SELECT u.country, count(DISTINCT u.id) FROM users u JOIN logins l ON l.user_id = u.id "
    "WHERE l.at > now() - interval '1 week' GROUP BY u.country ORDER BY 2 DESC LIMIT 10",
    "select * from products where name ilike '%lamp%' and price < 50",
)
NOTEBOOK_CELLS = (
    "import pandas as pd\ndf = pd.read_csv('sales.csv')\ndf.groupby('region')['revenue'].sum().plot(kind='bar')",
    "%matplotlib inline\nimport numpy as np\nx = np.linspace(0, 2*np.pi, 200)\nplt.plot(x, np.sin(x))",
    "!pip install -q scikit-learn==1.6.0",
    'query = """SELECT customer_id, sum(total) FROM orders GROUP BY 1"""\nresult = pd.read_sql(query, engine)',
    "# Cleaning\ndf = df[df['email'].str.contains('@')]\ndf['name'] = df['name'].str.strip()",
    "import os\nprint(os.environ.get('HOME'))\n!ls -la data/",
    "## Results\n\nThe model reaches **0.91 F1** on the held-out set; see the table below.",
    "from sklearn.model_selection import train_test_split\nX_train, X_test, y_train, y_test = train_test_split(X, y)",
)
JQL = (
    'project = OPS AND status in ("In Progress", "To Do") ORDER BY priority DESC',
    "assignee = currentUser() AND resolution = Unresolved",
    'labels = "customer-reported" AND created >= -14d',
    'text ~ "timeout" AND component = Payments',
    "sprint in openSprints() AND issuetype = Bug ORDER BY created DESC",
)
ODATA_FILTERS = (
    "startswith(displayName,'An')",
    "accountEnabled eq true and userType eq 'Member'",
    "createdDateTime ge 2026-11-01T00:00:00Z",
    "Name eq 'O''Brien Ltd'",
    "contains(subject,'invoice') and isRead eq false",
    "Price gt 20 and Price le 100",
    "Category/Name eq 'Beverages'",
    "receivedDateTime ge 2026-12-01 and from/emailAddress/address eq 'ops@example.com'",
    "substringof('Müller', CompanyName)",
    "year(OrderDate) eq 2026",
)
SOQL = (
    "SELECT Id, Name, Industry FROM Account WHERE Name LIKE 'Acme%' LIMIT 50",
    "SELECT Id, Subject, Status FROM Case WHERE CreatedDate = LAST_N_DAYS:7 ORDER BY CreatedDate DESC",
    "SELECT Id, Email FROM Contact WHERE AccountId = '001Qy00000AbCdEIAV'",
    "SELECT COUNT() FROM Opportunity WHERE StageName = 'Closed Won' AND CloseDate = THIS_QUARTER",
    "SELECT Name, (SELECT LastName FROM Contacts) FROM Account WHERE BillingCountry = 'Deutschland'",
)
FORM_MESSAGES = (
    "Guten Tag, ich möchte meine Bestellung #4471 stornieren. Danke!",
    "안녕하세요, 배송지 변경 가능할까요?",
    "Hi, the export button gives me a file called report(1).csv that Excel can't open — any idea?",
    "Η παραγγελία μου δεν έχει φτάσει ακόμα.",
    "Please add my colleague (she/her) to the account, her e-mail is in CC",
    "नमस्ते, मुझे चालान की एक प्रति चाहिए",
    "The API returns 500 when the name contains an apostrophe, e.g. D'Souza. Can you check?",
    "Chào bạn, tôi muốn đổi size áo từ M sang L.",
    "Our script does `curl -X POST ... | jq .id` and since yesterday gets HTML back instead of JSON.",
    "Доброго дня! Чи можна оплатити рахунок частинами?",
    "Can you whitelist 203.0.113.0/24 for our office? Thanks & regards",
    "I think there's a typo on the pricing page: '5 users' vs \"up to 5 seats\".",
)


class Gen(HeldOutGen):
    def __init__(self) -> None:
        super().__init__(NAME, "fourth", SEED)

    # --- helpers -----------------------------------------------------------------------------------------

    def api(self, host: str, content_type: str | None = "application/json") -> list[tuple[str, str]]:
        h = [("Host", host), ("User-Agent", self.pick(TOOLS)), ("Accept", "application/json")]
        h.append(("Authorization", "Bearer " + self.b64url(40)))
        if content_type:
            h.append(("Content-Type", content_type))
        return h

    def person(self) -> dict[str, str]:
        first, last = self.pick(PEOPLE)
        local = "".join(c for c in (first + last).lower() if c in string.ascii_lowercase) or "user"
        return {"first": first, "last": last, "email": f"{local}{self.rng.randint(2, 98)}@mail.example"}

    def browser(self, host: str, nav: bool) -> list[tuple[str, str]]:
        name = self.pick(sorted(BROWSERS))
        h = [("Host", host), *BROWSERS[name]]
        accept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
        h.append(("Accept", accept if nav else "application/json, text/plain, */*"))
        h += [("Accept-Language", self.pick(LANGUAGES)), ("Accept-Encoding", "gzip, deflate, br, zstd")]
        if name != "safari-ipad":
            h += [("Sec-Fetch-Site", "same-origin"), ("Sec-Fetch-Mode", "navigate" if nav else "cors")]
            h.append(("Sec-Fetch-Dest", "document" if nav else "empty"))
        if self.rng.random() < 0.75:
            h.append(("Cookie", self.cookies()))
        return h

    def cookies(self) -> str:
        parts = [
            f"_ga=GA1.1.{self.rng.randint(10**8, 10**9)}.{1796000000 + self.rng.randint(0, 10**6)}",
            f"_ga_K8Q2Z1XJ7P=GS2.1.s{1796000000 + self.rng.randint(0, 10**6)}$o3$g1$t1796000123$j60$l0$h0",
            f"didomi_token={self.b64url(90)}",
            f"euconsent-v2=CQ{self.b64url(60)}.YAAAAAAAAAAA",
            "klaro=%7B%22analytics%22%3Atrue%2C%22marketing%22%3Afalse%7D",
            f"JSESSIONID={self.hex(16).upper()}",
            f"csrftoken={self.b64url(24)}",
            f"_session_id={self.hex(16)}",
        ]
        if self.rng.random() < 0.3:
            parts.append(f"lang={self.pick(('ko', 'th', 'hi', 'el', 'uk', 'vi'))}")
        self.rng.shuffle(parts)
        return "; ".join(parts[: self.rng.randint(2, len(parts))])

    # --- families ----------------------------------------------------------------------------------------
    def odata(self, n: int) -> None:
        """Microsoft Graph, SharePoint and OData v4 services: $filter, $select, $orderby, $expand, $search."""
        for i in range(n):
            kind = i % 4
            if kind == 0:
                params = {
                    "$filter": self.pick(ODATA_FILTERS[:3]),
                    "$select": "id,displayName,mail,jobTitle",
                    "$top": str(self.pick((10, 25, 100))),
                    "$count": "true",
                }
                h = [*self.api("graph.microsoft.example", None), ("ConsistencyLevel", "eventual")]
                self.add("odata", "GET", "/v1.0/users?" + query(params), h)
            elif kind == 1:
                params = {
                    "$filter": self.pick(ODATA_FILTERS[4:8]),
                    "$orderby": self.pick(("receivedDateTime desc", "Price asc", "Name")),
                    "$expand": self.pick(("attachments", "Category", "Orders($select=OrderID,OrderDate)")),
                }
                self.add("odata", "GET", "/odata/v4/Products?" + query(params), self.api("erp.example.net", None))
            elif kind == 2:
                params = {
                    "$search": f'"{self.pick(("budget 2027", "Quartalsbericht", "onboarding", "회의록"))}"',
                    "$select": "subject,from,receivedDateTime",
                }
                h = self.api("graph.microsoft.example", None)
                self.add("odata", "GET", "/v1.0/me/messages?" + query(params), h)
            else:
                doc: dict[str, Any] = {
                    "__metadata": {"type": "SP.Data.TasksListItem"},
                    "Title": self.pick(("Review Q4 numbers", "Υπενθύμιση: ανανέωση", "Onboard 김서연")),
                    "Body": self.pick(FORM_MESSAGES),
                    "DueDate": f"2026-12-{self.rng.randint(10, 28)}T00:00:00Z",
                    "PercentComplete": self.pick((0, 0.5, 1)),
                }
                h = self.api("contoso.sharepoint.example", "application/json;odata=verbose")
                h += [("X-RequestDigest", f"0x{self.hex(32).upper()},07 Dec 2026 10:00:00 -0000")]
                self.add("odata", "POST", "/sites/ops/_api/web/lists/getbytitle('Tasks')/items", h, self.json(doc))

    def jsonrpc(self, n: int) -> None:
        """JSON-RPC 2.0 over HTTP: Ethereum nodes, Odoo's call_kw, Zabbix's API."""
        for i in range(n):
            kind = i % 3
            if kind == 0:
                method = self.pick(("eth_call", "eth_getBalance", "eth_blockNumber", "eth_getLogs"))
                addr = "0x" + self.hex(20)
                params: list[Any]
                if method == "eth_call":
                    params = [{"to": addr, "data": "0x70a08231" + "0" * 24 + self.hex(20)}, "latest"]
                elif method == "eth_getBalance":
                    params = [addr, "latest"]
                elif method == "eth_getLogs":
                    params = [{"address": addr, "fromBlock": hex(self.rng.randint(2 * 10**7, 2 * 10**7 + 9999))}]
                else:
                    params = []
                doc: dict[str, Any] = {
                    "jsonrpc": "2.0",
                    "id": self.rng.randint(1, 999),
                    "method": method,
                    "params": params,
                }
                self.add("jsonrpc", "POST", "/v3/" + self.hex(16), self.api("mainnet.rpc.example"), self.json(doc))
            elif kind == 1:
                p = self.person()
                domain = self.pick(
                    (
                        [["name", "ilike", p["last"]]],
                        [["state", "in", ["sale", "done"]], ["date_order", ">=", "2026-11-01"]],
                        ["|", ["email", "=like", "%@mail.example"], ["phone", "!=", False]],
                    )
                )
                doc = {
                    "jsonrpc": "2.0",
                    "method": "call",
                    "params": {
                        "model": self.pick(("res.partner", "sale.order")),
                        "method": "search_read",
                        "args": [domain],
                        "kwargs": {"fields": ["id", "name", "email"], "limit": 80, "context": {"lang": "en_US"}},
                    },
                    "id": self.rng.randint(1, 10**6),
                }
                h = [*self.browser("erp.example.org", False), ("Content-Type", "application/json")]
                self.add("jsonrpc", "POST", "/web/dataset/call_kw/res.partner/search_read", h, self.json(doc))
            else:
                method = self.pick(("host.get", "problem.get", "item.get", "trigger.get"))
                doc = {
                    "jsonrpc": "2.0",
                    "method": method,
                    "params": {
                        "output": "extend",
                        "filter": {"host": [f"web-{self.rng.randint(1, 9):02d}", "db-primary"]},
                        "search": {"name": self.pick(("CPU", "Free disk space on /", "Load average (1m avg)"))},
                        "sortfield": "name",
                        "limit": 100,
                    },
                    "id": self.rng.randint(1, 999),
                }
                self.add("jsonrpc", "POST", "/api_jsonrpc.php", self.api("zabbix.example.net"), self.json(doc))

    def salesforce(self, n: int) -> None:
        """Salesforce's REST API: SOQL in `q`, sObject writes with their own field names."""
        for i in range(n):
            h = self.api("acme.my.salesforce.example", None if i % 2 == 0 else "application/json")
            if i % 2 == 0:
                self.add("salesforce", "GET", "/services/data/v62.0/query?" + query({"q": self.pick(SOQL)}), h)
            else:
                p = self.person()
                street, postal, city, country = self.pick(ADDRESSES)
                doc: dict[str, Any] = {
                    "FirstName": p["first"],
                    "LastName": p["last"],
                    "Email": p["email"],
                    "MailingStreet": street,
                    "MailingPostalCode": postal,
                    "MailingCity": city,
                    "MailingCountry": country,
                    "Description": self.pick(FORM_MESSAGES),
                    "LeadSource": self.pick(("Web", "Partner Referral", "Trade Show")),
                }
                self.add("salesforce", "POST", "/services/data/v62.0/sobjects/Contact", h, self.json(doc))

    def telemetry(self, n: int) -> None:
        """OpenTelemetry OTLP/HTTP JSON traces and logs, Loki pushes: SQL statements, URLs, stack traces."""
        for i in range(n):
            kind = i % 3
            service = self.pick(("checkout", "catalog", "billing-worker", "auth"))
            if kind == 0:
                spans = []
                for _ in range(self.rng.randint(1, 4)):
                    attrs = [
                        {"key": "db.system", "value": {"stringValue": "postgresql"}},
                        {"key": "db.statement", "value": {"stringValue": self.pick(SQL_STATEMENTS)}},
                        {"key": "net.peer.name", "value": {"stringValue": "db.internal"}},
                    ]
                    if self.rng.random() < 0.5:
                        attrs = [
                            {"key": "http.method", "value": {"stringValue": "GET"}},
                            {
                                "key": "http.url",
                                "value": {"stringValue": f"http://inventory.internal:8080/v1/items?sku={self.hex(3)}"},
                            },
                            {"key": "http.status_code", "value": {"intValue": self.pick((200, 404, 503))}},
                        ]
                    spans.append(
                        {
                            "traceId": self.hex(16),
                            "spanId": self.hex(8),
                            "name": self.pick(("SELECT shop.users", "GET /v1/items", "UPDATE shop.carts")),
                            "kind": 3,
                            "startTimeUnixNano": str(1796000000 * 10**9 + self.rng.randint(0, 10**12)),
                            "endTimeUnixNano": str(1796000001 * 10**9 + self.rng.randint(0, 10**12)),
                            "attributes": attrs,
                        }
                    )
                doc: dict[str, Any] = {
                    "resourceSpans": [
                        {
                            "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
                            "scopeSpans": [{"scope": {"name": "opentelemetry.instrumentation"}, "spans": spans}],
                        }
                    ]
                }
                self.add("telemetry", "POST", "/v1/traces", self.api("otel.example.net"), self.json(doc))
            elif kind == 1:
                records = [
                    {
                        "timeUnixNano": str(1796000000 * 10**9 + self.rng.randint(0, 10**12)),
                        "severityText": self.pick(("INFO", "WARN", "ERROR")),
                        "body": {"stringValue": self.pick(LOG_LINES)},
                        "attributes": [
                            {"key": "code.filepath", "value": {"stringValue": self.pick(("/app/worker.py", "main.go"))}}
                        ],
                    }
                    for _ in range(self.rng.randint(1, 5))
                ]
                doc = {
                    "resourceLogs": [
                        {
                            "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
                            "scopeLogs": [{"logRecords": records}],
                        }
                    ]
                }
                self.add("telemetry", "POST", "/v1/logs", self.api("otel.example.net"), self.json(doc))
            else:
                values = [
                    [str(1796000000 * 10**9 + self.rng.randint(0, 10**12)), self.pick(LOG_LINES)]
                    for _ in range(self.rng.randint(1, 6))
                ]
                doc = {"streams": [{"stream": {"app": service, "env": "prod"}, "values": values}]}
                self.add("telemetry", "POST", "/loki/api/v1/push", self.api("logs.example.net"), self.json(doc))

    def fhir(self, n: int) -> None:
        """HL7 FHIR R4: Patient and Observation resources (`application/fhir+json`) and searches."""
        for i in range(n):
            p = self.person()
            if i % 3 == 0:
                params = {
                    "family": p["last"],
                    "birthdate": f"ge{self.rng.randint(1940, 2005)}-01-01",
                    "_count": "20",
                    "_sort": "-_lastUpdated",
                }
                h = [*self.api("fhir.hospital.example", None), ("Accept", "application/fhir+json")]
                self.add("fhir", "GET", "/fhir/R4/Patient?" + query(params), h)
            elif i % 3 == 1:
                street, postal, city, country = self.pick(ADDRESSES)
                doc: dict[str, Any] = {
                    "resourceType": "Patient",
                    "name": [{"use": "official", "family": p["last"], "given": [p["first"]]}],
                    "telecom": [{"system": "email", "value": p["email"]}],
                    "gender": self.pick(("female", "male", "other", "unknown")),
                    "birthDate": f"{self.rng.randint(1940, 2020)}-0{self.rng.randint(1, 9)}-1{self.rng.randint(0, 9)}",
                    "address": [{"line": [street], "city": city, "postalCode": postal, "country": country}],
                }
                h = self.api("fhir.hospital.example", "application/fhir+json")
                self.add("fhir", "POST", "/fhir/R4/Patient", h, self.json(doc))
            else:
                doc = {
                    "resourceType": "Observation",
                    "status": "final",
                    "code": {"coding": [{"system": "http://loinc.org", "code": "8867-4", "display": "Heart rate"}]},
                    "subject": {"reference": f"Patient/{self.rng.randint(1000, 9999)}"},
                    "valueQuantity": {"value": self.rng.randint(50, 120), "unit": "beats/minute"},
                    "note": [{"text": self.pick(("Patient at rest; measured after 5' sitting", "post-op day 2"))}],
                }
                h = self.api("fhir.hospital.example", "application/fhir+json")
                self.add("fhir", "POST", "/fhir/R4/Observation", h, self.json(doc))

    def fediverse(self, n: int) -> None:
        """Mastodon's client API (form and JSON statuses) and ActivityPub inbox deliveries."""
        for i in range(n):
            text = self.pick(POSTS)
            kind = i % 3
            if kind == 0:
                fields = {"status": text, "visibility": self.pick(("public", "unlisted")), "language": "en"}
                h = self.api("social.example", "application/x-www-form-urlencoded")
                h.append(("Idempotency-Key", self.uid()))
                self.add("fediverse", "POST", "/api/v1/statuses", h, self.form(fields))
            elif kind == 1:
                doc: dict[str, Any] = {
                    "status": text,
                    "spoiler_text": self.pick(("", "long thread", "cw: work rant")),
                    "poll": {"options": ["yes", "no", "it depends"], "expires_in": 86400},
                }
                self.add("fediverse", "POST", "/api/v1/statuses", self.api("social.example"), self.json(doc))
            else:
                html = "<p>" + text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") + "</p>"
                doc = {
                    "@context": "https://www.w3.org/ns/activitystreams",
                    "id": f"https://other.example/users/ana/statuses/{self.rng.randint(10**17, 10**18)}/activity",
                    "type": "Create",
                    "actor": "https://other.example/users/ana",
                    "object": {
                        "id": f"https://other.example/users/ana/statuses/{self.rng.randint(10**17, 10**18)}",
                        "type": "Note",
                        "content": html,
                        "to": ["https://www.w3.org/ns/activitystreams#Public"],
                        "tag": [{"type": "Hashtag", "name": "#devops", "href": "https://other.example/tags/devops"}],
                    },
                }
                h = [
                    ("Host", "social.example"),
                    ("User-Agent", "Mastodon/4.5.2 (http.rb/5.2.0; +https://other.example/)"),
                    ("Content-Type", "application/activity+json"),
                    ("Date", "Mon, 07 Dec 2026 10:00:00 GMT"),
                    ("Digest", "SHA-256=" + base64.b64encode(self.rng.randbytes(32)).decode()),
                    (
                        "Signature",
                        'keyId="https://other.example/users/ana#main-key",algorithm="rsa-sha256",'
                        'headers="(request-target) host date digest content-type",signature="'
                        + base64.b64encode(self.rng.randbytes(256)).decode()
                        + '"',
                    ),
                ]
                self.add("fediverse", "POST", "/inbox", h, self.json(doc))

    def payments(self, n: int) -> None:
        """Form-encoded payment APIs as Stripe's clients send them (nested `metadata[...]`, `address[line1]`)."""
        for i in range(n):
            p = self.person()
            street, postal, city, country = self.pick(ADDRESSES)
            h = self.api("api.payments.example", "application/x-www-form-urlencoded")
            h.append(("Idempotency-Key", self.uid()))
            if i % 3 == 0:
                fields = [
                    ("name", f"{p['first']} {p['last']}"),
                    ("email", p["email"]),
                    ("description", self.pick(("VIP since 2019", "Reseller (net 30)", "Bestellung über Telefon"))),
                    ("address[line1]", street),
                    ("address[postal_code]", postal),
                    ("address[city]", city),
                    ("address[country]", country),
                    ("metadata[crm_id]", f"CRM-{self.rng.randint(10000, 99999)}"),
                    ("preferred_locales[0]", self.pick(("ko", "th", "el", "uk", "vi"))),
                ]
                self.add("payments", "POST", "/v1/customers", h, self.form(fields))
            elif i % 3 == 1:
                fields = [
                    ("mode", "payment"),
                    ("success_url", "https://shop.example/success?session_id={CHECKOUT_SESSION_ID}"),
                    ("cancel_url", "https://shop.example/cart"),
                    ("line_items[0][price]", f"price_{self.b64url(12)}"),
                    ("line_items[0][quantity]", str(self.rng.randint(1, 4))),
                    ("metadata[order_note]", self.pick(FORM_MESSAGES)),
                    ("customer_email", p["email"]),
                ]
                self.add("payments", "POST", "/v1/checkout/sessions", h, self.form(fields))
            else:
                params = {
                    "query": self.pick(
                        (
                            "email:'" + p["email"] + "'",
                            "metadata['crm_id']:'CRM-1234'",
                            "created>1796000000 AND status:'succeeded'",
                        )
                    ),
                    "limit": "20",
                }
                self.add(
                    "payments", "GET", "/v1/charges/search?" + query(params), self.api("api.payments.example", None)
                )

    def framework_forms(self, n: int) -> None:
        """Server-rendered forms of other frameworks: Spring Security, ASP.NET Core Identity, Flask-WTF,
        Phoenix, JSF, Drupal, Joomla, WordPress comments."""
        for i in range(n):
            kind = i % 8
            p = self.person()
            secret = "".join(self.rng.choices(string.ascii_letters + string.digits + "!@#$%^&*()-_=+[]{};:,.<>?", k=16))
            h = [*self.browser("app.example.org", True), ("Content-Type", "application/x-www-form-urlencoded")]
            if kind == 0:
                fields: list[tuple[str, str]] = [
                    ("username", p["email"]),
                    ("password", secret),
                    ("remember-me", "on"),
                    ("_csrf", self.uid()),
                ]
                self.add("framework-form", "POST", "/login", h, self.form(fields))
            elif kind == 1:
                fields = [
                    ("Input.Email", p["email"]),
                    ("Input.Password", secret),
                    ("Input.ConfirmPassword", secret),
                    ("Input.DisplayName", f"{p['first']} {p['last']}"),
                    ("__RequestVerificationToken", "CfDJ8" + self.b64url(100)),
                ]
                self.add("framework-form", "POST", "/Identity/Account/Register?returnUrl=%2F", h, self.form(fields))
            elif kind == 2:
                fields = [
                    ("csrf_token", f"{self.hex(20)}##{self.hex(20)}"),
                    ("full_name", f"{p['first']} {p['last']}"),
                    ("email", p["email"]),
                    ("message", self.pick(FORM_MESSAGES)),
                    ("submit", "Send"),
                ]
                self.add("framework-form", "POST", "/contact", h, self.form(fields))
            elif kind == 3:
                fields = [
                    ("_csrf_token", self.b64url(40)),
                    ("user[email]", p["email"]),
                    ("user[password]", secret),
                    ("user[remember_me]", "true"),
                ]
                self.add("framework-form", "POST", "/users/log_in", h, self.form(fields))
            elif kind == 4:
                fields = [
                    ("javax.faces.partial.ajax", "true"),
                    ("javax.faces.source", "orderForm:j_idt42"),
                    ("javax.faces.partial.execute", "@all"),
                    ("javax.faces.partial.render", "orderForm:messages orderForm:summary"),
                    ("orderForm", "orderForm"),
                    ("orderForm:customerName", f"{p['first']} {p['last']}"),
                    ("orderForm:remarks", self.pick(FORM_MESSAGES)),
                    (
                        "javax.faces.ViewState",
                        f"{self.rng.randint(-9 * 10**18, 9 * 10**18)}:{self.rng.randint(-9 * 10**18, 9 * 10**18)}",
                    ),
                ]
                h.append(("Faces-Request", "partial/ajax"))
                self.add("framework-form", "POST", "/shop/order.xhtml", h, self.form(fields))
            elif kind == 5:
                fields = [
                    ("subject[0][value]", self.pick(("Rechnung fehlt", "Question about SSO", "배송 문의"))),
                    ("message[0][value]", self.pick(FORM_MESSAGES)),
                    ("name", f"{p['first']} {p['last']}"),
                    ("mail", p["email"]),
                    ("form_build_id", "form-" + self.b64url(32)),
                    ("form_id", "contact_message_feedback_form"),
                    ("op", "Send message"),
                ]
                self.add("framework-form", "POST", "/contact/feedback", h, self.form(fields))
            elif kind == 6:
                fields = [
                    ("jform[contact_name]", f"{p['first']} {p['last']}"),
                    ("jform[contact_email]", p["email"]),
                    ("jform[contact_subject]", self.pick(("Angebot", "Reklamation", "Προσφορά"))),
                    ("jform[contact_message]", self.pick(FORM_MESSAGES)),
                    ("option", "com_contact"),
                    ("task", "contact.submit"),
                    (self.hex(16), "1"),
                ]
                self.add("framework-form", "POST", "/index.php/kontakt", h, self.form(fields))
            else:
                fields = [
                    ("comment", self.pick(POSTS)),
                    ("author", f"{p['first']} {p['last']}"),
                    ("email", p["email"]),
                    ("url", self.pick(("", "https://blog.example.org", "https://github.com/someone"))),
                    ("submit", "Post Comment"),
                    ("comment_post_ID", str(self.rng.randint(10, 9999))),
                    ("comment_parent", "0"),
                ]
                self.add("framework-form", "POST", "/wp-comments-post.php", h, self.form(fields))

    def spa(self, n: int) -> None:
        """Single-page and hybrid apps' requests: SvelteKit and Remix form actions, Livewire, Inertia,
        Angular's XSRF header, pages of other browsers."""
        for i in range(n):
            kind = i % 5
            p = self.person()
            if kind == 0:
                h = self.browser("www.example.kr", True)
                path = self.pick(("/", "/ko/products", "/th/cart", "/hi/account/orders", "/el/blog/2026/12/winter"))
                self.add("spa", "GET", path, h)
            elif kind == 1:
                h = self.browser("app.example.dev", False)
                h += [("Content-Type", "application/x-www-form-urlencoded"), ("x-sveltekit-action", "true")]
                fields = {"email": p["email"], "name": f"{p['first']} {p['last']}", "plan": "team"}
                self.add("spa", "POST", "/settings?/updateProfile", h, self.form(fields))
            elif kind == 2:
                snapshot = json.dumps(
                    {
                        "data": {
                            "search": "",
                            "sortBy": "created_at",
                            "perPage": 25,
                            "filters": [{"status": "open"}, {"s": "arr"}],
                        },
                        "memo": {
                            "id": self.b64url(15),
                            "name": "orders-table",
                            "path": "admin/orders",
                            "method": "GET",
                        },
                        "checksum": self.hex(32),
                    }
                )
                doc: dict[str, Any] = {
                    "_token": self.b64url(30),
                    "components": [
                        {
                            "snapshot": snapshot,
                            "updates": {"search": self.pick(SEARCH_PHRASES)},
                            "calls": [{"path": "", "method": "$refresh", "params": []}],
                        }
                    ],
                }
                h = [
                    *self.browser("admin.example.shop", False),
                    ("Content-Type", "application/json"),
                    ("X-Livewire", ""),
                ]
                self.add("spa", "POST", "/livewire/update", h, self.json(doc))
            elif kind == 3:
                h = self.browser("app.example.dev", False)
                h += [
                    ("X-Inertia", "true"),
                    ("X-Inertia-Version", self.hex(16)),
                    ("X-Requested-With", "XMLHttpRequest"),
                ]
                h += [("Content-Type", "application/json"), ("X-XSRF-TOKEN", self.b64url(40) + "%3D")]
                doc = {
                    "title": self.pick(("Q1 roadmap", "Ρυθμίσεις", "Bug bash 🐛")),
                    "due_on": "2026-12-20",
                    "assignee_id": self.rng.randint(1, 99),
                }
                self.add("spa", "POST", "/projects/12/tasks", h, self.json(doc))
            else:
                h = [*self.browser("app.example.dev", False), ("X-XSRF-TOKEN", self.b64url(40))]
                h += [("sentry-trace", f"{self.hex(16)}-{self.hex(8)}-1")]
                h += [
                    (
                        "baggage",
                        f"sentry-environment=production,sentry-release=web%40{self.rng.randint(100, 999)},"
                        f"sentry-public_key={self.hex(16)}",
                    )
                ]
                params = {"page": str(self.rng.randint(1, 9)), "sort": "-updated_at", "filter[status]": "active"}
                self.add("spa", "GET", "/api/v2/workspaces?" + query(params), h)

    def search(self, n: int) -> None:
        """Search engines' own query syntaxes: Elasticsearch's query DSL, Solr, Typesense, JQL, GitHub's."""
        for i in range(n):
            kind = i % 6
            phrase = self.pick(SEARCH_PHRASES)
            if kind == 0:
                doc: dict[str, Any] = {
                    "query": {
                        "bool": {
                            "must": [{"multi_match": {"query": phrase, "fields": ["title^3", "description"]}}],
                            "filter": [{"range": {"price": {"gte": 10, "lte": self.rng.randint(50, 500)}}}],
                        }
                    },
                    "aggs": {"brands": {"terms": {"field": "brand.keyword", "size": 20}}},
                    "size": 24,
                }
                self.add("search", "POST", "/products/_search", self.api("search.example.net"), self.json(doc))
            elif kind == 1:
                qs = self.pick(
                    (
                        f'title:"{phrase}" OR description:"{phrase}"',
                        "status:(open OR pending) AND NOT archived:true",
                        "author:D'Souza",
                        "created:[2026-01-01 TO *]",
                    )
                )
                doc = {"query": {"query_string": {"query": qs, "default_field": "content"}}}
                self.add("search", "POST", "/tickets/_search", self.api("search.example.net"), self.json(doc))
            elif kind == 2:
                params = {
                    "q": f'name:"{phrase}"',
                    "fq": "in_stock:true",
                    "sort": "score desc",
                    "rows": "20",
                    "wt": "json",
                }
                self.add("search", "GET", "/solr/catalog/select?" + query(params), self.api("solr.example.net", None))
            elif kind == 3:
                params = {
                    "q": phrase,
                    "query_by": "name,description",
                    "filter_by": self.pick(("price:>100 && in_stock:true", "brand:=[Acme, Contoso]", "rating:>=4")),
                    "sort_by": "popularity:desc",
                }
                h = [*self.api("typesense.example.net", None), ("X-TYPESENSE-API-KEY", self.b64url(24))]
                self.add("search", "GET", "/collections/products/documents/search?" + query(params), h)
            elif kind == 4:
                params = {"jql": self.pick(JQL), "maxResults": "50", "fields": "summary,status,assignee"}
                self.add(
                    "search", "GET", "/rest/api/3/search/jql?" + query(params), self.api("team.atlassian.example", None)
                )
            else:
                params = {
                    "q": self.pick(
                        (
                            'is:issue is:open label:"good first issue" language:go',
                            "repo:acme/api path:src/ extension:ts useEffect",
                            f"{phrase} in:title created:>2026-01-01",
                            "org:acme filename:Dockerfile FROM node",
                        )
                    ),
                    "per_page": "30",
                }
                self.add("search", "GET", "/search/issues?" + query(params), self.api("api.github.example", None))

    def profiles(self, n: int) -> None:
        """User profiles in other scripts to identity providers' admin APIs: Keycloak, Auth0, Okta."""
        for i in range(n):
            p = self.person()
            street, postal, city, country = self.pick(ADDRESSES)
            kind = i % 3
            if kind == 0:
                doc: dict[str, Any] = {
                    "username": p["email"].split("@")[0],
                    "email": p["email"],
                    "firstName": p["first"],
                    "lastName": p["last"],
                    "enabled": True,
                    "attributes": {
                        "locale": [self.pick(("ko", "th", "hi", "el", "ka", "hy", "am"))],
                        "phoneNumber": ["+82 10 1234 5678"],
                    },
                }
                self.add(
                    "profile", "POST", "/admin/realms/customers/users", self.api("sso.example.org"), self.json(doc)
                )
            elif kind == 1:
                doc = {
                    "given_name": p["first"],
                    "family_name": p["last"],
                    "nickname": p["first"],
                    "user_metadata": {
                        "preferred_name": f"{p['first']} {p['last']}",
                        "pronouns": self.pick(("she/her", "he/him", "they/them", "")),
                        "shipping": {"street": street, "zip": postal, "city": city, "country": country},
                    },
                }
                self.add(
                    "profile",
                    "PATCH",
                    f"/api/v2/users/auth0%7C{self.hex(12)}",
                    self.api("tenant.auth0.example"),
                    self.json(doc),
                )
            else:
                doc = {
                    "profile": {
                        "firstName": p["first"],
                        "lastName": p["last"],
                        "email": p["email"],
                        "login": p["email"],
                        "streetAddress": street,
                        "zipCode": postal,
                        "city": city,
                        "countryCode": country,
                        "title": self.pick(("Head of Data", "Ingénieure QA", "R&D Lead", "Senior Dev (Backend)")),
                    }
                }
                self.add(
                    "profile", "POST", "/api/v1/users?activate=false", self.api("org.okta.example"), self.json(doc)
                )

    def notebooks(self, n: int) -> None:
        """Documents that hold code by design under their own field names: Jupyter notebooks (`source`),
        Grafana dashboards (`expr`, `rawSql`), Metabase native questions (`native.query`)."""
        for i in range(n):
            kind = i % 3
            if kind == 0:
                cells = []
                for _ in range(self.rng.randint(2, 5)):
                    src = self.pick(NOTEBOOK_CELLS)
                    cells.append(
                        {
                            "cell_type": "markdown" if src.startswith("#") else "code",
                            "metadata": {},
                            "source": src.splitlines(keepends=True),
                            **({} if src.startswith("#") else {"outputs": [], "execution_count": None}),
                        }
                    )
                doc: dict[str, Any] = {
                    "type": "notebook",
                    "format": "json",
                    "content": {
                        "cells": cells,
                        "metadata": {"kernelspec": {"name": "python3"}},
                        "nbformat": 4,
                        "nbformat_minor": 5,
                    },
                }
                h = [*self.browser("jupyter.example.org", False), ("Content-Type", "application/json")]
                h.append(("X-XSRFToken", self.b64url(30)))
                self.add(
                    "notebook",
                    "PUT",
                    f"/api/contents/analysis/{self.pick(('sales', 'churn', 'q4'))}.ipynb",
                    h,
                    self.json(doc),
                )
            elif kind == 1:
                panels = []
                for j in range(self.rng.randint(1, 3)):
                    if self.rng.random() < 0.6:
                        target = {"refId": "A", "expr": self.pick(GRAFANA_EXPRS), "datasource": {"type": "prometheus"}}
                    else:
                        target = {
                            "refId": "A",
                            "rawSql": self.pick(RAW_SQL),
                            "format": "time_series",
                            "datasource": {"type": "grafana-postgresql-datasource"},
                        }
                    panels.append(
                        {
                            "id": j + 1,
                            "type": "timeseries",
                            "title": self.pick(("Error rate", "p99 latency", "Orders/h")),
                            "targets": [target],
                        }
                    )
                doc = {
                    "dashboard": {"uid": self.b64url(6), "title": "Checkout", "panels": panels},
                    "overwrite": True,
                    "message": "tweak thresholds",
                }
                self.add("notebook", "POST", "/api/dashboards/db", self.api("grafana.example.net"), self.json(doc))
            else:
                doc = {
                    "name": self.pick(("Revenue by day", "Top countries", "Open tickets by status")),
                    "dataset_query": {"type": "native", "native": {"query": self.pick(RAW_SQL)}, "database": 2},
                    "display": "line",
                    "visualization_settings": {},
                }
                self.add("notebook", "POST", "/api/card", self.api("metabase.example.net"), self.json(doc))

    def webhooks(self, n: int) -> None:
        """Webhooks of other senders: Jira, Linear, Telegram bots, WhatsApp Cloud, Typeform, Twitch, Zoom."""
        for i in range(n):
            kind = i % 7
            p = self.person()
            h = [("Host", "hooks.example.app"), ("Content-Type", "application/json")]
            if kind == 0:
                doc: dict[str, Any] = {
                    "webhookEvent": "jira:issue_updated",
                    "issue": {
                        "key": f"OPS-{self.rng.randint(100, 999)}",
                        "fields": {"summary": self.pick(FORM_MESSAGES)},
                    },
                    "changelog": {"items": [{"field": "status", "fromString": "To Do", "toString": "In Progress"}]},
                    "comment": {"body": self.pick(POSTS)},
                }
                self.add(
                    "webhook", "POST", "/jira", [*h, ("User-Agent", "Atlassian Webhook HTTP Client")], self.json(doc)
                )
            elif kind == 1:
                doc = {
                    "action": "create",
                    "type": "Comment",
                    "data": {"id": self.uid(), "body": self.pick(POSTS), "issueId": self.uid()},
                    "url": f"https://linear.example/acme/issue/ENG-{self.rng.randint(100, 999)}#comment-{self.hex(4)}",
                    "webhookTimestamp": 1796000000000 + self.rng.randint(0, 10**6),
                }
                self.add("webhook", "POST", "/linear", [*h, ("Linear-Signature", self.hex(32))], self.json(doc))
            elif kind == 2:
                doc = {
                    "update_id": self.rng.randint(10**8, 10**9),
                    "message": {
                        "message_id": self.rng.randint(1, 9999),
                        "from": {"id": self.rng.randint(10**8, 10**9), "first_name": p["first"], "language_code": "uk"},
                        "chat": {"id": self.rng.randint(10**8, 10**9), "type": "private"},
                        "date": 1796000000,
                        "text": self.pick((*POSTS, "/start", "/help", "/order 4471")),
                    },
                }
                h.append(("X-Telegram-Bot-Api-Secret-Token", self.b64url(24)))
                self.add("webhook", "POST", "/telegram/" + self.b64url(16), h, self.json(doc))
            elif kind == 3:
                doc = {
                    "object": "whatsapp_business_account",
                    "entry": [
                        {
                            "id": str(self.rng.randint(10**14, 10**15)),
                            "changes": [
                                {
                                    "field": "messages",
                                    "value": {
                                        "messaging_product": "whatsapp",
                                        "contacts": [
                                            {"profile": {"name": f"{p['first']} {p['last']}"}, "wa_id": "4915112345678"}
                                        ],
                                        "messages": [
                                            {
                                                "from": "4915112345678",
                                                "type": "text",
                                                "text": {"body": self.pick(FORM_MESSAGES)},
                                            }
                                        ],
                                    },
                                }
                            ],
                        }
                    ],
                }
                h.append(("X-Hub-Signature-256", "sha256=" + self.hex(32)))
                self.add("webhook", "POST", "/whatsapp", h, self.json(doc))
            elif kind == 4:
                doc = {
                    "event_type": "form_response",
                    "form_response": {
                        "form_id": self.b64url(6),
                        "answers": [
                            {"type": "text", "text": f"{p['first']} {p['last']}", "field": {"ref": "full_name"}},
                            {"type": "email", "email": p["email"], "field": {"ref": "email"}},
                            {"type": "text", "text": self.pick(FORM_MESSAGES), "field": {"ref": "feedback"}},
                            {"type": "choice", "choice": {"label": "Très satisfait(e)"}, "field": {"ref": "csat"}},
                        ],
                    },
                }
                h.append(("Typeform-Signature", "sha256=" + base64.b64encode(self.rng.randbytes(32)).decode()))
                self.add("webhook", "POST", "/typeform", h, self.json(doc))
            elif kind == 5:
                doc = {
                    "subscription": {
                        "type": "channel.chat.message",
                        "version": "1",
                        "condition": {"broadcaster_user_id": "1337"},
                    },
                    "event": {
                        "chatter_user_name": p["first"],
                        "message": {"text": self.pick((*POSTS, "PogChamp", "!commands", "gg wp <3"))},
                    },
                }
                h += [("Twitch-Eventsub-Message-Type", "notification"), ("Twitch-Eventsub-Message-Id", self.uid())]
                self.add("webhook", "POST", "/twitch", h, self.json(doc))
            else:
                doc = {
                    "event": "meeting.ended",
                    "payload": {
                        "account_id": self.b64url(16),
                        "object": {
                            "topic": self.pick(("Weekly sync", "Sprint review – Q4", "1:1 Ана / Олена")),
                            "duration": 30,
                        },
                    },
                    "event_ts": 1796000000000,
                }
                h.append(("x-zm-signature", "v0=" + self.hex(32)))
                self.add("webhook", "POST", "/zoom", h, self.json(doc))


def generate() -> Iterator[Request]:
    g = Gen()
    g.odata(80)
    g.jsonrpc(75)
    g.salesforce(60)
    g.telemetry(75)
    g.fhir(60)
    g.fediverse(75)
    g.payments(60)
    g.framework_forms(160)
    g.spa(100)
    g.search(120)
    g.profiles(90)
    g.notebooks(60)
    g.webhooks(105)
    yield from g.out


def main() -> int:
    return generator_main(__doc__, CORPORA / f"{NAME}.jsonl", generate)


if __name__ == "__main__":
    sys.exit(main())
