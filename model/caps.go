package model

import "strings"

// Capability is one kind of evidence a capture may or may not hold.
type Capability uint32

// Capabilities a capture can have.
const (
	CapKernels     Capability = 1 << iota // GPU kernel executions
	CapMemOps                             // GPU memcpy / memset
	CapAPICalls                           // host runtime / driver API calls
	CapSyncEvents                         // GPU-side synchronisation records
	CapCPUOps                             // framework operators on CPU threads
	CapAnnotations                        // user ranges / NVTX
	CapSteps                              // ProfilerStep or equivalent step markers
	CapPython                             // Python function frames (with_stack)
	CapGIL                                // explicit GIL intervals
	CapOSRuntime                          // OS runtime calls
	CapGPUMetrics                         // sampled GPU hardware metrics
	CapMemory                             // allocator events / memory usage
	CapCollectives                        // collective metadata (op, bytes, group)
	CapCommKernels                        // communication kernels on the GPU timeline
	CapBenchmarks                         // nccl-tests style benchmark rows
	CapTopology                           // NCCL topology / transport facts
	CapCallChains                         // OS runtime or sampling call chains
	CapAccelOnly                          // device activity of a non-GPU accelerator only
)

var capNames = []struct {
	c    Capability
	name string
}{
	{CapKernels, "kernels"},
	{CapMemOps, "memops"},
	{CapAPICalls, "api-calls"},
	{CapSyncEvents, "sync-events"},
	{CapCPUOps, "cpu-ops"},
	{CapAnnotations, "annotations"},
	{CapSteps, "steps"},
	{CapPython, "python"},
	{CapGIL, "gil"},
	{CapOSRuntime, "os-runtime"},
	{CapGPUMetrics, "gpu-metrics"},
	{CapMemory, "memory"},
	{CapCollectives, "collectives"},
	{CapCommKernels, "comm-kernels"},
	{CapBenchmarks, "benchmarks"},
	{CapTopology, "topology"},
	{CapCallChains, "call-chains"},
	{CapAccelOnly, "accelerator-only"},
}

// Name returns the capability's stable name.
func (c Capability) Name() string {
	for _, n := range capNames {
		if n.c == c {
			return n.name
		}
	}
	return "unknown"
}

// AllCapabilities lists every capability in a fixed order.
func AllCapabilities() []Capability {
	out := make([]Capability, len(capNames))
	for i, n := range capNames {
		out[i] = n.c
	}
	return out
}

// Capabilities records what a capture observed, and notes on what it could
// not observe.
type Capabilities struct {
	Set Capability
	// Notes explain gaps, e.g. "CPU-only trace: no GPU activity recorded".
	Notes []string
}

// Has reports whether every capability in c is present.
func (cs Capabilities) Has(c Capability) bool { return cs.Set&c == c }

// Add marks c as present.
func (cs *Capabilities) Add(c Capability) { cs.Set |= c }

// Note appends a note once.
func (cs *Capabilities) Note(s string) {
	for _, n := range cs.Notes {
		if n == s {
			return
		}
	}
	cs.Notes = append(cs.Notes, s)
}

// Names lists the names of the present capabilities in a fixed order.
func (cs Capabilities) Names() []string {
	var out []string
	for _, n := range capNames {
		if cs.Set&n.c != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// Missing lists the names of the absent capabilities in a fixed order.
func (cs Capabilities) Missing() []string {
	var out []string
	for _, n := range capNames {
		if cs.Set&n.c == 0 {
			out = append(out, n.name)
		}
	}
	return out
}

func (cs Capabilities) String() string { return strings.Join(cs.Names(), ",") }

// fillFrom adds the capabilities implied by non-empty tables.
func (cs *Capabilities) fillFrom(t *Trace) {
	if len(t.Kernels) > 0 {
		cs.Add(CapKernels)
	}
	if len(t.MemOps) > 0 {
		cs.Add(CapMemOps)
	}
	if len(t.APICalls) > 0 {
		cs.Add(CapAPICalls)
	}
	if len(t.Syncs) > 0 {
		cs.Add(CapSyncEvents)
	}
	if len(t.GIL) > 0 {
		cs.Add(CapGIL)
	}
	if len(t.OSCalls) > 0 {
		cs.Add(CapOSRuntime)
	}
	if len(t.Samples) > 0 {
		cs.Add(CapGPUMetrics)
	}
	if len(t.MemEvents) > 0 {
		cs.Add(CapMemory)
	}
	if len(t.CallChains) > 0 {
		cs.Add(CapCallChains)
	}
	for i := range t.Ranges {
		switch t.Ranges[i].Kind {
		case RangeCPUOp:
			cs.Add(CapCPUOps)
		case RangeStep:
			cs.Add(CapSteps)
		case RangePython:
			cs.Add(CapPython)
		case RangeUser, RangeNVTX, RangeGPUAnnotation, RangeMark:
			cs.Add(CapAnnotations)
			// Engine step annotations (vLLM execute_…, SGLang step[…]) are
			// step markers too (FindSteps).
			if k := t.Ranges[i].Kind; (k == RangeUser || k == RangeNVTX) && !cs.Has(CapSteps) {
				if _, ok := ParseStepName(t.Str(t.Ranges[i].Name)); ok {
					cs.Add(CapSteps)
				}
			}
		}
	}
	for i := range t.Collectives {
		if t.Collectives[i].Source == CollFromKernel {
			cs.Add(CapCommKernels)
		}
		if t.Collectives[i].Bytes >= 0 || t.Collectives[i].Group != NoString {
			cs.Add(CapCollectives)
		}
	}
	if t.Bench != nil && len(t.Bench.Runs) > 0 {
		cs.Add(CapBenchmarks)
	}
}
