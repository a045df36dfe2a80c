package servingthroughput

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/importers/joblog"
	"github.com/tracedx/tracedx/model"
)

func analyseLog(t *testing.T, text string, params map[string]float64) detectors.Result {
	t.Helper()
	tr, err := joblog.Parse(strings.NewReader(text), "serve.log", importers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := detectors.Config{Params: map[string]map[string]float64{Detector.ID: params}}
	return detectors.Run(model.NewTraceSet([]*model.Trace{tr}), []*detectors.Detector{Detector}, cfg)
}

// v1 writes vLLM V1 stats lines, one per (running, waiting, kv%) triple.
func v1(gen float64, rows ...[3]float64) string {
	var b strings.Builder
	for i, r := range rows {
		fmt.Fprintf(&b, "INFO 07-28 06:%02d:%02d [loggers.py:118] Engine 000: Avg prompt throughput: 500.0 tokens/s, Avg generation throughput: %.1f tokens/s, Running: %.0f reqs, Waiting: %.0f reqs, GPU KV cache usage: %.1f%%, Prefix cache hit rate: 0.0%%\n",
			i/6, i*10%60, gen, r[0], r[1], r[2])
	}
	return b.String()
}

func byTitle(res detectors.Result, prefix string) *model.Finding {
	for i := range res.Findings {
		if strings.HasPrefix(res.Findings[i].Title, prefix) {
			return &res.Findings[i]
		}
	}
	return nil
}

func TestPlantedSchedulerBoundQueue(t *testing.T) {
	res := analyseLog(t, v1(900, [3]float64{256, 40, 30}, [3]float64{256, 60, 31}, [3]float64{256, 80, 32}, [3]float64{256, 100, 33}), nil)
	f := byTitle(res, "Requests queue")
	if f == nil || !strings.Contains(f.Message, "scheduler-bound") {
		t.Fatalf("want a scheduler-bound queue: %+v", res.Findings)
	}
}

func TestPlantedMemoryBoundQueueAndTarget(t *testing.T) {
	res := analyseLog(t, v1(300, [3]float64{30, 5, 95}, [3]float64{28, 9, 97}, [3]float64{29, 12, 98}), map[string]float64{"target_tps": 1000})
	if f := byTitle(res, "Requests queue"); f == nil || !strings.Contains(f.Message, "memory-bound") {
		t.Fatalf("want a memory-bound queue: %+v", res.Findings)
	}
	if byTitle(res, "Generation throughput below target") == nil {
		t.Errorf("no below-target finding")
	}
}

func TestCleanSummaryOnly(t *testing.T) {
	res := analyseLog(t, v1(1200, [3]float64{64, 0, 40}, [3]float64{64, 0, 41}, [3]float64{64, 0, 42}), nil)
	if len(res.Findings) != 1 || res.Findings[0].Severity != model.SevInfo {
		t.Fatalf("want only the summary: %+v", res.Findings)
	}
	f := res.Findings[0]
	if m, _ := f.Metric("gen_tps_p50"); m.Value != 1200 {
		t.Errorf("gen p50 %v", m.Value)
	}
	if m, _ := f.Metric("kv_usage_max"); m.Value != 42 {
		t.Errorf("kv max %v", m.Value)
	}
}

// TestQuietIdleSamples: SGLang's first decode after a prefill reports a
// throughput over an idle gap; it is an idle sample, not the steady state.
func TestQuietIdleSamples(t *testing.T) {
	res := analyseLog(t, `[2025-09-03 18:33:19 TP0] Decode batch. #running-req: 1, #token: 137, token usage: 0.00, cuda graph: True, gen throughput (token/s): 1.06, #queue-req: 0,
[2025-09-03 18:33:19 TP0] Decode batch. #running-req: 1, #token: 177, token usage: 0.00, cuda graph: True, gen throughput (token/s): 84.20, #queue-req: 0,
[2025-09-03 18:33:32 TP0] Decode batch. #running-req: 1, #token: 234, token usage: 0.00, cuda graph: True, gen throughput (token/s): 3.17, #queue-req: 0,
[2025-09-03 18:33:32 TP0] Decode batch. #running-req: 1, #token: 274, token usage: 0.00, cuda graph: True, gen throughput (token/s): 81.97, #queue-req: 0,
`, nil)
	if len(res.Findings) != 1 {
		t.Fatalf("want only the summary: %+v", res.Findings)
	}
	if m, _ := res.Findings[0].Metric("gen_tps_p50"); m.Value < 80 {
		t.Errorf("steady p50 %v includes idle samples", m.Value)
	}
}
