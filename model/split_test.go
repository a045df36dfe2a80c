package model

import "testing"

// TestSplitRanks: one capture with two processes on their own GPUs becomes
// two ranks; one process on two GPUs, or two processes on one GPU, stays.
func TestSplitRanks(t *testing.T) {
	tr := NewTrace("node.sqlite", FormatNsys)
	tr.Devices = []Device{{ID: 0}, {ID: 1}}
	tr.Processes = []Process{{PID: 100}, {PID: 200}}
	tr.Threads = []Thread{{PID: 100, TID: 100}, {PID: 200, TID: 200}}
	tr.Counters = []CounterSeries{{Device: NoDevice}, {Device: 1}}
	nccl := tr.Intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL")
	for i := 0; i < 3; i++ {
		at := Time(i * 1000)
		tr.Kernels = append(tr.Kernels, Kernel{Start: at, End: at + 10, Device: 1, CorrScope: 200, Name: nccl}, Kernel{Start: at, End: at + 10, Device: 0, CorrScope: 100, Name: nccl})
		tr.APICalls = append(tr.APICalls, APICall{Start: at, End: at + 1, Thread: 0, Ident: tr.InternAPI(APIIdent{Scope: 100})}, APICall{Start: at, End: at + 1, Thread: 1, Ident: tr.InternAPI(APIIdent{Scope: 200})})
		tr.Collectives = append(tr.Collectives, Collective{Start: at, End: at + 10, Device: 1, Seq: -1, Bytes: -1})
		tr.Samples = append(tr.Samples, CounterSample{Time: at, Series: 0}, CounterSample{Time: at, Series: 1})
	}
	tr.Ranges = []Range{{Start: 0, End: 5, Thread: 1, Track: tr.InternTrack(RangeTrack{Device: NoDevice})}}
	tr.Syncs = []SyncEvent{{Start: 1, End: 2, Device: 0, CorrScope: 200}} // rank 1 touches GPU 0
	parts := SplitRanks(tr)
	if len(parts) != 2 {
		t.Fatalf("parts: %d", len(parts))
	}
	p0, p1 := parts[0], parts[1]
	if p0.Rank != 0 || p1.Rank != 1 || p1.WorldSize != 2 || len(p0.Devices) != 1 || len(p1.Devices) != 2 || len(p1.Syncs) != 1 {
		t.Errorf("ranks/devices: %+v %+v", p0.Devices, p1.Devices)
	}
	if len(p0.Kernels) != 3 || len(p1.Kernels) != 3 || len(p1.APICalls) != 3 || len(p1.Collectives) != 3 || len(p0.Collectives) != 0 || len(p1.Ranges) != 1 {
		t.Errorf("records: k %d/%d api %d coll %d/%d ranges %d", len(p0.Kernels), len(p1.Kernels), len(p1.APICalls), len(p0.Collectives), len(p1.Collectives), len(p1.Ranges))
	}
	if len(p0.Counters) != 1 || len(p1.Counters) != 2 || len(p0.Samples) != 3 || len(p1.Samples) != 6 || p1.Samples[1].Series != 1 {
		t.Errorf("counters: %d/%d samples %d/%d", len(p0.Counters), len(p1.Counters), len(p0.Samples), len(p1.Samples))
	}
	if j := JobOf(parts); j.Describe() != "2 of 2 ranks (world size inferred from the Nsight Systems processes)" {
		t.Errorf("job: %q", j.Describe())
	}
	// A third GPU process that never communicates: unrelated programs.
	other := *tr
	other.Kernels = append(append([]Kernel(nil), tr.Kernels...), Kernel{Device: 2, CorrScope: 300, Name: tr.Intern("sgemm")})
	if SplitRanks(&other) != nil {
		t.Errorf("a non-communicating GPU process was taken for a rank")
	}
	// Two processes on one GPU: not ranks of their own GPUs.
	tr.Kernels = append(tr.Kernels, Kernel{Device: 0, CorrScope: 200, Name: nccl})
	if SplitRanks(tr) != nil {
		t.Errorf("processes sharing a GPU were split")
	}
}
