package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/detectors/ncclbw"
	"github.com/tracedx/tracedx/detectors/ncclerrors"
	"github.com/tracedx/tracedx/detectors/nccltransport"
	"github.com/tracedx/tracedx/internal/corpus"
)

// TestNCCLRulesOnCorpus runs each nccl-tests rule alone over every corpus
// log: no rule error, and every finding carries metrics. With TRACEDX_SHOW=1
// it logs the findings.
func TestNCCLRulesOnCorpus(t *testing.T) {
	for _, path := range corpus.Files(t, "corpus/nccl", ".log") {
		set, err := Load(context.Background(), []string{path}, Options{})
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(path), err)
		}
		for _, det := range []*detectors.Detector{ncclbw.Detector, ncclerrors.Detector, nccltransport.Detector} {
			res := detectors.Run(set, []*detectors.Detector{det}, detectors.Config{})
			if len(res.Errors) > 0 {
				t.Fatalf("%s: %v", filepath.Base(path), res.Errors)
			}
			for _, fd := range res.Findings {
				if len(fd.Metrics) == 0 {
					t.Errorf("%s: %s: finding without metrics: %s", filepath.Base(path), det.ID, fd.Message)
				}
				if os.Getenv("TRACEDX_SHOW") != "" {
					t.Logf("%s %s: %s", det.ID, fd.Severity, fd.Message)
				}
			}
		}
	}
}
