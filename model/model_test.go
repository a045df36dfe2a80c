package model_test

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestStringTable(t *testing.T) {
	var st model.StringTable
	a := st.Intern("a")
	if st.Intern("a") != a || st.InternBytes([]byte("a")) != a || st.Get(a) != "a" {
		t.Fatal("interning is not stable")
	}
	if st.Intern("") != model.NoString || st.Get(model.NoString) != "" {
		t.Fatal("empty string is not NoString")
	}
	if _, ok := st.Lookup("b"); ok {
		t.Fatal("Lookup added a string")
	}
}

func TestFinalizeSortsAndNests(t *testing.T) {
	tr := model.NewTrace("x.json", model.FormatKineto)
	th := tr.ThreadFor(1, 9)
	th0 := tr.ThreadFor(1, 2) // added later, sorts first
	tr.Devices = []model.Device{{ID: 0}}
	r := func(th model.ThreadID, s, e model.Time, name string) {
		tr.Ranges = append(tr.Ranges, model.Range{Start: s, End: e, Thread: th, Name: tr.Intern(name), Track: tr.InternTrack(model.CPUTrack), Kind: model.RangeCPUOp})
	}
	r(th, 50, 60, "inner2")
	r(th, 0, 100, "outer")
	r(th, 10, 40, "inner1")
	r(th, 20, 30, "innermost")
	r(th, 35, 70, "crossing") // starts inside inner1's parent, ends after inner1
	r(th0, 5, 6, "other-thread")
	tr.Kernels = []model.Kernel{{Start: 30, End: 40, Name: tr.Intern("b")}, {Start: 10, End: 20, Name: tr.Intern("a")}}
	tr.Finalize()
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	depth := map[string]int16{}
	for _, x := range tr.Ranges {
		depth[tr.Str(x.Name)] = x.Depth
	}
	want := map[string]int16{"outer": 0, "inner1": 1, "innermost": 2, "crossing": 2, "inner2": 2, "other-thread": 0}
	for k, v := range want {
		if depth[k] != v {
			t.Errorf("depth of %s = %d, want %d", k, depth[k], v)
		}
	}
	if tr.Kernels[0].Start != 10 || !tr.Caps.Has(model.CapKernels) || !tr.Caps.Has(model.CapCPUOps) {
		t.Errorf("kernels not sorted or capabilities not filled: %+v %v", tr.Kernels, tr.Caps)
	}
	if tr.Threads[0].TID != 2 || tr.Thread(tr.Ranges[len(tr.Ranges)-1].Thread).TID != 9 {
		t.Errorf("threads not renumbered consistently: %+v", tr.Threads)
	}
}

func TestValidateFindsProblems(t *testing.T) {
	tr := model.NewTrace("bad.json", model.FormatKineto)
	tr.Kernels = []model.Kernel{
		{Start: 10, End: 5, Name: tr.Intern("k"), Device: 0}, // ends before start; device unknown
		{Start: 1, End: 2, Name: 999, Device: 0},             // unsorted; bad string id
	}
	tr.APICalls = []model.APICall{{Start: 0, End: 1, Thread: 7}} // no such thread
	tr.Samples = []model.CounterSample{{Series: 3}}
	err := tr.Validate()
	if err == nil {
		t.Fatal("Validate accepted a broken trace")
	}
	for _, want := range []string{"ends (5) before it starts", "not in the device table", "not sorted", "string id 999", "thread id 7", "series 3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate missed %q:\n%v", want, err)
		}
	}
}

func TestDumpGolden(t *testing.T) {
	tr, _ := fixture.GapCauses()
	var a, b bytes.Buffer
	if err := tr.Dump(&a); err != nil {
		t.Fatal(err)
	}
	tr2, _ := fixture.GapCauses()
	tr2.Dump(&b)
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("dump is not deterministic")
	}
	path := filepath.Join("testdata", "gapcauses.dump")
	if *update {
		os.WriteFile(path, a.Bytes(), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./model -update)", err)
	}
	if !bytes.Equal(a.Bytes(), want) {
		t.Errorf("dump differs from %s (run go test ./model -update and review)", path)
	}
}

func TestAPIClassify(t *testing.T) {
	for name, want := range map[string]model.APIClass{
		"cudaLaunchKernel":           model.APILaunch,
		"cudaLaunchKernel_v7000":     model.APILaunch,
		"cuLaunchKernelEx":           model.APILaunch,
		"hipExtLaunchKernel":         model.APILaunch,
		"cudaGraphLaunch_v10000":     model.APIGraphLaunch,
		"cudaStreamSynchronize_ptsz": model.APISync,
		"cudaDeviceSynchronize":      model.APISync,
		"cudaMemcpyAsync":            model.APIMemcpy,
		"cudaMemsetAsync":            model.APIMemset,
		"cudaMalloc":                 model.APIAlloc,
		"cudaFreeHost":               model.APIAlloc,
		"cudaStreamWaitEvent":        model.APIOther,
		"cudaGetDevice":              model.APIOther,
	} {
		if got := model.ClassifyAPI(name); got != want {
			t.Errorf("ClassifyAPI(%s) = %s, want %s", name, got, want)
		}
	}
	if !model.IsSyncMemcpyAPI("cudaMemcpy_v3020") || model.IsSyncMemcpyAPI("cudaMemcpyAsync") {
		t.Error("IsSyncMemcpyAPI")
	}
}

func TestCollOpFromName(t *testing.T) {
	for name, want := range map[string]model.CollOp{
		"ncclKernel_AllReduce_RING_LL_Sum_float":   model.CollAllReduce,
		"ncclDevKernel_AllGather_RING_LL":          model.CollAllGather,
		"ncclDevKernel_ReduceScatter_Sum_bf16":     model.CollReduceScatter,
		"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8": model.CollSendRecv,
		"c10d::broadcast_":                         model.CollBroadcast,
		"nccl:all_to_all":                          model.CollAllToAll,
		"ncclDevKernel_Generic":                    model.CollUnknown,
	} {
		if got := model.CollOpFromName(name); got != want {
			t.Errorf("CollOpFromName(%s) = %s, want %s", name, got, want)
		}
	}
}

func TestAPIClassifyFamilies(t *testing.T) {
	for name, want := range map[string]model.APIClass{
		"cuMemSetAccess":              model.APIAlloc,
		"cuMemsetD8Async":             model.APIMemset,
		"cuMemcpyHtoDAsync_v2":        model.APIMemcpy,
		"hipMemcpyWithStream":         model.APIMemcpy,
		"hipModuleLaunchKernel":       model.APILaunch,
		"hipExtModuleLaunchKernel":    model.APILaunch,
		"cudaLaunchCooperativeKernel": model.APILaunch,
		"cudaStreamSynchronize":       model.APISync,
		"hipDeviceSynchronize":        model.APISync,
		"cudaEventSynchronize":        model.APISync,
		"cudaEventQuery":              model.APIOther,
		"cuGraphLaunch":               model.APIGraphLaunch,
		"cudaMemPoolTrimTo":           model.APIAlloc,
	} {
		if got := model.ClassifyAPI(name); got != want {
			t.Errorf("ClassifyAPI(%s) = %s, want %s", name, got, want)
		}
	}
}

func TestMergeSortStable(t *testing.T) {
	// Finalize's sort must be stable: equal keys keep their input order.
	tr := model.NewTrace("s.json", model.FormatKineto)
	tr.Devices = []model.Device{{ID: 0}}
	name := tr.Intern("k")
	for i := 0; i < 1000; i++ {
		tr.Kernels = append(tr.Kernels, model.Kernel{Start: model.Time((i * 7919) % 97), End: 1000, Name: name, Correlation: 0, ExternalID: int64(i)})
	}
	tr.Finalize()
	for i := 1; i < len(tr.Kernels); i++ {
		a, b := tr.Kernels[i-1], tr.Kernels[i]
		if a.Start > b.Start || (a.Start == b.Start && a.ExternalID > b.ExternalID) {
			t.Fatalf("not sorted stably at %d: %+v %+v", i, a, b)
		}
	}
}

// TestValidateTimeBounds: times outside ±MaxTime (start = INT64_MIN) and
// negative durations are invalid; the widest valid span still has a
// duration that fits in an int64.
func TestValidateTimeBounds(t *testing.T) {
	for _, c := range []struct {
		start, end model.Time
		want       string
	}{
		{math.MinInt64, 10, "out of range"},
		{0, math.MaxInt64, "out of range"},
		{10, 5, "negative duration"},
		{model.MinTime, model.MaxTime, ""},
	} {
		tr := model.NewTrace("x", model.FormatNsys)
		tr.EnsureDevice(0)
		tr.Kernels = []model.Kernel{{Start: c.start, End: c.end, Name: tr.Intern("k")}}
		err := tr.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("[%d, %d]: %v", c.start, c.end, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("[%d, %d]: want %q, got %v", c.start, c.end, c.want, err)
		}
		if c.want == "" && c.end.Sub(c.start) < 0 {
			t.Errorf("duration of the widest span overflows")
		}
	}
}
