package joblog

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/importers"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestGolden parses each generated fixture and compares its model dump with
// testdata/<name>.golden (go test -update rewrites them).
func TestGolden(t *testing.T) {
	names := make([]string, 0, len(fixtures))
	for n := range fixtures {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			text := fixtures[name]()
			tr, err := Parse(strings.NewReader(text), name+".log", importers.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Validate(); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := tr.Dump(&got); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("dump differs from %s (go test -update to accept):\n%s", path, got.String())
			}
		})
	}
}
