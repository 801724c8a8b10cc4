package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corazawaf/coraza/v3"

	_ "polycrate.local/envoy/waf/internal/rx" // the @rx operator this build uses
	"polycrate.local/envoy/waf/internal/settings"
)

// crsDir is the CRS the tests load: $CRS_DIR, else ../shared/crs/v4.28.0 beside the repository.
func crsDir(tb testing.TB) string {
	if dir := os.Getenv("CRS_DIR"); dir != "" {
		return dir
	}
	dir, err := filepath.Abs("../../../../shared/crs/v4.28.0")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "rules")); err != nil {
		tb.Fatalf("OWASP CRS v4.28.0 not found at %s: set CRS_DIR", dir)
	}
	return dir
}

func engine(tb testing.TB, mutate func(*settings.Settings)) coraza.WAF {
	tb.Helper()
	s := settings.Defaults()
	s.CRSDir = crsDir(tb)
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
	for i := 0; i < 20; i++ {
		f() // warm-up: memoised transformations, pools
	}
	b.ResetTimer()
	start := cpuTime()
	for b.Loop() {
		f()
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

func run(w coraza.WAF, method, uri, contentType string, body []byte) {
	tx := w.NewTransaction()
	tx.ProcessConnection("203.0.113.7", 40000, "10.0.0.1", 10080)
	tx.ProcessURI(uri, method, "HTTP/1.1")
	tx.AddRequestHeader("Host", "bench.example.com")
	tx.AddRequestHeader("User-Agent", "bench/1.0")
	tx.AddRequestHeader("Accept", "*/*")
	if body != nil {
		tx.AddRequestHeader("Content-Type", contentType)
		tx.AddRequestHeader("Content-Length", strconv.Itoa(len(body)))
	}
	if it := tx.ProcessRequestHeaders(); it == nil {
		if body != nil {
			_, _, _ = tx.WriteRequestBody(body)
		}
		_, _ = tx.ProcessRequestBody()
	}
	tx.ProcessLogging()
	_ = tx.Close()
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
