package memcpy

import (
	"strings"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

// migrate adds a unified-memory migration of bytes at addr over [s, e) µs.
func migrate(b *fixture.B, dir model.MemOpKind, cause model.MigrationCause, addr uint64, bytes int64, s, e float64) {
	b.Copy(0, 7, model.MemUVM, model.MemKindUnknown, model.MemKindUnknown, bytes, s, e, model.NoThread, "", 0, 0)
	m := &b.T.MemOps[len(b.T.MemOps)-1]
	m.UVMDir, m.UVMCause, m.Addr = dir, cause, addr
}

func uvmFindings(t *testing.T, tr *model.Trace) []model.Finding {
	t.Helper()
	res := detectors.Run(fixture.Set(tr), []*detectors.Detector{Detector}, detectors.Config{})
	if len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	var out []model.Finding
	for _, f := range res.Findings {
		if _, ok := f.Metric("uvm_migrations"); ok {
			out = append(out, f)
		}
	}
	return out
}

// TestMemcpyFindsPlantedUVMThrash: a native CUDA program whose managed
// buffer (two 2 MiB blocks) ping-pongs: prefetched to the GPU, faulted back
// to the host, faulted to the GPU again, four times over.
func TestMemcpyFindsPlantedUVMThrash(t *testing.T) {
	b, _ := start("um.sqlite", model.FormatNsys)
	b.T.Processes[0].Name = "./um"
	const base = 0x7f0000000000
	migrate(b, model.MemHtoD, model.MigrationUserPrefetch, base, 4<<20, 1000, 1200)
	for k := 1; k < 5; k++ {
		for blk := uint64(0); blk < 2; blk++ {
			migrate(b, model.MemDtoH, model.MigrationPageFault, base+blk<<21, 4096, at(k, 5000)+float64(blk)*100, at(k, 5000)+float64(blk)*100+20)
			migrate(b, model.MemHtoD, model.MigrationPageFault, base+blk<<21+4096, 65536, at(k, 6000)+float64(blk)*100, at(k, 6000)+float64(blk)*100+30)
		}
	}
	fs := uvmFindings(t, b.Build())
	if len(fs) != 1 {
		t.Fatalf("want one unified-memory finding, got %+v", fs)
	}
	f := fs[0]
	t.Log(f.Message)
	want := map[string]float64{"uvm_migrations": 17, "uvm_bytes": 4<<20 + 8*4096 + 8*65536, "uvm_ns": 200e3 + 8*20e3 + 8*30e3,
		"uvm_fault_migrations": 16, "uvm_thrash_blocks": 2, "uvm_dtoh_bytes": 8 * 4096}
	for n, v := range want {
		if m, ok := f.Metric(n); !ok || m.Value != v {
			t.Errorf("%s = %v, want %v", n, m.Value, v)
		}
	}
	if f.Severity != model.SevWarning || len(f.Evidence) != 5 || !strings.Contains(f.Message, "Thrashing: 2 2 MiB blocks") {
		t.Errorf("severity %v, %d evidence, message %q", f.Severity, len(f.Evidence), f.Message)
	}
	if strings.Contains(f.Recommendation, "torch") || !strings.Contains(f.Recommendation, "cudaMemPrefetchAsync") || !strings.Contains(f.Recommendation, "ping-pong") {
		t.Errorf("advice: %s", f.Recommendation)
	}
}

// TestMemcpyQuietOnPrefetchedUVM: managed memory moved only by explicit
// prefetches is unified memory used as intended.
func TestMemcpyQuietOnPrefetchedUVM(t *testing.T) {
	b, _ := start("pf.sqlite", model.FormatNsys)
	for k := 1; k < 5; k++ {
		migrate(b, model.MemHtoD, model.MigrationUserPrefetch, 0x7f0000000000+uint64(k)<<21, 2<<20, at(k, 100), at(k, 180))
	}
	if fs := uvmFindings(t, b.Build()); len(fs) != 0 {
		t.Fatalf("want quiet, got %+v", fs)
	}
}

// TestMemcpyFindsPlantedUVMFaults: the host reads results back page by page
// (fault-driven DtoH) for longer than the kernels ran, OpenACC managed
// memory: a warning with data-region advice; no addresses, so thrashing is
// not claimed.
func TestMemcpyFindsPlantedUVMFaults(t *testing.T) {
	b, _ := start("acc.sqlite", model.FormatNsys)
	th := b.Thread(2, "main")
	b.Kernel(0, 7, "main_41_gpu", 100, 120, th, 90)
	for i := 0; i < 100; i++ {
		migrate(b, model.MemDtoH, model.MigrationPageFault, 0, 4096, 45000+float64(i)*30, 45000+float64(i)*30+25)
	}
	fs := uvmFindings(t, b.Build())
	if len(fs) != 1 || fs[0].Severity != model.SevWarning {
		t.Fatalf("want one warning, got %+v", fs)
	}
	if f := fs[0]; !strings.Contains(f.Recommendation, "acc data") || !strings.Contains(f.Message, "thrashing cannot be told") {
		t.Errorf("message %q, advice %q", f.Message, f.Recommendation)
	}
}
