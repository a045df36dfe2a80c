package perfetto

import (
	"bytes"
	"compress/gzip"
	"io"
	"testing"

	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

// memTrace has allocator events on GPU 0 (totals known), GPU 3 (no kernel
// there) and host memory of the main thread, plus one event of an unknown
// thread that has no place to go.
func memTrace() *model.Trace {
	b := fixture.New("mem.json", model.FormatKineto)
	th := b.Thread(7, "main")
	b.Kernel(0, 7, "k", 10, 30, th, 2)
	b.T.MemEvents = append(b.T.MemEvents,
		model.MemEvent{Time: fixture.US(5), Bytes: 1024, TotalAllocated: 1024, TotalReserved: 2048, Thread: th, Device: 0},
		model.MemEvent{Time: fixture.US(20), Bytes: 512, TotalAllocated: 1536, TotalReserved: -1, Thread: th, Device: 0},
		model.MemEvent{Time: fixture.US(25), Bytes: 64, TotalAllocated: 64, TotalReserved: 64, Thread: th, Device: 3},
		model.MemEvent{Time: fixture.US(40), Bytes: 100, TotalAllocated: 100, TotalReserved: -1, Thread: th, Device: model.NoDevice},
		model.MemEvent{Time: fixture.US(50), Bytes: 100, TotalAllocated: 200, TotalReserved: -1, Thread: model.NoThread, Device: model.NoDevice},
		model.MemEvent{Time: fixture.US(60), Bytes: -1024, TotalAllocated: 512, TotalReserved: 2048, Thread: th, Device: 0})
	return b.Build()
}

func memEvents(t *testing.T, data []byte) (out []event, procs map[int]string) {
	procs = map[int]string{}
	for _, ev := range decode(t, data).Events {
		if ev.Ph == "M" && ev.Name == "process_name" {
			procs[*ev.Pid] = ev.Args["name"].(string)
		}
		if ev.Ph == "C" && (ev.Name == "GPU memory (bytes)" || ev.Name == "CPU memory (bytes)") {
			out = append(out, ev)
		}
	}
	return out, procs
}

func TestMemoryTracks(t *testing.T) {
	data := write(t, fixture.Set(memTrace()), Options{})
	evs, procs := memEvents(t, data)
	if len(evs) != 5 {
		t.Fatalf("%d memory counter events, want 5: %+v", len(evs), evs)
	}
	want := []struct {
		proc, name string
		alloc      float64
		res        any
	}{
		{"GPU 0: Test GPU", "GPU memory (bytes)", 1024, 2048.0},
		{"GPU 0: Test GPU", "GPU memory (bytes)", 1536, nil},
		{"GPU 3", "GPU memory (bytes)", 64, 64.0},
		{"python3 (pid 100)", "CPU memory (bytes)", 100, nil},
		{"GPU 0: Test GPU", "GPU memory (bytes)", 512, 2048.0},
	}
	for i, w := range want {
		ev := evs[i]
		if procs[*ev.Pid] != w.proc || ev.Name != w.name || ev.Args["allocated"] != w.alloc || ev.Args["reserved"] != w.res {
			t.Errorf("event %d: %s %q %v, want %s %q allocated=%v reserved=%v", i, procs[*ev.Pid], ev.Name, ev.Args, w.proc, w.name, w.alloc, w.res)
		}
	}
	// A window keeps each track's last event before it.
	data = write(t, fixture.Set(memTrace()), Options{Range: &model.Interval{Start: fixture.US(30), End: fixture.US(45)}})
	if evs, _ = memEvents(t, data); len(evs) != 3 { // GPU 0 at 20 µs, GPU 3 at 25 µs, host at 40 µs
		t.Errorf("windowed: %d memory events, want 3: %+v", len(evs), evs)
	}
	// A device whose memory is already a counter series in bytes (nsys) is not drawn twice.
	tr := memTrace()
	tr.Counters = append(tr.Counters, model.CounterSeries{Name: tr.Intern("CUDA memory in use"), Unit: tr.Intern("bytes"), Device: 0})
	if evs, _ = memEvents(t, write(t, fixture.Set(tr), Options{})); len(evs) != 2 {
		t.Errorf("with a bytes counter on GPU 0: %d memory events, want 2 (GPU 3, host)", len(evs))
	}
}

// TestGzip: the gzip output holds exactly the plain output, byte-identical
// across runs.
func TestGzip(t *testing.T) {
	set := fixture.Set(sampleTrace(0))
	plain := write(t, set, Options{Findings: sampleFindings()})
	gz := write(t, set, Options{Findings: sampleFindings(), Gzip: true})
	if again := write(t, set, Options{Findings: sampleFindings(), Gzip: true}); !bytes.Equal(gz, again) {
		t.Error("gzip output differs between runs")
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, plain) {
		t.Error("gunzipped output differs from the plain output")
	}
}
