package export

import "github.com/tracedx/tracedx/model"

// opMap turns per-class times into the JSON {class: ns} form (classes
// with no time left out); nil when all are zero.
func opMap(t *model.OpTimes) map[string]int64 {
	var m map[string]int64
	for op, d := range t {
		if d > 0 {
			if m == nil {
				m = map[string]int64{}
			}
			m[model.KernelOp(op).String()] = int64(d)
		}
	}
	return m
}

// deviceClasses returns the by_class map of one device of the report.
func deviceClasses(r *model.Report, rank int, dev model.DeviceID) map[string]int64 {
	for i := range r.Ops {
		if o := &r.Ops[i]; o.Rank == rank && o.Device == dev {
			return opMap(&o.ByOp)
		}
	}
	return nil
}

// phaseClasses sums the per-class time of one step phase over all devices.
func phaseClasses(r *model.Report, ph model.StepPhase) map[string]int64 {
	var sum model.OpTimes
	for i := range r.Ops {
		if pt := r.Ops[i].ByPhase[ph]; pt != nil {
			for op, d := range pt {
				sum[op] += d
			}
		}
	}
	return opMap(&sum)
}

// opTable is the kernel time per class per device: one row per device,
// one column per class that has time anywhere.
func opTable(r *model.Report) []sumTable {
	if len(r.Ops) == 0 {
		return nil
	}
	var used [model.NumKernelOps]bool
	for i := range r.Ops {
		for op, d := range r.Ops[i].ByOp {
			used[op] = used[op] || d > 0
		}
	}
	t := sumTable{id: "kernel-classes", title: "Kernel time by class",
		note: "Share of each device's summed kernel time; classes from kernel names (gemm, attention, moe, softmax, norm, ...)."}
	t.head = []string{"rank", "device", "kernel time"}
	for op, u := range used {
		if u {
			t.head = append(t.head, model.KernelOp(op).String())
		}
	}
	for i := range r.Ops {
		o := &r.Ops[i]
		var total model.Duration
		for _, d := range o.ByOp {
			total += d
		}
		row := []cell{plain("%s", rankLabel(o.Rank)), plain("%d", o.Device), dur(total)}
		for op, u := range used {
			if u {
				row = append(row, plain("%.1f%%", pct(o.ByOp[op], total)))
			}
		}
		t.rows = append(t.rows, row)
	}
	return []sumTable{t}
}
