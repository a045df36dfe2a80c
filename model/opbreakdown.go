package model

import "sort"

// NumKernelOps is the number of KernelOp classes.
const NumKernelOps = int(OpComm) + 1

// OpTimes is kernel time per KernelOp class (summed kernel durations, not
// a union: overlapping kernels each count).
type OpTimes [NumKernelOps]Duration

// DeviceOps is the kernel time per class of one device of one rank, in all
// and per step phase (kernels starting inside a step's GPU window).
type DeviceOps struct {
	Rank    int
	Device  DeviceID
	ByOp    OpTimes
	ByPhase map[StepPhase]*OpTimes
}

// OpBreakdown classifies every kernel of t (ClassifyOp, once per name) and
// sums its time per device and, with steps (FindSteps of t), per phase.
func OpBreakdown(t *Trace, steps []Step) []DeviceOps {
	if len(t.Kernels) == 0 {
		return nil
	}
	ops := KernelOps(t)
	byDev := map[DeviceID]*DeviceOps{}
	for i := range t.Kernels {
		k := &t.Kernels[i]
		op := ops[i]
		d := byDev[k.Device]
		if d == nil {
			d = &DeviceOps{Rank: t.Rank, Device: k.Device}
			byDev[k.Device] = d
		}
		dur := k.End.Sub(k.Start)
		d.ByOp[op] += dur
		if s := StepAt(steps, k.Start); s != nil {
			if d.ByPhase == nil {
				d.ByPhase = map[StepPhase]*OpTimes{}
			}
			pt := d.ByPhase[s.Phase]
			if pt == nil {
				pt = &OpTimes{}
				d.ByPhase[s.Phase] = pt
			}
			pt[op] += dur
		}
	}
	out := make([]DeviceOps, 0, len(byDev))
	for _, d := range byDev {
		out = append(out, *d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Device < out[j].Device })
	return out
}
