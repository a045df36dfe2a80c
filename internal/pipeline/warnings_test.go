package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/model"
)

func TestCapWarnings(t *testing.T) {
	tr := model.NewTrace("x.json", model.FormatKineto)
	for i := range 50 {
		tr.Warn("event 1", "warning %d: %s", i, strings.Repeat("9", 5000))
	}
	capWarnings(tr, 10)
	if len(tr.Warnings) != 11 || tr.Warnings[10].Message != "40 more warnings not shown" {
		t.Fatalf("%d warnings, last %q", len(tr.Warnings), tr.Warnings[len(tr.Warnings)-1].Message)
	}
	for _, w := range tr.Warnings {
		if len(w.Message) > MaxWarningBytes || len(w.Position) > MaxWarningBytes {
			t.Errorf("warning of %d bytes", len(w.Message))
		}
	}
	if !strings.Contains(tr.Warnings[0].Message, "…[5011 bytes, sha256 ") {
		t.Errorf("shortened warning lacks its length and hash: %.80q", tr.Warnings[0].Message)
	}
}

// TestHugeNumberWarning: a Kineto event whose timestamp has 200,000 digits
// gives one warning of at most MaxWarningBytes (it was as long as the number).
func TestHugeNumberWarning(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.json")
	doc := `{"schemaVersion":1,"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1` +
		strings.Repeat("9", 200000) + `,"dur":5,"args":{"device":0,"stream":7}}]}`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := Load(context.Background(), []string{path}, Options{})
	if err != nil {
		t.Fatalf("the importer refuses the file instead of warning: %v", err)
	}
	ws := set.Traces[0].Warnings
	if len(ws) == 0 {
		t.Fatal("no warning for the huge timestamp")
	}
	for _, w := range ws {
		if len(w.Message)+len(w.Position) > 2*MaxWarningBytes {
			t.Errorf("warning of %d bytes", len(w.Message)+len(w.Position))
		}
	}
}
