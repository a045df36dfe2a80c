package export_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/export"
	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/importers/joblog"
	"github.com/tracedx/tracedx/internal/pipeline"
	"github.com/tracedx/tracedx/model"
)

// servingLog is a generated vLLM V1 log: four stats lines, KV 91-97 %, one
// interval with preemptions, speculative decoding at 62 % acceptance.
const servingLog = `INFO 06-01 08:01:00 [loggers.py:118] Engine 000: Avg prompt throughput: 900.0 tokens/s, Avg generation throughput: 1500.0 tokens/s, Running: 60 reqs, Waiting: 0 reqs, GPU KV cache usage: 91.0%, Prefix cache hit rate: 30.0%
INFO 06-01 08:01:10 [loggers.py:118] Engine 000: Avg prompt throughput: 800.0 tokens/s, Avg generation throughput: 1520.0 tokens/s, Running: 62 reqs, Waiting: 4 reqs, GPU KV cache usage: 95.0%, Prefix cache hit rate: 30.0%
INFO 06-01 08:01:20 [loggers.py:118] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 1300.0 tokens/s, Running: 58 reqs, Waiting: 9 reqs, Preemptions: 5, GPU KV cache usage: 97.0%, Prefix cache hit rate: 30.0%
INFO 06-01 08:01:20 [metrics.py:120] SpecDecoding metrics: Draft acceptance rate: 62.0%, Mean acceptance length: 2.86, Accepted: 620 tokens, Drafted: 1000 tokens, Per-position acceptance rate: 0.800, 0.600, 0.460
INFO 06-01 08:01:30 [loggers.py:118] Engine 000: Avg prompt throughput: 700.0 tokens/s, Avg generation throughput: 1480.0 tokens/s, Running: 61 reqs, Waiting: 2 reqs, GPU KV cache usage: 93.0%, Prefix cache hit rate: 30.0%
`

// TestServingSummary: the serving summary table in text and Markdown and
// the top-level "serving" array in JSON, with the preemptions and the
// acceptance of the log.
func TestServingSummary(t *testing.T) {
	tr, err := joblog.Parse(strings.NewReader(servingLog), "serve.log", importers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := pipeline.AnalyzeSet(model.NewTraceSet([]*model.Trace{tr}), pipeline.Options{})
	var txt, md, js bytes.Buffer
	if err := export.Text(&txt, r); err != nil {
		t.Fatal(err)
	}
	if err := export.Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := export.JSON(&js, r); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": txt.String(), "md": md.String()} {
		if !strings.Contains(out, "Serving summary (engine logs)") || !strings.Contains(out, "vllm-v1 Engine 000") || !strings.Contains(out, "62.0%") {
			t.Errorf("%s report lacks the serving summary:\n%s", name, out)
		}
	}
	var doc struct {
		Serving []map[string]any `json:"serving"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Serving) != 1 {
		t.Fatalf("serving: %v", doc.Serving)
	}
	s := doc.Serving[0]
	if s["engine"] != "vllm-v1 Engine 000" || s["input"] != "serve.log" || s["preemptions"] != 5.0 || s["kv_usage_max_pct"] != 97.0 ||
		s["spec_acceptance_pct"] != 62.0 || s["waiting_max"] != 9.0 {
		t.Errorf("serving: %v", s)
	}
}
