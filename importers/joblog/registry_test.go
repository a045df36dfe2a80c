package joblog_test

import (
	"path/filepath"
	"testing"

	"github.com/tracedx/tracedx/importers/all"
	"github.com/tracedx/tracedx/internal/corpus"
	"github.com/tracedx/tracedx/model"
)

// TestRegistryDetects: the default registry gives every corpus job and
// engine log to this importer, the NCCL_DEBUG-only excerpts of vLLM jobs
// included (the nccl-tests importer also claims bare NCCL INFO lines, with
// a lower score).
func TestRegistryDetects(t *testing.T) {
	reg := all.Registry()
	for _, path := range corpus.Files(t, "corpus/joblogs", ".log") {
		imp, err := reg.Detect(path)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(path), err)
			continue
		}
		if imp.Format() != model.FormatJobLog {
			t.Errorf("%s: detected as %s", filepath.Base(path), imp.Format())
		}
	}
}
