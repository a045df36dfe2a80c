package nccltests_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/importers/all"
	"github.com/tracedx/tracedx/internal/corpus"
	"github.com/tracedx/tracedx/model"
)

// TestRegistryDetects: the default registry picks this importer for every
// corpus log, and Import through it succeeds.
func TestRegistryDetects(t *testing.T) {
	reg := all.Registry()
	for _, path := range corpus.Files(t, "corpus/nccl", ".log") {
		imp, err := reg.Detect(path)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(path), err)
			continue
		}
		if imp.Format() != model.FormatNCCLTests {
			t.Errorf("%s: detected as %s", filepath.Base(path), imp.Format())
			continue
		}
		if _, err := imp.Import(context.Background(), path, importers.Options{}); err != nil {
			t.Errorf("%s: %v", filepath.Base(path), err)
		}
	}
}
