package joblog

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/importers"
)

// FuzzParse feeds arbitrary text to the parser: it must never panic or hang,
// and whatever it returns must validate and dump. Seeds: the generated
// fixtures and testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, mk := range fixtures {
		text := mk()
		if len(text) > 4096 {
			text = text[:4096]
		}
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, in string) {
		tr, err := Parse(strings.NewReader(in), "fuzz", importers.Options{MaxWarnings: 50})
		if err != nil {
			if !importers.IsInputError(err) {
				t.Fatalf("non-input error: %v", err)
			}
			return
		}
		if err := tr.Validate(); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := tr.Dump(&buf); err != nil {
			t.Fatal(err)
		}
	})
}
