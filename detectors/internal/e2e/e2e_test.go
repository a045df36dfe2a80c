package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/detectors/gilstall"
	"github.com/tracedx/tracedx/detectors/memcpy"
	"github.com/tracedx/tracedx/detectors/syncapi"
	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/importers/kineto"
	"github.com/tracedx/tracedx/importers/nsys"
	"github.com/tracedx/tracedx/internal/corpus"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/internal/kinetogen"
	"github.com/tracedx/tracedx/internal/nsysgen"
	"github.com/tracedx/tracedx/model"
)

// Nsight Systems identities: process 4242 (python3), main thread 4242
// (pt_main_thread); globalTid = 1<<48 | pid<<24 | tid.
const (
	gPid    = 281546145660928
	gMain   = 281546145665170
	gWorker = 281546145665178 // thread 4250
)

// hostStallsExport writes an nsys 2024-style export with three planted faults
// (times in µs; the host span is the NVTX range "train", [0, 100 ms), so the
// steady state is [10, 100 ms): 90 ms):
//
//   - GPU 0 (an H100) runs kernels over [1, 12), [24, 29) and [80, 95) ms and
//     two copies: its span is [1, 95) ms, 94 ms;
//   - gil-stall: the main thread sits in pthread_cond_timedwait 5 ms, 5 ms and
//     0.98 ms back to back over [12, 23) ms, all of it GPU idle: 11 ms;
//   - sync-api: cudaStreamSynchronize of 2 ms inside NVTX "log_metrics" at 30,
//     50, 70 and 90 ms (8 ms), plus the two synchronous copies below (12 ms):
//     20 ms of 90;
//   - memcpy: two synchronous cudaMemcpy of 64 MiB from pageable memory at 40
//     and 60 ms, 6 ms per call: 12 ms blocked.
//
// With gil, the export also has an explicit GIL table (nsys
// --trace=python-gil): the main thread waits over [12, 23) ms while thread
// 4250 holds the GIL.
func hostStallsExport(t *testing.T, gil bool) string {
	us := func(v float64) int64 { return int64(v * 1000) }
	var runtime, kernels, memcpys, syncs, nvtx, osrt []string
	corr := 0
	launch := func(start float64) {
		corr++
		runtime = append(runtime, fmt.Sprintf("(%d, %d, 0, %d, %d, 1, 0, NULL)", us(start-50), us(start-45), gMain, corr))
		kernels = append(kernels, fmt.Sprintf("(%d, %d, 0, 1, NULL, 7, %d, %d, 4, 4, NULL, 1, 0, 32, 64, 1, 1, 256, 1, 1, 0, 0, 0, 0, %d, 0, NULL, 0)",
			us(start), us(start+1000), corr, gPid, corr))
	}
	for _, r := range [][2]float64{{1000, 12000}, {24000, 29000}, {80000, 95000}} {
		for s := r[0]; s < r[1]; s += 1000 {
			launch(s)
		}
	}
	for _, s := range []float64{40000, 60000} {
		corr++
		runtime = append(runtime, fmt.Sprintf("(%d, %d, 0, %d, %d, 3, 0, NULL)", us(s), us(s+6000), gMain, corr))
		memcpys = append(memcpys, fmt.Sprintf("(%d, %d, 0, 1, NULL, 7, %d, %d, 67108864, 1, NULL, 0, 2, NULL, NULL, 0, 1, NULL, NULL, NULL)",
			us(s+500), us(s+5500), corr, gPid))
	}
	for _, s := range []float64{30000, 50000, 70000, 90000} {
		corr++
		nvtx = append(nvtx, fmt.Sprintf("(%d, %d, 59, 'log_metrics', %d, 0)", us(s-100), us(s+2100), gMain))
		runtime = append(runtime, fmt.Sprintf("(%d, %d, 0, %d, %d, 2, 0, NULL)", us(s), us(s+2000), gMain, corr))
		syncs = append(syncs, fmt.Sprintf("(%d, %d, 0, 1, NULL, 7, %d, %d, 2, 4294967295)", us(s), us(s+2000), corr, gPid))
	}
	nvtx = append(nvtx, fmt.Sprintf("(0, %d, 59, 'train', %d, 0)", us(100000), gMain))
	for _, w := range [][2]float64{{12000, 17000}, {17010, 22010}, {22020, 23000}} {
		osrt = append(osrt, fmt.Sprintf("(%d, %d, 27, %d, 5, 110, 0, 0)", us(w[0]), us(w[1]), gMain))
	}
	osrt = append(osrt, fmt.Sprintf("(%d, %d, 27, %d, 6, 0, 0, 0)", us(500), us(900), gMain))

	script := `
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (0, 'pt_main_thread'), (1, 'cudaLaunchKernel_v7000'), (2, 'cudaStreamSynchronize_v3020'),
 (3, 'cudaMemcpy_v3020'), (4, 'gemm_kernel'), (5, 'pthread_cond_timedwait@@GLIBC_2.3.2'), (6, 'poll');
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2024.5.1.113'), ('EXPORT_SCHEMA_VERSION', '3.13.0');
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT, totalMemory INTEGER,
 memoryBandwidth INTEGER, smCount INTEGER, cuDevice INTEGER, computeMajor INTEGER, computeMinor INTEGER);
INSERT INTO TARGET_INFO_GPU VALUES (281474976710656, 0, 'NVIDIA H100 80GB HBM3', '0000:1b:00.0', 85520809984, 3352320000000, 132, 0, 9, 0);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
INSERT INTO ThreadNames VALUES (0, 0, ` + fmt.Sprint(gMain) + `);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
INSERT INTO PROCESSES VALUES (` + fmt.Sprint(gPid) + `, 4242, 'python3');
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT, globalTid INTEGER, domainId INTEGER);
INSERT INTO NVTX_EVENTS VALUES ` + strings.Join(nvtx, ",\n ") + `;
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER,
 correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ` + strings.Join(runtime, ",\n ") + `;
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
 greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
 shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL,
 gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
 blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL,
 localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ` + strings.Join(kernels, ",\n ") + `;
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
 greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,
 deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER,
 migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES ` + strings.Join(memcpys, ",\n ") + `;
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
 contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
 syncType INTEGER NOT NULL, eventId INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES ` + strings.Join(syncs, ",\n ") + `;
CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER,
 nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, nestingLevel INTEGER, callchainId INTEGER NOT NULL);
INSERT INTO OSRT_API VALUES ` + strings.Join(osrt, ",\n ") + `;
`
	if gil {
		script += fmt.Sprintf(`CREATE TABLE PYTHON_GIL_EVENTS (start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER NOT NULL, state TEXT NOT NULL);
INSERT INTO PYTHON_GIL_EVENTS VALUES (%d, %d, %d, 'Waiting for GIL'), (%d, %d, %d, 'Holding GIL'), (%d, %d, %d, 'Holding GIL');
`, us(12000), us(23000), gMain, us(12000), us(23000), gWorker, us(23000), us(24000), gMain)
	}
	dst := filepath.Join(t.TempDir(), "hoststalls.sqlite")
	if err := nsysgen.Build(dst, script); err != nil {
		t.Fatal(err)
	}
	return dst
}

func importWith(t *testing.T, imp importers.Importer, path string) *model.Trace {
	t.Helper()
	tr, err := imp.Import(context.Background(), path, importers.Options{})
	if err != nil {
		t.Fatalf("import %s: %v", path, err)
	}
	if err := tr.Validate(); err != nil {
		t.Fatalf("validate: %v", err)
	}
	return tr
}

// one runs d on tr and returns its only finding.
func one(t *testing.T, tr *model.Trace, d *detectors.Detector) model.Finding {
	t.Helper()
	res := detectors.Run(fixture.Set(tr), []*detectors.Detector{d}, detectors.Config{})
	if len(res.Errors) > 0 || len(res.NotMeasurable) > 0 || len(res.Findings) != 1 {
		t.Fatalf("%s: errors %v, not measurable %+v, findings %+v", d.ID, res.Errors, res.NotMeasurable, res.Findings)
	}
	t.Logf("%s: %s", d.ID, res.Findings[0].Message)
	return res.Findings[0]
}

func metric(t *testing.T, f model.Finding, name string, want float64) {
	t.Helper()
	m, ok := f.Metric(name)
	if !ok || m.Value != want {
		t.Errorf("%s %s = %v (present %t), want %v", f.Rule, name, m.Value, ok, want)
	}
}

func ratio(t *testing.T, f model.Finding, name string, num, den float64) {
	t.Helper()
	m, ok := f.Metric(name)
	if !ok || m.Num != num || m.Den != den {
		t.Errorf("%s %s = %v/%v (present %t), want %v/%v", f.Rule, name, m.Num, m.Den, ok, num, den)
	}
}

// TestNsysFindsPlanted imports the export above and checks each detector's
// numbers.
func TestNsysFindsPlanted(t *testing.T) {
	tr := importWith(t, nsys.New(), hostStallsExport(t, false))
	ms := float64(model.Millisecond)

	g := one(t, tr, gilstall.Detector)
	if g.Confidence != model.Inferred || g.Severity != model.SevWarning {
		t.Errorf("gil-stall %v %v", g.Confidence, g.Severity)
	}
	metric(t, g, "stall_time", 11*ms)
	ratio(t, g, "gpu_idle_overlap_share", 11*ms, 94*ms)
	if !strings.Contains(g.Message, "source: OS runtime waits") || g.Evidence[0].Thread != 4242 {
		t.Errorf("gil-stall message/evidence: %q %+v", g.Message, g.Evidence[0])
	}

	s := one(t, tr, syncapi.Detector)
	metric(t, s, "sync_calls", 6)
	metric(t, s, "stream_syncs", 4)
	metric(t, s, "sync_copies", 2)
	ratio(t, s, "blocked_share", 20*ms, 90*ms)
	if !strings.Contains(s.Message, "top call sites: train 12.00ms (2), log_metrics 8.00ms (4)") {
		t.Errorf("sync-api sites: %q", s.Message)
	}
	if e := s.Evidence[0]; e.Device != 0 || e.Stream != 7 || e.Thread != 4242 {
		t.Errorf("sync-api evidence %+v", e)
	}

	m := one(t, tr, memcpy.Detector)
	if _, ok := m.Metric("sync_copies"); !ok {
		t.Errorf("memcpy title %q", m.Title)
	}
	metric(t, m, "sync_copies", 2)
	ratio(t, m, "blocked_share", 12*ms, 90*ms)
	metric(t, m, "bytes", 2*64<<20)
}

// TestNsysGILTableFindsPlanted checks the measured source: the same export
// with an explicit GIL table.
func TestNsysGILTableFindsPlanted(t *testing.T) {
	tr := importWith(t, nsys.New(), hostStallsExport(t, true))
	ms := float64(model.Millisecond)
	g := one(t, tr, gilstall.Detector)
	if g.Confidence != model.Measured || !strings.Contains(g.Message, "source: GIL trace") {
		t.Errorf("gil-stall %v: %s", g.Confidence, g.Message)
	}
	metric(t, g, "stall_time", 11*ms)
	ratio(t, g, "gpu_idle_overlap_share", 11*ms, 94*ms)
	if !strings.Contains(g.Message, "The GIL was held meanwhile by: 4242/4250 11.00ms.") {
		t.Errorf("holders: %s", g.Message)
	}
}

// kinetoRoundTrip writes b's trace as Kineto JSON and imports it back.
func kinetoRoundTrip(t *testing.T, b *fixture.B) *model.Trace {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace.json")
	if err := kinetogen.WriteFile(path, b.Build(), kinetogen.Layout{TS: kinetogen.RelativeBase}); err != nil {
		t.Fatal(err)
	}
	return importWith(t, kineto.New(), path)
}

// steps adds five 10 ms ProfilerSteps with one kernel each on th: the
// steady state is [10, 50 ms).
func steps(b *fixture.B, th model.ThreadID) {
	for k := 0; k < 5; k++ {
		s := float64(k) * 10000
		b.Step(th, k+1, s, s+10000)
		b.Kernel(0, 7, "gemm", s+100, s+2000, th, s+50)
	}
}

// TestKinetoFindsPlanted plants one fault per detector in a Kineto file.
func TestKinetoFindsPlanted(t *testing.T) {
	ms := float64(model.Millisecond)
	t.Run("sync-api", func(t *testing.T) {
		// x.item() in every steady step: aten::item → _local_scalar_dense →
		// cudaMemcpyAsync + cudaStreamSynchronize (800 µs): 3.2 ms of 40.
		b := fixture.New("item.json", model.FormatKineto)
		th := b.Thread(1, "python")
		steps(b, th)
		for k := 1; k < 5; k++ {
			s := float64(k)*10000 + 5000
			b.Range(th, model.RangeCPUOp, "aten::item", s, s+820)
			b.Range(th, model.RangeCPUOp, "aten::_local_scalar_dense", s+2, s+818)
			b.Copy(0, 7, model.MemDtoH, model.MemDevice, model.MemPinned, 4, s+5, s+6, th, "cudaMemcpyAsync", s+4, s+9)
			b.Sync(th, "cudaStreamSynchronize", s+10, s+810, 0, 7, model.SyncStream)
		}
		f := one(t, kinetoRoundTrip(t, b), syncapi.Detector)
		metric(t, f, "stream_syncs", 4)
		ratio(t, f, "blocked_share", 3.2*ms, 40*ms)
		metric(t, f, "in_host_sync_ops", 4)
		if !strings.Contains(f.Message, "top call sites: aten::item 3.20ms (4)") {
			t.Errorf("sites: %q", f.Message)
		}
	})
	t.Run("memcpy", func(t *testing.T) {
		// Pageable HtoD cudaMemcpyAsync, 4 MiB, 1 ms each: 4.04 ms of 40.
		b := fixture.New("pageable.json", model.FormatKineto)
		th := b.Thread(1, "python")
		steps(b, th)
		for k := 1; k < 5; k++ {
			s := float64(k)*10000 + 3000
			b.Copy(0, 7, model.MemHtoD, model.MemPageable, model.MemDevice, 4<<20, s+5, s+1005, th, "cudaMemcpyAsync", s, s+1010)
		}
		f := one(t, kinetoRoundTrip(t, b), memcpy.Detector)
		if _, ok := f.Metric("pageable_copies"); !ok {
			t.Errorf("title %q", f.Title)
		}
		metric(t, f, "pageable_copies", 4)
		ratio(t, f, "pageable_share", 4.04*ms, 40*ms)
	})
	t.Run("gil-stall", func(t *testing.T) {
		// The launching thread falls silent for 10.1 ms while the loader
		// runs Python (with_stack frames): 8.8 ms of GPU idle in 29.9 ms.
		b := fixture.New("stack.json", model.FormatKineto)
		main := b.Thread(1, "python")
		loader := b.Thread(2, "")
		b.Python(main, "train.py(10): main", 0, 30000)
		for _, x := range []float64{0, 20000} {
			for s := x; s < x+10000; s += 1000 {
				b.Python(main, "<built-in method mm of type object>", s, s+900)
				b.Kernel(0, 7, "gemm", s+200, s+1100, main, s+100)
			}
		}
		b.Python(loader, "loader.py(5): run", 10000, 19000)
		for s := 10000.0; s < 19000; s += 1000 {
			b.Python(loader, "loader.py(9): decode", s, s+900)
		}
		f := one(t, kinetoRoundTrip(t, b), gilstall.Detector)
		metric(t, f, "stall_time", 8.9*ms)
		ratio(t, f, "gpu_idle_overlap_share", 8.8*ms, 29.9*ms)
	})
}

// TestCorpus runs the three detectors over every real trace of the shared
// corpus: each must finish without error, and each finding must carry
// metrics and well-formed evidence. Findings are logged (go test -v) for
// review.
func TestCorpus(t *testing.T) {
	list := []*detectors.Detector{gilstall.Detector, syncapi.Detector, memcpy.Detector}
	for _, c := range []struct {
		dir  string
		imp  importers.Importer
		suff []string
	}{
		{"corpus/nsys", nsys.New(), []string{".sqlite"}},
		{"corpus/kineto", kineto.New(), []string{".json", ".json.gz"}},
	} {
		for _, path := range corpus.Files(t, c.dir, c.suff...) {
			t.Run(filepath.Base(path), func(t *testing.T) {
				tr, err := c.imp.Import(context.Background(), path, importers.Options{})
				if err != nil {
					t.Skipf("import: %v", err) // the importer's own tests own this
				}
				res := detectors.Run(fixture.Set(tr), list, detectors.Config{})
				for _, e := range res.Errors {
					t.Error(e)
				}
				for _, nm := range res.NotMeasurable {
					t.Logf("not measurable: %s: %s", nm.Rule, nm.Reason)
				}
				for _, f := range res.Findings {
					t.Logf("%s %s [%s] %s: %s", f.Rule, f.Severity, f.Confidence, f.Title, f.Message)
					if len(f.Metrics) == 0 || len(f.Evidence) == 0 || len(f.Evidence) > 5 {
						t.Errorf("%s: %d metrics, %d evidence", f.Rule, len(f.Metrics), len(f.Evidence))
					}
					for _, e := range f.Evidence {
						if e.End < e.Start {
							t.Errorf("%s: evidence ends before it starts: %+v", f.Rule, e)
						}
					}
				}
			})
		}
	}
}

// TestDeterministic runs the detectors twice over the same import and over a
// second import of the same file: the results must be identical.
func TestDeterministic(t *testing.T) {
	path := hostStallsExport(t, false)
	list := []*detectors.Detector{gilstall.Detector, syncapi.Detector, memcpy.Detector}
	a := detectors.Run(fixture.Set(importWith(t, nsys.New(), path)), list, detectors.Config{})
	b := detectors.Run(fixture.Set(importWith(t, nsys.New(), path)), list, detectors.Config{})
	if len(a.Findings) != 3 || !reflect.DeepEqual(a, b) {
		t.Fatalf("results differ or are incomplete:\n%+v\n%+v", a, b)
	}
}

// TestOddInputNoError feeds the detectors random, partly inconsistent traces
// (inverted intervals, crossing ranges, missing threads, dangling
// correlations, empty call chains): they must never fail or panic.
func TestOddInputNoError(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	list := []*detectors.Detector{gilstall.Detector, syncapi.Detector, memcpy.Detector}
	apis := []string{"cudaLaunchKernel", "cudaStreamSynchronize", "cudaDeviceSynchronize_v3020", "cudaMemcpy", "cudaMemcpyAsync",
		"cuMemcpyHtoD_v2", "hipMemcpyWithStream", "cudaEventSynchronize", "INVALID", ""}
	ops := []string{"aten::item", "aten::_local_scalar_dense", "aten::to", "aten::copy_", "aten::nonzero", "aten::mm", ""}
	for iter := 0; iter < 300; iter++ {
		b := fixture.New("odd.json", model.FormatKineto)
		if iter%3 == 0 {
			b.ClearCaps()
		}
		n := rng.IntN(60)
		ths := []model.ThreadID{model.NoThread, b.Thread(1, "python"), b.Thread(2, ""), b.ThreadIn(7, 7, "pt_main_thread")}
		th := func() model.ThreadID { return ths[rng.IntN(len(ths))] }
		tm := func() float64 { return float64(rng.IntN(20000)) }
		for i := 0; i < n; i++ {
			s, e := tm(), tm() // e may precede s
			switch rng.IntN(9) {
			case 0:
				b.Kernel(model.DeviceID(rng.IntN(2)), 7, "k", s, e, th(), s-5)
			case 1:
				b.API(th(), apis[rng.IntN(len(apis))], model.APIClass(rng.IntN(7)), s, e, int64(rng.IntN(40)))
			case 2:
				kind := model.MemOpKind(rng.IntN(8))
				b.Copy(0, 7, kind, model.MemKind(rng.IntN(6)), model.MemKind(rng.IntN(6)), int64(rng.IntN(1<<28))-1, s, e, th(),
					apis[rng.IntN(len(apis))], s-1, e+1)
			case 3:
				b.Range(th(), model.RangeKind(rng.IntN(7)), ops[rng.IntN(len(ops))], s, e)
			case 4:
				b.OSCall(th(), cond(rng), s, e, chain(rng)...)
			case 5:
				b.GIL(th(), model.GILState(rng.IntN(2)), s, e)
			case 6:
				b.Sync(th(), apis[rng.IntN(len(apis))], s, e, model.DeviceID(rng.IntN(3)-1), 7, model.SyncKind(rng.IntN(5)))
			case 7:
				b.Step(th(), i, s, e)
			default:
				b.Python(th(), "f.py(1): g", s, e)
			}
		}
		tr := b.Build()
		cfg := detectors.Config{}
		if iter%2 == 0 {
			cfg.Params = map[string]map[string]float64{"gil-stall": {"switch_interval_us": float64(rng.IntN(3000)), "python_min_gap_us": 0},
				"sync-api": {"warmup_steps": 0, "warmup_pct": 0, "info_pct": 0}, "memcpy": {"small_min_count": 0, "warmup_pct": 0, "min_pct": 0}}
		}
		res := detectors.Run(fixture.Set(tr), list, cfg)
		for _, err := range res.Errors {
			t.Fatalf("iteration %d: %v", iter, err)
		}
	}
}

func cond(rng *rand.Rand) string {
	return []string{"pthread_cond_timedwait@@GLIBC_2.3.2", "futex", "poll", "pthread_cond_clockwait"}[rng.IntN(4)]
}

func chain(rng *rand.Rand) []string {
	switch rng.IntN(4) {
	case 0:
		return nil
	case 1:
		return []string{"pthread_cond_timedwait", "take_gil", "PyEval_RestoreThread"}
	case 2:
		return []string{"0x7f00", "0x7f01"}
	}
	return []string{"pthread_cond_timedwait", "std::condition_variable::wait_for"}
}
