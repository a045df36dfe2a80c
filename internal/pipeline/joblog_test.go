package pipeline

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/internal/corpus"
)

// joblogFindings is what each real job / engine log of the corpus produces
// (rule: title, in report order), checked by reading the logs. Every log,
// the three NCCL_DEBUG-only excerpts included, is sniffed as a job log.
var joblogFindings = map[string]string{
	"gh-blazux9-vllm-v1-specdecode-accept42-54pct-kv70pct-3reqs.log":                        "serving-throughput: Serving summary: vllm-v1 Engine 000 | spec-decode: Low speculative-decoding acceptance, speculation still pays",
	"gh-llamafactory7396-train-w8-watchdog-timeout-allreduce-seq1580-multirank-excerpt.log": "collective-timeout: Collective timeout: ALLREDUCE SeqNum 1580 (466119168 elements)",
	"gh-mellea416-vllm-v0-startup-profiling-cudablocks-maxconc70x-graph2s.log":              "",
	"gh-sglang10053-prefill-decode-cudagraph-1req-cached-tokens.log":                        "serving-throughput: Serving summary: sglang TP0",
	"gh-sglang14972-decode-usage0.94-queue5-6reqs-cudagraph.log":                            "memory-pressure: KV cache saturated: sglang TP0 | serving-throughput: Requests queue: sglang TP0 | serving-throughput: Serving summary: sglang TP0",
	"gh-sglang1612-prefill-batches-queue38-to-18-usage0-to-0.77.log":                        "serving-throughput: Requests queue: sglang TP0 | serving-throughput: Serving summary: sglang TP0",
	"gh-sglang3909-decode-8reqs-usage0.13-throughput-187-184.log":                           "serving-throughput: Serving summary: sglang TP0",
	"gh-trtllmbackend217-ifb-iteration-stats-json.log":                                      "serving-throughput: Serving summary: trtllm",
	"gh-vllm21809-v1-kv94-96pct-8reqs-throughput-flat.log":                                  "memory-pressure: KV cache saturated: vllm-v1 Engine 000 | serving-throughput: Serving summary: vllm-v1 Engine 000",
	"gh-vllm27073-v1-docker-ts-wrapped-lines-kv88-93pct-38reqs.log":                         "serving-throughput: Serving summary: vllm-v1 Engine 000",
	"gh-vllm28228-v1-startup-kvmem2.30GiB-kvsize75840-maxconc2.48x.log":                     "memory-pressure: Low KV capacity at start-up",
	"gh-vllm37307-v1-waiting90-to-66-prefill-24ktps.log":                                    "serving-throughput: Requests queue: vllm-v1 Engine 000 | serving-throughput: Serving summary: vllm-v1 Engine 000",
	"gh-vllm5458-aws-gpu4-tp4-trees-p2p-cumem-excerpt.log":                                  "collective-timeout: NCCL set-up checked: no transport problem seen",
	"gh-vllm5458-tp4-watchdog-timeout-allreduce-seq1-excerpt.log":                           "collective-timeout: Collective timeout: ALLREDUCE SeqNum 1 (1 elements)",
	"gh-vllm6102-v0-recompute-preempt-then-traceback.log":                                   "memory-pressure: Requests preempted for lack of KV cache",
	"gh-vllm6201-mixtral-tp2-trees-p2p-ipc-read-excerpt.log":                                "collective-timeout: NCCL set-up checked: no transport problem seen",
	"gh-vllm6636-a100x4-tp4-hang-p2p-ipc-read-rings-excerpt.log":                            "collective-timeout: NCCL set-up checked: no transport problem seen",
}

// joblogMessages are phrases the findings' messages must hold.
var joblogMessages = map[string][]string{
	"gh-llamafactory7396-train-w8-watchdog-timeout-allreduce-seq1580-multirank-excerpt.log": {"mid-run", "Ranks 0, 3, 4 had enqueued it", "not in this log"},
	"gh-vllm5458-tp4-watchdog-timeout-allreduce-seq1-excerpt.log":                           {"at start-up"},
	"gh-sglang14972-decode-usage0.94-queue5-6reqs-cudagraph.log":                            {"memory-bound"},
	"gh-sglang1612-prefill-batches-queue38-to-18-usage0-to-0.77.log":                        {"prefill-bound"},
	"gh-vllm37307-v1-waiting90-to-66-prefill-24ktps.log":                                    {"prefill-bound"},
	"gh-blazux9-vllm-v1-specdecode-accept42-54pct-kv70pct-3reqs.log":                        {"line 3 acceptance 42.4%, mean length 1.85, k=2"},
	"gh-vllm28228-v1-startup-kvmem2.30GiB-kvsize75840-maxconc2.48x.log":                     {"2.48 requests of 120000 tokens"},
}

// TestJobLogFindings analyses each corpus job log alone and compares the
// findings of the job-log rules with what a reader of the log would say.
func TestJobLogFindings(t *testing.T) {
	jobRules := map[string]bool{"collective-timeout": true, "serving-throughput": true, "memory-pressure": true, "spec-decode": true}
	for _, f := range corpus.Files(t, "corpus/joblogs", ".log") {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			want, ok := joblogFindings[name]
			if !ok {
				t.Fatalf("no expectation for %s", name)
			}
			r, err := Analyze(context.Background(), []string{f}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			var msgs strings.Builder
			for _, x := range r.Findings {
				if jobRules[x.Rule] {
					got = append(got, x.Rule+": "+x.Title)
					msgs.WriteString(x.Message + "\n")
				}
			}
			if g := strings.Join(got, " | "); g != want {
				t.Errorf("findings\n got: %s\nwant: %s", g, want)
			}
			for _, phrase := range joblogMessages[name] {
				if !strings.Contains(msgs.String(), phrase) {
					t.Errorf("no message says %q:\n%s", phrase, msgs.String())
				}
			}
		})
	}
}
