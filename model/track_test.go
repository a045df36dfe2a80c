package model

import "testing"

func TestRangeTracks(t *testing.T) {
	tr := NewTrace("x", FormatKineto)
	th := tr.ThreadFor(1, 1)
	cpu := tr.InternTrack(CPUTrack)
	gpu := tr.InternTrack(RangeTrack{Device: 0, Stream: 7})
	dom := tr.InternTrack(RangeTrack{Domain: tr.Intern("d"), Device: NoDevice, Stream: NoStream})
	if cpu == gpu || cpu == dom || gpu == dom || tr.InternTrack(CPUTrack) != cpu {
		t.Fatalf("tracks %d %d %d: want distinct and stable", cpu, gpu, dom)
	}
	// Nesting is per lane: a range of another domain on the same thread,
	// or a GPU annotation at the same time, does not nest in the CPU op.
	tr.Ranges = []Range{
		{Start: 0, End: 10, Thread: th, Track: cpu, Name: tr.Intern("op")},
		{Start: 1, End: 2, Thread: th, Track: cpu, Name: tr.Intern("inner")},
		{Start: 1, End: 2, Thread: th, Track: dom, Name: tr.Intern("nvtx")},
		{Start: 1, End: 2, Thread: NoThread, Track: gpu, Kind: RangeGPUAnnotation, Name: tr.Intern("ann")},
	}
	tr.Devices = []Device{{ID: 0}}
	tr.Finalize()
	depth, track := map[string]int16{}, map[string]RangeTrack{}
	for i := range tr.Ranges {
		r := &tr.Ranges[i]
		depth[tr.Str(r.Name)], track[tr.Str(r.Name)] = r.Depth, tr.RangeTrack(r)
	}
	if depth["op"] != 0 || depth["inner"] != 1 || depth["nvtx"] != 0 || depth["ann"] != 0 {
		t.Fatalf("depths %v", depth)
	}
	if got := track["ann"]; got != (RangeTrack{Device: 0, Stream: 7}) {
		t.Fatalf("GPU annotation track %+v", got)
	}
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	tr.Ranges[0].Track = 99
	if err := tr.Validate(); err == nil {
		t.Fatal("a range's track out of range must fail validation")
	}
}
