package perfetto

import "github.com/tracedx/tracedx/model"

// memTrack is where one allocator event's totals are drawn.
type memTrack struct {
	pid  int
	name string
}

// memTrackOf returns the counter track of allocator event m: the device's
// process for device memory, the allocating thread's host process for host
// memory; ok is false when it has no place (host memory of no known thread,
// or a device whose memory is already a counter series in bytes, as the nsys
// importer makes of CUDA memory usage).
func memTrackOf(t *model.Trace, tl *traceLayout, m *model.MemEvent, counted map[model.DeviceID]bool) (memTrack, bool) {
	if m.Device != model.NoDevice {
		pid, ok := tl.devPid[m.Device]
		if !ok || counted[m.Device] {
			return memTrack{}, false
		}
		return memTrack{pid, "GPU memory (bytes)"}, true
	}
	if m.Thread == model.NoThread {
		return memTrack{}, false
	}
	pid, ok := tl.hostPid[t.Thread(m.Thread).PID]
	if !ok {
		return memTrack{}, false
	}
	return memTrack{pid, "CPU memory (bytes)"}, true
}

// memory writes the allocator totals after each allocator event (Kineto
// [memory] events) as counter events with args allocated and reserved
// (unknown totals left out), so viewers draw two tracks per device. With a
// window, each track also gets its last event before the window.
func (e *encoder) memory(t *model.Trace, tl *traceLayout) {
	if len(t.MemEvents) == 0 {
		return
	}
	counted := map[model.DeviceID]bool{}
	for _, c := range t.Counters {
		if c.Device != model.NoDevice && t.Str(c.Unit) == "bytes" {
			counted[c.Device] = true
		}
	}
	before := map[memTrack]int{}
	if e.win != nil {
		for i := range t.MemEvents {
			m := &t.MemEvents[i]
			if int64(m.Time)+tl.off >= int64(e.win.Start) {
				break
			}
			if tr, ok := memTrackOf(t, tl, m, counted); ok {
				before[tr] = i
			}
		}
	}
	for i := range t.MemEvents {
		m := &t.MemEvents[i]
		if m.TotalAllocated < 0 && m.TotalReserved < 0 {
			continue
		}
		tr, ok := memTrackOf(t, tl, m, counted)
		if !ok {
			continue
		}
		ts := int64(m.Time) + tl.off
		if j, had := before[tr]; !e.in(ts, ts) && (!had || j != i) {
			continue
		}
		e.begin("C", tr.pid, 0)
		e.ts("ts", ts)
		e.str("name", tr.name)
		e.args()
		if m.TotalAllocated >= 0 {
			e.argInt("allocated", m.TotalAllocated)
		}
		if m.TotalReserved >= 0 {
			e.argInt("reserved", m.TotalReserved)
		}
		e.closeArgs()
		e.end()
	}
}

// memDevices adds the devices of allocator events to devs (so that device
// memory has a process even on a device without kernels).
func memDevices(t *model.Trace, devs map[model.DeviceID]bool) {
	for i := range t.MemEvents {
		if d := t.MemEvents[i].Device; d != model.NoDevice {
			devs[d] = true
		}
	}
}
