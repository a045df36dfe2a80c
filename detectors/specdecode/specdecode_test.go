package specdecode

import (
	"strings"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/importers/joblog"
	"github.com/tracedx/tracedx/model"
)

func analyseLog(t *testing.T, text string) detectors.Result {
	t.Helper()
	tr, err := joblog.Parse(strings.NewReader(text), "spec.log", importers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return detectors.Run(model.NewTraceSet([]*model.Trace{tr}), []*detectors.Detector{Detector}, detectors.Config{})
}

func TestPlantedLowAcceptance(t *testing.T) {
	res := analyseLog(t, `INFO 06-01 08:01:00 [metrics.py:120] SpecDecoding metrics: Mean acceptance length: 1.42, Accepted throughput: 20.10 tokens/s, Drafted throughput: 96.00 tokens/s, Accepted: 201 tokens, Drafted: 960 tokens, Per-position acceptance rate: 0.350, 0.050, 0.020, 0.000, Avg Draft acceptance rate: 20.9%
`)
	if len(res.Findings) != 1 || res.Findings[0].Title != "Low speculative-decoding acceptance" {
		t.Fatalf("want one low-acceptance finding: %+v", res.Findings)
	}
	f := res.Findings[0]
	if !strings.Contains(f.Recommendation, "num_speculative_tokens to 1") {
		t.Errorf("recommendation: %s", f.Recommendation)
	}
	if m, _ := f.Metric("est_speedup_worst"); m.Value > 1.1 {
		t.Errorf("speed-up %v", m.Value)
	}
}

func TestCleanGoodAcceptance(t *testing.T) {
	res := analyseLog(t, `INFO 06-01 08:01:00 [metrics.py:120] SpecDecoding metrics: Draft acceptance rate: 71.3%, Mean acceptance length: 3.14, Accepted: 1426 tokens, Drafted: 2000 tokens, Per-position acceptance rate: 0.905, 0.783, 0.681, 0.483
INFO 05-14 09:02:00 metrics.py:373] Speculative metrics: Draft acceptance rate: 0.712, System efficiency: 0.6, Number of speculative tokens: 3, Number of accepted tokens: 2136, Number of draft tokens: 3000, Number of emitted tokens: 3136.
`)
	if len(res.Findings) != 1 || res.Findings[0].Severity != model.SevInfo {
		t.Fatalf("want one info finding: %+v", res.Findings)
	}
}

// TestLowAcceptanceStillPays: the corpus case (vLLM V1, k=2, acceptance
// 54 % then 42 %, mean length 2.08 then 1.85): ≈1.5x estimated, so an
// info, not a warning.
func TestLowAcceptanceStillPays(t *testing.T) {
	res := analyseLog(t, `INFO 01-15 10:30:00 [metrics.py:120] SpecDecoding metrics: Mean acceptance length: 1.85, Accepted throughput: 15.00 tokens/s, Drafted throughput: 35.00 tokens/s, Accepted: 150 tokens, Drafted: 354 tokens, Per-position acceptance rate: 0.511, 0.337, Avg Draft acceptance rate: 42.4%
`)
	if len(res.Findings) != 1 || res.Findings[0].Severity != model.SevInfo || !strings.Contains(res.Findings[0].Title, "still pays") {
		t.Fatalf("want one info finding: %+v", res.Findings)
	}
}
