package kineto

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/internal/kinetogen"
	"github.com/tracedx/tracedx/internal/textdiff"
	"github.com/tracedx/tracedx/model"
)

var update = flag.Bool("update", false, "rewrite golden files (and the generated fixtures)")

// epoch0 places fixture time 0 on 2024-05-23, so that the three timestamp
// encodings differ (the base-time one writes ts relative to a quarter
// boundary).
const epoch0 = model.Time(1716423322388068751)

// gpuTrace is a small training step on one NVIDIA GPU: a ProfilerStep with
// CPU ops, launches, a copy, a memset, a graph launch feeding two kernels,
// an NCCL all-reduce with metadata on both sides, a GPU annotation, a
// python frame, a sync and allocator events. Times in µs.
func gpuTrace(dev model.DeviceID, vendor, devName, launch, copyAPI string) *model.Trace {
	b := fixture.New("gen", model.FormatKineto)
	t := b.T
	t.Devices = nil
	i := t.EnsureDevice(dev)
	t.Devices[i] = model.Device{ID: dev, Name: devName, Vendor: vendor, SMs: 108, MemoryBytes: 42297524224, ComputeMajor: 8}
	t.Rank, t.WorldSize = 0, 2
	main := b.Thread(200, "thread 200 (pt_main_thread)")
	side := b.Thread(201, "thread 201 (pt_autograd_0)")
	b.Range(main, model.RangeStep, "ProfilerStep#7", 0, 200)
	b.Range(main, model.RangeCPUOp, "aten::mm", 2, 20)
	b.Range(side, model.RangeCPUOp, "autograd::engine::evaluate_function: MmBackward0", 5, 30)
	b.Range(main, model.RangePython, "train.py(42): step", 1, 199)
	for i := range t.Ranges {
		t.Ranges[i].ExternalID = int64(10 + i)
	}
	b.Kernel(dev, 7, "ampere_sgemm_128x64_nn", 10, 25, main, 3)
	t.Kernels[len(t.Kernels)-1].ExternalID = 11
	t.Kernels[len(t.Kernels)-1].Config = t.InternConfig(model.LaunchConfig{Grid: [3]int32{120, 1, 1}, Block: [3]int32{256, 1, 1}, Registers: 64, Stream: 7})
	fixture.EditAPI(t, &t.APICalls[len(t.APICalls)-1], func(id *model.APIIdent) { id.Name = t.Intern(launch) })
	t.APICalls[len(t.APICalls)-1].ExternalID = 11
	b.Copy(dev, 7, model.MemHtoD, model.MemPageable, model.MemDevice, 4096, 30, 32, main, copyAPI, 26, 33)
	t.MemOps = append(t.MemOps, model.MemOp{Start: fixture.US(34), End: fixture.US(35), Device: dev, Stream: 7, Kind: model.MemSet,
		Dst: model.MemDevice, Bytes: 512, Correlation: 90})
	b.API(main, "cudaMemsetAsync", model.APIMemset, 33, 34, 90)
	// A graph launch: one correlation, two kernels.
	b.API(main, "cudaGraphLaunch", model.APIGraphLaunch, 40, 45, 91)
	for j, s := range []float64{50, 60} {
		t.Kernels = append(t.Kernels, model.Kernel{Start: fixture.US(s), End: fixture.US(s + 8), Device: dev, Config: t.InternConfig(model.LaunchConfig{Stream: 7}),
			Name: t.Intern([]string{"graph_kernel_a", "graph_kernel_b"}[j]), Correlation: 91})
	}
	// NCCL all-reduce, launched through the driver API.
	b.Collective(dev, 20, model.CollAllReduce, 1<<20, 70, 120, side, 65)
	fixture.EditAPI(t, &t.APICalls[len(t.APICalls)-1], func(id *model.APIIdent) {
		id.Name, id.Source = t.Intern("cuLaunchKernel"), model.APIDriver
	})
	c := &t.Collectives[len(t.Collectives)-1]
	c.Dtype, c.GroupSize = t.Intern("Float"), 2
	t.Kernels[len(t.Kernels)-1].Name = t.Intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)")
	b.Range(side, model.RangeCPUOp, "record_param_comms", 62, 64)
	t.Collectives = append(t.Collectives, model.Collective{Start: fixture.US(62), End: fixture.US(64), Op: model.CollAllReduce,
		Bytes: 1 << 20, Dtype: t.Intern("Float"), Group: t.Intern("0"), GroupSize: 2, Rank: 0, Seq: -1,
		Device: model.NoDevice, Stream: model.NoStream, Source: model.CollFromCPU})
	t.Ranges = append(t.Ranges, model.Range{Start: fixture.US(70), End: fixture.US(120), Name: t.Intern("nccl:all_reduce"),
		Track: t.InternTrack(model.RangeTrack{Device: dev, Stream: 20}), Thread: model.NoThread, Kind: model.RangeGPUAnnotation, ExternalID: 40})
	t.Syncs = append(t.Syncs, model.SyncEvent{Start: fixture.US(130), End: fixture.US(140), Device: dev, Stream: 7, Kind: model.SyncStream, Correlation: 95})
	b.API(main, "cudaStreamSynchronize", model.APISync, 129, 141, 95)
	t.MemEvents = append(t.MemEvents,
		model.MemEvent{Time: fixture.US(3), Bytes: 4096, Addr: 0x7f0000001000, TotalAllocated: 4096, TotalReserved: 2 << 20, Thread: main, Device: dev},
		model.MemEvent{Time: fixture.US(150), Bytes: -4096, Addr: 0x7f0000001000, TotalAllocated: 0, TotalReserved: 2 << 20, Thread: main, Device: dev},
		model.MemEvent{Time: fixture.US(151), Bytes: 64, Addr: 0x1000, TotalAllocated: 64, TotalReserved: -1, Thread: main, Device: model.NoDevice})
	t.Capture = model.Interval{Start: 0, End: fixture.US(200)}
	t.Processes = []model.Process{{PID: 100, Name: "python3.10"}}
	t.Meta["nccl_version"] = "2.21.5"
	t.Shift(model.Duration(epoch0))
	t.Finalize()
	return t
}

func nvidiaTrace() *model.Trace {
	t := gpuTrace(0, "NVIDIA", "NVIDIA A100-SXM4-80GB", "cudaLaunchKernel", "cudaMemcpyAsync")
	t.Meta["cuda_runtime_version"] = "12040"
	return t
}

// rocmTrace is the same step on an MI300 (GPU lane pid 2, hip* names; the
// writer puts HIP args as strings).
func rocmTrace() *model.Trace {
	t := gpuTrace(2, "AMD", "AMD Instinct MI300X", "hipLaunchKernel", "hipMemcpyWithStream")
	for i := range t.APICalls {
		n := t.Str(t.CallName(&t.APICalls[i]))
		fixture.EditAPI(t, &t.APICalls[i], func(id *model.APIIdent) {
			if strings.HasPrefix(n, "cuda") {
				id.Name = t.Intern("hip" + n[4:])
			}
			if n == "cuLaunchKernel" {
				id.Name, id.Source = t.Intern("hipExtModuleLaunchKernel"), model.APIRuntime
			}
		})
	}
	t.Meta["hip_runtime_version"] = "60443483"
	return t
}

// mtiaTrace has an MTIA device (pid 17) with mtia_runtime calls and
// mtia_ccp_events device records.
func mtiaTrace() *model.Trace {
	b := fixture.New("gen", model.FormatKineto)
	t := b.T
	t.Devices = []model.Device{{ID: 17, Name: "ARTEMIS", Kind: model.DeviceAccel, Vendor: "Meta"}}
	t.Rank = 0
	th := b.Thread(865, "thread 865 (python)")
	b.Range(th, model.RangeCPUOp, "aten::linear", 0, 50)
	for i, s := range []float64{10, 30} {
		b.Kernel(17, 108, []string{"pe_exe", "event_wait"}[i], s, s+15, th, s-8)
		fixture.EditAPI(t, &t.APICalls[len(t.APICalls)-1], func(id *model.APIIdent) {
			id.Name, id.Source = t.Intern("launchKernel"), model.APIAccel
		})
	}
	t.Capture = model.Interval{Start: 0, End: fixture.US(60)}
	t.Shift(model.Duration(epoch0))
	t.Finalize()
	return t
}

// cpuOnlyTrace has CPU ops and annotations only (gloo job).
func cpuOnlyTrace() *model.Trace {
	b := fixture.New("gen", model.FormatKineto)
	t := b.T
	t.Devices = nil
	t.Rank, t.WorldSize = 34, 300
	t.Meta["backend"] = "gloo"
	th := b.Thread(7, "thread 7 (python)")
	b.Range(th, model.RangeStep, "ProfilerStep#551", 0, 100)
	b.Range(th, model.RangeUser, "gloo:all_reduce", 10, 40)
	b.Range(th, model.RangeCPUOp, "c10d::allreduce_", 11, 39)
	t.Capture = model.Interval{Start: 0, End: fixture.US(100)}
	t.Shift(model.Duration(epoch0))
	t.Finalize()
	return t
}

// goldenCase is one generated fixture: a model trace written in a layout.
type goldenCase struct {
	name   string
	trace  func() *model.Trace
	layout kinetogen.Layout
}

var goldenCases = []goldenCase{
	{"object_int_us.json", nvidiaTrace, kinetogen.Layout{TS: kinetogen.IntMicros}},
	{"float_epoch_ns.json", nvidiaTrace, kinetogen.Layout{TS: kinetogen.FloatEpochNs}},
	{"base_time_header_after.json", nvidiaTrace, kinetogen.Layout{TS: kinetogen.RelativeBase, HeaderAfter: true}},
	{"base_time_header_before.json", nvidiaTrace, kinetogen.Layout{TS: kinetogen.RelativeBase}},
	{"bare_array_legacy_2020.json", nvidiaTrace, kinetogen.Layout{BareArray: true, Legacy: true, TS: kinetogen.IntMicros}},
	{"legacy_2021_object.json", nvidiaTrace, kinetogen.Layout{Legacy: true, TS: kinetogen.IntMicros}},
	{"rocm_hip_strings.json", rocmTrace, kinetogen.Layout{TS: kinetogen.RelativeBase, HeaderAfter: true}},
	{"mtia.json", mtiaTrace, kinetogen.Layout{TS: kinetogen.RelativeBase}},
	{"cpu_only.json", cpuOnlyTrace, kinetogen.Layout{TS: kinetogen.RelativeBase}},
	{"no_metadata.json", nvidiaTrace, kinetogen.Layout{TS: kinetogen.RelativeBase, NoMetadata: true}},
	{"dup_metadata.json", nvidiaTrace, kinetogen.Layout{TS: kinetogen.IntMicros, DupMeta: 20}},
	{"unsorted.json", nvidiaTrace, kinetogen.Layout{TS: kinetogen.FloatEpochNs, Unsorted: true}},
	{"gzip_base_time.json.gz", nvidiaTrace, kinetogen.Layout{TS: kinetogen.RelativeBase, Gzip: true}},
}

// hand-written fixtures for quirks the generator does not produce.
var handCases = []string{"quirks.json", "spoiled.json", "graph_flows_only.json", "external_id_2022.json"}

func dumpOf(t *testing.T, tr *model.Trace) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := tr.Dump(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	golden := path + ".golden"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: dump differs from %s (run with -update to accept):\n%s", path, golden, textdiff.First(string(want), string(got)))
	}
}

func importFile(t *testing.T, path string) *model.Trace {
	t.Helper()
	tr, err := New().Import(context.Background(), path, importers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	return tr
}

// TestGolden regenerates each fixture with kinetogen (it must equal the
// committed file: the generator is deterministic), imports the committed
// file and compares its dump with the .golden file.
func TestGolden(t *testing.T) {
	for _, gc := range goldenCases {
		t.Run(gc.name, func(t *testing.T) {
			path := filepath.Join("testdata", gc.name)
			var gen bytes.Buffer
			if err := kinetogen.Write(&gen, gc.trace(), gc.layout); err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := os.WriteFile(path, gen.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			committed, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if !bytes.Equal(committed, gen.Bytes()) {
				t.Errorf("%s is stale: kinetogen writes something else now (run with -update)", path)
			}
			checkGolden(t, path, dumpOf(t, importFile(t, path)))
		})
	}
	for _, name := range handCases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", name)
			checkGolden(t, path, dumpOf(t, importFile(t, path)))
		})
	}
}
