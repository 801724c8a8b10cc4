// Package testsupport holds what the Go tests of several packages share. Only tests import it.
package testsupport

import (
	"os"
	"path/filepath"
	"testing"
)

// CRSDir is the OWASP CRS the tests load: $CRS_DIR, else ../shared/crs/v4.28.0 beside the repository
// (go test runs in the package's folder, waf/internal/<package>). It fails the test when no rules are there.
func CRSDir(tb testing.TB) string {
	tb.Helper()
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
