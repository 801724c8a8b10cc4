package server

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corazawaf/coraza/v3"
	"github.com/corazawaf/coraza/v3/types"

	"polycrate.local/envoy/waf/internal/rx" // the @rx operator this build uses
	"polycrate.local/envoy/waf/internal/settings"
	"polycrate.local/envoy/waf/internal/testsupport"
)

func engine(tb testing.TB, mutate func(*settings.Settings)) coraza.WAF {
	tb.Helper()
	s := settings.Defaults()
	s.CRSDir = testsupport.CRSDir(tb)
	if mutate != nil {
		mutate(&s)
	}
	d, err := s.Directives()
	if err != nil {
		tb.Fatal(err)
	}
	w, err := coraza.NewWAF(coraza.NewWAFConfig().WithDirectives(d))
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

// JSON16K is the benchmark's 16 KiB JSON body: an API document of 18 records with a prose field each
// (about 100 arguments). Many tiny fields cost more per byte (Coraza's cost is per argument and rule).
var JSON16K = func() []byte {
	text := strings.Repeat("Widgets ship in two sizes and three colours; returns are free within thirty days. ", 10)
	var b strings.Builder
	b.WriteString(`{"customer": "alice@example.com", "items": [`)
	for i := 0; i < 18; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"id": %d, "name": "widget %d", "tags": ["blue", "small"], "note": "%s"}`, 1000+i, i, text[:820])
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}()

// benchJSON is the JSON body of the benchmark: $WAF_BENCH_JSON (the file `make bench-waf` also sends
// through Envoy), else JSON16K.
func benchJSON(b *testing.B) []byte {
	if path := os.Getenv("WAF_BENCH_JSON"); path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	return JSON16K
}

// cpuTime is this process's user+system CPU time (every thread: the collector's work counts too).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loop runs f b.N times and reports CPU milliseconds per call (wall time is noisy on a shared machine).
func loop(b *testing.B, f func()) {
	for i := 0; i < 3; i++ {
		f() // warm-up: memoised transformations, pools
	}
	b.ResetTimer()
	start := cpuTime()
	for b.Loop() {
		f()
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// Shape is one request of the benchmark (the shapes issue 26 measured): what the engine sees and what
// `make bench-waf` sends through Envoy (WriteShapes).
type Shape struct {
	Name        string
	Method, URI string
	Headers     [][2]string // besides Host
	ContentType string
	Body        []byte
}

// browserHeaders are the 11 headers of an ordinary browser GET (Host is the 11th).
var browserHeaders = [][2]string{
	{"User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"},
	{"Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"},
	{"Accept-Language", "en-US,en;q=0.5"},
	{"Accept-Encoding", "gzip, deflate, br"},
	{"Referer", "https://bench.example.com/catalogue?page=2"},
	{"Cookie", "session=3f2a9c1e7b5d4a8f; theme=dark; consent=yes"},
	{"Upgrade-Insecure-Requests", "1"},
	{"Sec-Fetch-Dest", "document"},
	{"Sec-Fetch-Mode", "navigate"},
	{"Sec-Fetch-Site", "same-origin"},
}

// records are the 800 fields of the JSON and form shapes: 200 records {id, name, email, active}.
func records(form bool) []byte {
	var b strings.Builder
	if !form {
		b.WriteString("[")
	}
	for i := 0; i < 200; i++ {
		if form {
			if i > 0 {
				b.WriteString("&")
			}
			fmt.Fprintf(&b, "id%d=%d&name%d=user+%d&email%d=user%d%%40example.com&active%d=true", i, 1000+i, i, i, i, i, i)
			continue
		}
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"user %d","email":"user%d@example.com","active":true}`, 1000+i, i, i)
	}
	if !form {
		b.WriteString("]")
	}
	return []byte(b.String())
}

// longBody is one JSON field of prose filling the default body limit (128 KiB).
func longBody() []byte {
	prose := strings.Repeat("Widgets ship in two sizes and three colours; returns are free within thirty days. ", 2000)
	head, tail := `{"note": "`, `"}`
	return []byte(head + prose[:131072-len(head)-len(tail)] + tail)
}

// Shapes are the benchmark's requests.
var Shapes = []Shape{
	{Name: "GET", Method: "GET", URI: "/catalogue/items?q=blue+widgets&page=2&sort=price", Headers: browserHeaders},
	{Name: "JSON800", Method: "POST", URI: "/api/users", Headers: apiHeaders, ContentType: "application/json", Body: records(false)},
	{Name: "Form800", Method: "POST", URI: "/api/users", Headers: apiHeaders, ContentType: "application/x-www-form-urlencoded", Body: records(true)},
	{Name: "Body128K", Method: "POST", URI: "/api/notes", Headers: apiHeaders, ContentType: "application/json", Body: longBody()},
}

var apiHeaders = [][2]string{{"User-Agent", "bench-client/1.0"}, {"Accept", "application/json"}}

func run(w coraza.WAF, method, uri, contentType string, body []byte) {
	runShape(w, Shape{Method: method, URI: uri, Headers: [][2]string{{"User-Agent", "bench/1.0"}, {"Accept", "*/*"}}, ContentType: contentType, Body: body})
}

func runShape(w coraza.WAF, s Shape) { _ = verdict(w, s) }

// verdict runs one request through the engine: its interruption, nil when it passes.
func verdict(w coraza.WAF, s Shape) *types.Interruption {
	tx := w.NewTransaction()
	tx.ProcessConnection("203.0.113.7", 40000, "10.0.0.1", 10080)
	tx.ProcessURI(s.URI, s.Method, "HTTP/1.1")
	tx.AddRequestHeader("Host", "bench.example.com")
	for _, h := range s.Headers {
		tx.AddRequestHeader(h[0], h[1])
	}
	if s.Body != nil {
		tx.AddRequestHeader("Content-Type", s.ContentType)
		tx.AddRequestHeader("Content-Length", strconv.Itoa(len(s.Body)))
	}
	it := tx.ProcessRequestHeaders()
	if it == nil {
		if s.Body != nil {
			it, _, _ = tx.WriteRequestBody(s.Body)
		}
		if it == nil {
			it, _ = tx.ProcessRequestBody()
		}
	}
	tx.ProcessLogging()
	_ = tx.Close()
	return it
}

// BenchmarkShapes is the engine alone on each shape, for each matcher setting: the shipped one (RE2 for
// every input), Go's regexp below 256 bytes (the former choice), and each without the literal prefilter. `make bench-waf`
// prints them; the shipped choice in internal/rx is the one these numbers picked (BUILD.md).
func BenchmarkShapes(b *testing.B) {
	variants := []struct {
		name      string
		short     int
		prefilter bool
	}{
		{"shipped", rx.ShortInput, true},
		{"go-below-256", 256, true},
		{"shipped-no-prefilter", rx.ShortInput, false},
		{"go-below-256-no-prefilter", 256, false},
	}
	only := os.Getenv("WAF_BENCH_VARIANTS") // comma-separated names; empty: all
	shipped := rx.ShortInput
	defer func() { rx.ShortInput = shipped }()
	for _, v := range variants {
		if only != "" && !strings.Contains(","+only+",", ","+v.name+",") {
			continue
		}
		rx.ShortInput = v.short // read as the rules compile
		var w coraza.WAF
		if v.prefilter {
			w = engine(b, nil)
		} else {
			w = engineWithout(b, "SecRxPreFilter On")
		}
		for _, shape := range Shapes {
			b.Run(shape.Name+"/"+v.name, func(b *testing.B) {
				loop(b, func() { runShape(w, shape) })
			})
		}
	}
}

// engineWithout is the service's engine with one directive line removed.
func engineWithout(tb testing.TB, line string) coraza.WAF {
	tb.Helper()
	s := settings.Defaults()
	s.CRSDir = testsupport.CRSDir(tb)
	d, err := s.Directives()
	if err != nil {
		tb.Fatal(err)
	}
	if !strings.Contains(d, line+"\n") {
		tb.Fatalf("no %q in the directives", line)
	}
	w, err := coraza.NewWAF(coraza.NewWAFConfig().WithDirectives(strings.Replace(d, line+"\n", "", 1)))
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

// TestWriteShapes writes the shapes for `make bench-waf` (which sends the same bytes through Envoy) into
// $WAF_BENCH_SHAPES: NAME.json with method, uri, headers and content type, NAME.body with the body.
func TestWriteShapes(t *testing.T) {
	dir := os.Getenv("WAF_BENCH_SHAPES")
	if dir == "" {
		t.Skip("WAF_BENCH_SHAPES not set")
	}
	for _, s := range Shapes {
		meta, err := json.Marshal(map[string]any{"method": s.Method, "uri": s.URI, "headers": s.Headers, "content_type": s.ContentType})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, s.Name+".json"), meta, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, s.Name+".body"), s.Body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestShapes: the benchmark's requests are what they say, and benign (the CRS passes each one: a
// blocked request would measure the refusal, not the inspection).
func TestShapes(t *testing.T) {
	w := engine(t, nil)
	for _, s := range Shapes {
		if it := verdict(w, s); it != nil {
			t.Errorf("%s is blocked by rule %d", s.Name, it.RuleID)
		}
	}
	if n := len(Shapes[0].Headers) + 1; n != 11 {
		t.Errorf("GET has %d headers", n)
	}
	if n := strings.Count(string(Shapes[1].Body), ":"); n != 800 {
		t.Errorf("JSON has %d fields", n)
	}
	if n := strings.Count(string(Shapes[2].Body), "="); n != 800 {
		t.Errorf("form has %d fields", n)
	}
	if n := len(Shapes[3].Body); n != 131072 {
		t.Errorf("long body is %d bytes", n)
	}
}

// BenchmarkEngineGET is the engine alone on the benchmark's GET (phases 1, 2 and logging).
func BenchmarkEngineGET(b *testing.B) {
	w := engine(b, nil)
	loop(b, func() { run(w, "GET", "/bench?q=hello", "", nil) })
}

// BenchmarkEngineJSON16K is the engine alone on the benchmark's 16 KiB JSON POST.
func BenchmarkEngineJSON16K(b *testing.B) {
	w := engine(b, nil)
	body := benchJSON(b)
	loop(b, func() { run(w, "POST", "/bench?q=hello", "application/json", body) })
}

// BenchmarkEngineForm96K is one 96 KiB form argument, the body-buffer tests' worst case.
func BenchmarkEngineForm96K(b *testing.B) {
	w := engine(b, nil)
	body := []byte("a=" + strings.Repeat("x", 96*1024))
	loop(b, func() { run(w, "POST", "/form", "application/x-www-form-urlencoded", body) })
}

func TestJSON16KIsSixteenKiB(t *testing.T) {
	if n := len(JSON16K); n < 15*1024 || n > 17*1024 {
		t.Fatalf("JSON16K is %d bytes", n)
	}
}

// BenchmarkEngineManyArgs is a form of 3000 tiny arguments (the hostile tests' case).
func BenchmarkEngineManyArgs(b *testing.B) {
	w := engine(b, nil)
	var parts []string
	for i := 0; i < 3000; i++ {
		parts = append(parts, fmt.Sprintf("a%d=%d", i, i))
	}
	body := []byte(strings.Join(parts, "&"))
	loop(b, func() { run(w, "POST", "/form", "application/x-www-form-urlencoded", body) })
}
