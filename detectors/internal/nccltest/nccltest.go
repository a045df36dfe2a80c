// Package nccltest holds what the tests of the nccl-tests rules share: a run
// of one rule over every log of the shared corpus.
package nccltest

import (
	"os"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/importers/nccltests"
	"github.com/tracedx/tracedx/internal/corpus"
	"github.com/tracedx/tracedx/model"
)

// RunCorpus runs det over every corpus log: no import error, no rule error,
// and every finding carries metrics. With TRACEDX_SHOW=1 it logs them.
func RunCorpus(t *testing.T, det *detectors.Detector) {
	t.Helper()
	for _, path := range corpus.Files(t, "corpus/nccl", ".log") {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := nccltests.Parse(f, path, importers.Options{})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		res := detectors.Run(model.NewTraceSet([]*model.Trace{tr}), []*detectors.Detector{det}, detectors.Config{})
		if len(res.Errors) > 0 {
			t.Fatal(res.Errors)
		}
		for _, fd := range res.Findings {
			if len(fd.Metrics) == 0 {
				t.Errorf("finding without metrics: %s", fd.Message)
			}
			if os.Getenv("TRACEDX_SHOW") != "" {
				t.Logf("%s: %s", fd.Severity, fd.Message)
			}
		}
	}
}
