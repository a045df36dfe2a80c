package pipeline

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/internal/corpus"
	"github.com/tracedx/tracedx/model"
)

// inferenceExpect is what the step model and the kernel-layer rules must
// find in one corpus inference trace. Every number was checked against the
// raw events (jq / sqlite3): the step annotation's name and duration, the
// kernels correlated with the runtime calls inside it, hipGraphLaunch
// calls and the kernels sharing their correlation.
type inferenceExpect struct {
	file    string
	steps   []model.Step      // Phase, BatchSize, Tokens, KVLen, Kernels, GraphLaunches compared
	finding map[string]string // rule → a substring of one of its messages
}

var inferenceCorpus = []inferenceExpect{
	{file: "kineto/tracelens-sglang-qwen3-8b-decode-mi300.json.gz",
		// execute_32_context_0(...)_generation_32(sq32sk32785...) wraps step[DECODE bs=32]; 555 kernels, 544 of them in one hipGraphLaunch.
		steps:   []model.Step{{StepLabel: model.StepLabel{Phase: model.PhaseDecode, BatchSize: 32, Tokens: 32, KVLen: 32785}, Kernels: 555, GraphLaunches: 1}},
		finding: map[string]string{"cuda-graph": "1 graph launch(es) replayed 544 kernels", "attention-backend": "paged-attention"}},
	{file: "kineto/tracelens-vllm-decode-full-graph-exec-bs32-mi300.json.gz",
		steps:   []model.Step{{StepLabel: model.StepLabel{Phase: model.PhaseDecode, BatchSize: 32, Tokens: 32, KVLen: 55086}, Kernels: 425, GraphLaunches: 1}},
		finding: map[string]string{"cuda-graph": "1 graph launch(es) replayed 421 kernels", "attention-backend": "triton"}},
	{file: "kineto/tracelens-vllm-decode-graph-capture-mi300.pt.trace.json.gz",
		// capture_32_FULL on the CPU thread (its GPU-annotation twin is not a step).
		steps: []model.Step{{StepLabel: model.StepLabel{Phase: model.PhaseCapture, BatchSize: 32, Tokens: -1, KVLen: -1}, Kernels: 7}}},
	{file: "kineto/tracelens-sglang-decode-graph-capture-bs32-mi300.json.gz",
		steps: []model.Step{{StepLabel: model.StepLabel{Phase: model.PhaseCapture, BatchSize: 32, Tokens: -1, KVLen: -1}, Kernels: 2}}},
	{file: "kineto/tracelens-b200-eager-w8.json.gz",
		// execute_context_1(888_788544)_generation_0(0): one prompt of 888 tokens.
		steps:   []model.Step{{StepLabel: model.StepLabel{Phase: model.PhasePrefill, BatchSize: 1, Tokens: 888, KVLen: -1}, Kernels: 768}},
		finding: map[string]string{"attention-backend": "trtllm-fmha", "roofline": "on B200"}},
	{file: "kineto/tracelens-h100-qwen1.5-0.5b-chat.json.gz",
		// TraceLens GEMM.csv: aten::mm 8944x1024x2816 bf16 at 610.7 TFLOP/s (median).
		finding: map[string]string{"roofline": "aten::mm [[8944 1024] [1024 2816]] c10::BFloat16 ×48: 611 TFLOP/s", "attention-backend": "flash-attention"}},
	{file: "nsys/cs336-a100-autograd-nvtx-sgemm-nsys2026.3.1.sqlite",
		finding: map[string]string{"tensor-core": "67.0% of kernel time"}},
	{file: "nsys/cs336-torchcompile-reduceoverhead-cudagraph-a100-nsys2024.6.2.sqlite",
		finding: map[string]string{"cuda-graph": "whole-graph spans"}},
}

func TestInferenceCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("corpus run skipped in -short mode")
	}
	root := corpus.Dir(t, "corpus")
	for _, e := range inferenceCorpus {
		e := e
		t.Run(filepath.Base(e.file), func(t *testing.T) {
			r, err := Analyze(context.Background(), []string{filepath.Join(root, e.file)}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if e.steps != nil {
				if len(r.Steps) != len(e.steps) {
					t.Fatalf("%d steps, want %d: %+v", len(r.Steps), len(e.steps), r.Steps)
				}
				for i, w := range e.steps {
					g := r.Steps[i]
					if g.Phase != w.Phase || g.BatchSize != w.BatchSize || g.Tokens != w.Tokens || g.KVLen != w.KVLen || g.Kernels != w.Kernels || g.GraphLaunches != w.GraphLaunches {
						t.Errorf("step %d: got %s bs=%d tok=%d kv=%d kernels=%d graphs=%d, want %s bs=%d tok=%d kv=%d kernels=%d graphs=%d", i,
							g.Phase, g.BatchSize, g.Tokens, g.KVLen, g.Kernels, g.GraphLaunches, w.Phase, w.BatchSize, w.Tokens, w.KVLen, w.Kernels, w.GraphLaunches)
					}
				}
			}
			for rule, sub := range e.finding {
				found := false
				for _, f := range r.Findings {
					found = found || f.Rule == rule && strings.Contains(f.Message, sub)
				}
				if !found {
					t.Errorf("%s: no finding containing %q", rule, sub)
				}
			}
		})
	}
}
