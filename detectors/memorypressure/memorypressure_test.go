package memorypressure

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/importers/joblog"
	"github.com/tracedx/tracedx/model"
)

func analyseLog(t *testing.T, text string) detectors.Result {
	t.Helper()
	tr, err := joblog.Parse(strings.NewReader(text), "mem.log", importers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return detectors.Run(model.NewTraceSet([]*model.Trace{tr}), []*detectors.Detector{Detector}, detectors.Config{})
}

func titles(res detectors.Result) string {
	var s []string
	for _, f := range res.Findings {
		s = append(s, f.Title)
	}
	return strings.Join(s, " | ")
}

func v0(kvs ...float64) string {
	var b strings.Builder
	for i, kv := range kvs {
		fmt.Fprintf(&b, "INFO 05-14 09:00:%02d metrics.py:341] Avg prompt throughput: 100.0 tokens/s, Avg generation throughput: %.1f tokens/s, Running: 32 reqs, Swapped: 0 reqs, Pending: 2 reqs, GPU KV cache usage: %.1f%%, CPU KV cache usage: 0.0%%.\n",
			i*5, 400-float64(i)*30, kv)
		if i == 2 {
			fmt.Fprintf(&b, "WARNING 05-14 09:00:%02d scheduler.py:1089] Sequence group 7 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can affect the end-to-end performance. Increase gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=1\n", i*5+1)
		}
	}
	return b.String()
}

func TestPlantedKVBound(t *testing.T) {
	res := analyseLog(t, v0(85, 92, 95, 97, 99))
	var f *model.Finding
	for i := range res.Findings {
		if strings.HasPrefix(res.Findings[i].Title, "KV cache saturated") {
			f = &res.Findings[i]
		}
	}
	if f == nil || !strings.Contains(f.Message, "KV-bound") {
		t.Fatalf("want KV-bound saturation: %s", titles(res))
	}
	if m, _ := f.Metric("gen_tps_after"); m.Value >= 370 {
		t.Errorf("throughput after preemption %v", m.Value)
	}
}

func TestPlantedFragmentationOOMAndCapacity(t *testing.T) {
	res := analyseLog(t, `[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.15 GiB of which 1.25 GiB is free. Of the allocated memory 60.10 GiB is allocated by PyTorch, and 17.40 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.
(EngineCore_DP0 pid=1) INFO 11-06 10:51:48 [kv_cache_utils.py:1229] GPU KV cache size: 75,840 tokens
(EngineCore_DP0 pid=1) INFO 11-06 10:51:48 [kv_cache_utils.py:1234] Maximum concurrency for 120,000 tokens per request: 2.48x
`)
	got := titles(res)
	for _, want := range []string{"CUDA out of memory from fragmentation", "Low KV capacity at start-up"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in %s", want, got)
		}
	}
}

func TestCleanHealthyEngine(t *testing.T) {
	res := analyseLog(t, `INFO 02-11 10:17:54 [executor_base.py:118] Maximum concurrency for 8192 tokens per request: 70.67x
INFO 05-14 09:00:00 metrics.py:341] Avg prompt throughput: 100.0 tokens/s, Avg generation throughput: 400.0 tokens/s, Running: 32 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 40.0%, CPU KV cache usage: 0.0%.
RuntimeError: something else failed
`)
	if len(res.Findings) != 0 {
		t.Fatalf("want no findings: %s", titles(res))
	}
}

// TestMultiLogJob: the logs of one job's ranks analysed together: rank 0's
// start-up capacity and rank 1's OOM (torchrun "[rank1]:" prefix) are both
// reported, each naming its file, and a clean third log adds nothing.
func TestMultiLogJob(t *testing.T) {
	logs := map[string]string{
		"rank0.log": "INFO 06-01 08:00:03 [kv_cache_utils.py:720] Maximum concurrency for 131,072 tokens per request: 1.30x\n",
		"rank1.log": "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.15 GiB of which 1.25 GiB is free. Of the allocated memory 60.10 GiB is allocated by PyTorch, and 17.40 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n",
		"rank2.log": "INFO 06-01 08:00:03 [kv_cache_utils.py:720] Maximum concurrency for 8,192 tokens per request: 40.00x\n",
	}
	var trs []*model.Trace
	for _, name := range []string{"rank0.log", "rank1.log", "rank2.log"} {
		tr, err := joblog.Parse(strings.NewReader(logs[name]), name, importers.Options{})
		if err != nil {
			t.Fatal(err)
		}
		trs = append(trs, tr)
	}
	res := detectors.Run(model.NewTraceSet(trs), []*detectors.Detector{Detector}, detectors.Config{})
	if got := titles(res); got != "CUDA out of memory from fragmentation | Low KV capacity at start-up" {
		t.Fatalf("findings: %s", got)
	}
	if !strings.HasPrefix(res.Findings[0].Message, "rank1.log line 1: CUDA out of memory on GPU 1") || res.Findings[0].Evidence[0].Rank != 1 {
		t.Errorf("OOM: %s (rank %d)", res.Findings[0].Message, res.Findings[0].Evidence[0].Rank)
	}
	if !strings.HasPrefix(res.Findings[1].Message, "rank0.log:") {
		t.Errorf("capacity: %s", res.Findings[1].Message)
	}
}
