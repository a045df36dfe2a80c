package memorypressure

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/importers/kineto"
	"github.com/tracedx/tracedx/internal/corpus"
	"github.com/tracedx/tracedx/model"
)

const gb = int64(1) << 30

// memTrace builds a timeline trace with one 80 GiB GPU and allocator events
// at 1 ms steps: (allocated, reserved) totals in GiB tenths; reserved -1
// makes them nsys-style (memory in use only).
func memTrace(totals [][2]int64) *model.Trace {
	tr := model.NewTrace("mem.json", model.FormatKineto)
	tr.Devices = []model.Device{{ID: 0, Name: "NVIDIA H100 80GB HBM3", Kind: model.DeviceGPU, MemoryBytes: 80 * gb}}
	prev := int64(0)
	for i, x := range totals {
		alloc, res := x[0]*gb/10, x[1]*gb/10
		if x[1] < 0 {
			res = -1
		}
		tr.MemEvents = append(tr.MemEvents, model.MemEvent{Time: model.Time(1e9 + int64(i)*1e6), Bytes: alloc - prev, TotalAllocated: alloc,
			TotalReserved: res, Thread: model.NoThread, Device: 0})
		prev = alloc
	}
	tr.Caps.Add(model.CapMemory)
	tr.Finalize()
	return tr
}

func analyseTrace(t *testing.T, tr *model.Trace) detectors.Result {
	t.Helper()
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	return detectors.Run(model.NewTraceSet([]*model.Trace{tr}), []*detectors.Detector{Detector}, detectors.Config{})
}

// repeat returns n copies of the pairs in order.
func repeat(n int, pairs ...[2]int64) [][2]int64 {
	var out [][2]int64
	for i := 0; i < n; i++ {
		out = append(out, pairs...)
	}
	return out
}

func TestTracePlanted(t *testing.T) {
	for _, c := range []struct {
		name   string
		totals [][2]int64
		want   string
	}{
		// 77 of 80 GiB reserved (96 %).
		{"near full", repeat(10, [2]int64{700, 770}, [2]int64{760, 770}), "GPU memory nearly full"},
		// 70 GiB reserved (87.5 %), at most 55 allocated: 15-20 GiB cached.
		{"fragmented", repeat(10, [2]int64{500, 700}, [2]int64{550, 700}), "Allocator fragmentation under memory pressure | GPU memory mostly held"},
		// Reserved goes 20 → 30 → 20 GiB five times (empty_cache in the loop).
		{"churn", repeat(6, [2]int64{150, 200}, [2]int64{280, 300}, [2]int64{150, 200}), "Allocator churn in the steady state"},
		// nsys: cudaMalloc / cudaFree of 10 GiB over and over.
		{"nsys churn", repeat(6, [2]int64{200, -1}, [2]int64{300, -1}), "Allocator churn in the steady state"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := analyseTrace(t, memTrace(c.totals))
			if got := titles(res); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
			for _, f := range res.Findings {
				if len(f.Evidence) == 0 || f.Evidence[0].Device != 0 {
					t.Errorf("%s: evidence %+v", f.Title, f.Evidence)
				}
			}
		})
	}
}

// TestTraceClean: the cache warming up to 40 % of the device (growth only)
// and a steady 30 GiB with 10 GiB cached: no finding, no not-measurable.
func TestTraceClean(t *testing.T) {
	var warm [][2]int64
	for i := int64(1); i <= 20; i++ {
		warm = append(warm, [2]int64{i * 15, i * 16})
	}
	for _, totals := range [][][2]int64{warm, repeat(10, [2]int64{200, 300}, [2]int64{150, 300})} {
		res := analyseTrace(t, memTrace(totals))
		if len(res.Findings) != 0 || len(res.NotMeasurable) != 0 {
			t.Errorf("findings %q, not measurable %v", titles(res), res.NotMeasurable)
		}
	}
}

// corpusMemWant is what memory-pressure says on the corpus Kineto traces
// with [memory] events (peaks checked with jq: device, peak reserved /
// capacity, reserved − allocated at the peak, reserved changes).
var corpusMemWant = map[string]string{
	// V100 32 GiB: 11.90 GiB reserved (37.5 %), 8.07 GiB cached but unused; no pressure.
	"hta-df-index-resolver-w2-rank1-memory.json.gz": "",
	// A100 80 GiB: reserved grows 103 times to 4.34 GiB and never shrinks (warm-up, not churn).
	"switchtransformers-a100-withstack-2threads-memory.json.gz": "",
	"tracelens-h100-bert-small.json.gz":                         "",
	"tracelens-h100-falconsai-vit.json.gz":                      "",
	// H100: 2.45 GiB reserved, 1.52 GiB cached: tiny share of 80 GiB.
	"tracelens-h100-qwen1.5-0.5b-chat.json.gz": "",
	// MI300X 192 GiB: SGLang holds 141.72 GiB (73.8 %).
	"tracelens-sglang-decode-graph-capture-bs32-mi300.json.gz": "",
	// MI300X: vLLM holds 180.32 GiB (93.9 %), its KV cache preallocation.
	"tracelens-vllm-decode-graph-capture-mi300.pt.trace.json.gz": "GPU memory mostly held",
}

func TestTraceCorpus(t *testing.T) {
	seen := 0
	for _, path := range corpus.Files(t, "corpus/kineto", ".json.gz") {
		want, ok := corpusMemWant[filepath.Base(path)]
		if !ok {
			continue
		}
		seen++
		t.Run(filepath.Base(path), func(t *testing.T) {
			tr, err := kineto.New().Import(context.Background(), path, importers.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.MemEvents) == 0 {
				t.Fatal("no memory events imported")
			}
			res := detectors.Run(model.NewTraceSet([]*model.Trace{tr}), []*detectors.Detector{Detector}, detectors.Config{})
			if got := titles(res); got != want {
				t.Errorf("got %q, want %q", got, want)
			}
			if len(res.NotMeasurable) != 0 {
				t.Errorf("not measurable: %v", res.NotMeasurable)
			}
		})
	}
	if seen > 0 && seen != len(corpusMemWant) {
		t.Errorf("found %d of %d corpus traces", seen, len(corpusMemWant))
	}
}
