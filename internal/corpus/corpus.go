// Package corpus locates the shared corpus of real traces (../shared/corpus
// beside the checkout) for tests. Under CI=true a missing corpus fails the
// test loudly; elsewhere the test is skipped.
package corpus

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// Root returns the repository root (the directory holding go.mod).
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Shared returns the path of ../shared beside the checkout (or $TRACEDX_SHARED).
func Shared() string {
	if s := os.Getenv("TRACEDX_SHARED"); s != "" {
		return s
	}
	return filepath.Join(Root(), "..", "shared")
}

// Dir returns ../shared/<sub> (e.g. "corpus/kineto"), failing the test under
// CI=true or skipping it otherwise when the folder is missing.
func Dir(tb testing.TB, sub string) string {
	tb.Helper()
	d := filepath.Join(Shared(), sub)
	if st, err := os.Stat(d); err != nil || !st.IsDir() {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("shared folder %s is missing (CI=true requires it)", d)
		}
		tb.Skipf("shared folder %s is missing", d)
	}
	return d
}

// Files lists the files in ../shared/<sub> whose names end with one of the
// suffixes, sorted; it fails under CI=true when there are none.
func Files(tb testing.TB, sub string, suffixes ...string) []string {
	tb.Helper()
	d := Dir(tb, sub)
	ents, err := os.ReadDir(d)
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		for _, s := range suffixes {
			if strings.HasSuffix(e.Name(), s) {
				out = append(out, filepath.Join(d, e.Name()))
				break
			}
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		tb.Fatalf("no %v files in %s", suffixes, d)
	}
	return out
}
