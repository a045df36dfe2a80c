package model

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
)

// Dump writes a canonical, deterministic text form of the trace: the golden
// output of every importer test. Paths are reduced to their base name so that
// dumps do not depend on where a file lives.
func (t *Trace) Dump(w io.Writer) error {
	bw := bufio.NewWriter(w)
	d := &dumper{t: t, p: func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }}
	d.header()
	d.topology()
	d.gpuActivity()
	d.hostActivity()
	d.metrics()
	if t.Bench != nil {
		dumpBench(d.p, t.Bench)
	}
	if t.JobLog != nil {
		dumpJobLog(d.p, t.JobLog)
	}
	d.p("warnings %d\n", len(t.Warnings))
	for _, w := range t.Warnings {
		d.p("  %s: %s\n", w.Position, w.Message)
	}
	return bw.Flush()
}

// dumper writes one trace's dump, one table family per method.
type dumper struct {
	t *Trace
	p func(string, ...any)
}

// s quotes an interned string.
func (d *dumper) s(id StringID) string { return strconv.Quote(d.t.Str(id)) }

// th names a thread pid/tid, or "-".
func (d *dumper) th(id ThreadID) string {
	if id == NoThread {
		return "-"
	}
	x := d.t.Thread(id)
	return fmt.Sprintf("%d/%d", x.PID, x.TID)
}

// header writes the trace line, clock, capabilities, notes and meta.
func (d *dumper) header() {
	t, p, q := d.t, d.p, strconv.Quote
	p("trace %s format=%s producer=%s rank=%d world=%d\n", q(filepath.Base(t.Path)), t.Format, q(t.Producer), t.Rank, t.WorldSize)
	p("clock origin=%d epoch=%t window=[%d,%d]\n", t.Clock.Origin, t.Clock.EpochKnown, t.Capture.Start, t.Capture.End)
	p("capabilities %s\n", t.Caps.String())
	for _, n := range t.Caps.Notes {
		p("note %s\n", q(n))
	}
	keys := make([]string, 0, len(t.Meta))
	for k := range t.Meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p("meta %s=%s\n", k, q(t.Meta[k]))
	}
}

// topology writes devices, processes and threads.
func (d *dumper) topology() {
	t, p, q := d.t, d.p, strconv.Quote
	p("devices %d\n", len(t.Devices))
	for _, dev := range t.Devices {
		p("  device %d name=%s kind=%s vendor=%s sms=%d mem=%d cc=%d.%d bw=%g bus=%s\n",
			dev.ID, q(dev.Name), dev.Kind, q(dev.Vendor), dev.SMs, dev.MemoryBytes, dev.ComputeMajor, dev.ComputeMinor, dev.MemoryBandwidth, q(dev.BusID))
	}
	p("processes %d\n", len(t.Processes))
	for _, pr := range t.Processes {
		p("  process %d %s\n", pr.PID, q(pr.Name))
	}
	p("threads %d\n", len(t.Threads))
	for _, x := range t.Threads {
		p("  thread %d/%d %s\n", x.PID, x.TID, q(x.Name))
	}
}

// gpuActivity writes kernels, memory operations, API calls and syncs.
func (d *dumper) gpuActivity() {
	t, p, s, th := d.t, d.p, d.s, d.th
	p("kernels %d\n", len(t.Kernels))
	for i := range t.Kernels {
		k := &t.Kernels[i]
		c := t.LaunchConfig(k)
		p("  %d %d dev=%d stream=%d corr=%d/%d ext=%d graph=%d grid=%v block=%v regs=%d smem=%d %s", k.Start, k.End, k.Device, c.Stream,
			k.CorrScope, k.Correlation, k.ExternalID, c.GraphID, c.Grid, c.Block, c.Registers, c.SharedMem, s(k.Name))
		if c.ShortName != NoString {
			p(" short=%s", s(c.ShortName))
		}
		p("\n")
	}
	p("memops %d\n", len(t.MemOps))
	for i := range t.MemOps {
		m := &t.MemOps[i]
		p("  %d %d dev=%d stream=%d corr=%d/%d ext=%d %s %s->%s bytes=%d %s", m.Start, m.End, m.Device, m.Stream,
			m.CorrScope, m.Correlation, m.ExternalID, m.Kind, m.Src, m.Dst, m.Bytes, s(m.Name))
		if m.Kind == MemUVM {
			p(" uvm=%s cause=%s addr=%#x", m.UVMDir, m.UVMCause, m.Addr)
		}
		p("\n")
	}
	p("api %d\n", len(t.APICalls))
	for i := range t.APICalls {
		a := &t.APICalls[i]
		id := t.APIIdentOf(a)
		p("  %d %d thread=%s corr=%d/%d ext=%d %s/%s %s\n", a.Start, a.End, th(a.Thread), id.Scope, a.Correlation, a.ExternalID, id.Source, id.Class, s(id.Name))
	}
	p("syncs %d\n", len(t.Syncs))
	for i := range t.Syncs {
		x := &t.Syncs[i]
		p("  %d %d dev=%d stream=%d corr=%d/%d %s\n", x.Start, x.End, x.Device, x.Stream, x.CorrScope, x.Correlation, x.Kind)
	}
}

// hostActivity writes ranges, OS runtime calls, call chains and GIL states.
func (d *dumper) hostActivity() {
	t, p, s, th := d.t, d.p, d.s, d.th
	p("ranges %d\n", len(t.Ranges))
	for i := range t.Ranges {
		r := &t.Ranges[i]
		tr := t.RangeTrack(r)
		p("  %d %d %s depth=%d thread=%s dev=%d stream=%d ext=%d", r.Start, r.End, r.Kind, r.Depth, th(r.Thread), tr.Device, tr.Stream, r.ExternalID)
		if tr.Domain != NoString {
			p(" domain=%s", s(tr.Domain))
		}
		p(" %s\n", s(r.Name))
	}
	p("osrt %d\n", len(t.OSCalls))
	for i := range t.OSCalls {
		o := &t.OSCalls[i]
		p("  %d %d thread=%s chain=%d %s\n", o.Start, o.End, th(o.Thread), o.CallChain, s(o.Name))
	}
	p("callchains %d\n", len(t.CallChains))
	for i, c := range t.CallChains {
		p("  %d", i)
		for _, f := range c {
			p(" %s", s(f))
		}
		p("\n")
	}
	p("gil %d\n", len(t.GIL))
	for i := range t.GIL {
		g := &t.GIL[i]
		p("  %d %d thread=%s %s\n", g.Start, g.End, th(g.Thread), g.State)
	}
}

// metrics writes collectives, counters, samples, memory events and op shapes.
func (d *dumper) metrics() {
	t, p, s, th := d.t, d.p, d.s, d.th
	p("collectives %d\n", len(t.Collectives))
	for i := range t.Collectives {
		c := &t.Collectives[i]
		src := "kernel"
		if c.Source == CollFromCPU {
			src = "cpu"
		}
		p("  %d %d %s src=%s dev=%d stream=%d bytes=%d dtype=%s group=%s size=%d rank=%d seq=%d corr=%d ext=%d\n", c.Start, c.End, c.Op, src,
			c.Device, c.Stream, c.Bytes, s(c.Dtype), s(c.Group), c.GroupSize, c.Rank, c.Seq, c.Correlation, c.ExternalID)
	}
	p("counters %d\n", len(t.Counters))
	for i, c := range t.Counters {
		p("  %d dev=%d unit=%s %s\n", i, c.Device, s(c.Unit), s(c.Name))
	}
	p("samples %d\n", len(t.Samples))
	for i := range t.Samples {
		x := &t.Samples[i]
		p("  %d series=%d %s\n", x.Time, x.Series, strconv.FormatFloat(x.Value, 'g', -1, 64))
	}
	p("memory %d\n", len(t.MemEvents))
	for i := range t.MemEvents {
		m := &t.MemEvents[i]
		p("  %d dev=%d thread=%s bytes=%d addr=%#x allocated=%d reserved=%d\n", m.Time, m.Device, th(m.Thread), m.Bytes, m.Addr, m.TotalAllocated, m.TotalReserved)
	}
	if len(t.OpShapes) > 0 {
		p("opshapes %d\n", len(t.OpShapes))
		for i := range t.OpShapes {
			o := &t.OpShapes[i]
			p("  ext=%d %s dims=%v types=%q\n", o.ExternalID, s(o.Name), o.Dims, o.Types)
		}
	}
}

func dumpBench(p func(string, ...any), b *Bench) {
	g := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	p("nccl version=%q network=%q transports=%q warnings=%d\n", b.NCCL.Version, b.NCCL.Network, b.NCCL.Transports, len(b.NCCL.Warnings))
	n := &b.NCCL
	p("nccl info=%d warn=%d networks=%q netdevs=%q ofi=%q noverbs=%t gdr=%d/%d nvls=%d heads=%d channels=coll:%d,collnet:%d,nvls:%d,p2p:%d,ring:%d init=%d/%d nodes=%d p2phint=%t\n",
		n.InfoLines, n.WarnLines, n.Networks, n.NetDevices, n.OFIProvider, n.NoIBVerbs, n.GDREnabled, n.GDRDisabled, n.NVLSSupport, n.NVLSHeads,
		n.CollChannels, n.CollNetChannels, n.NVLSChannels, n.P2PChannels, n.RingChannels, n.InitComplete, n.InitRanks, n.Nodes, n.P2PDisabledHint)
	for _, tu := range n.TransportUse {
		p("  transport %q conns=%d\n", tu.Name, tu.Conns)
	}
	for _, hd := range n.HostNetDevices {
		p("  hostnet %q\n", hd)
	}
	for _, e := range n.Env {
		p("  env %s\n", e)
	}
	for _, w := range n.Warnings {
		p("  nccl-warn %q\n", w)
	}
	p("bench failures %d\n", len(b.Failures))
	for _, f := range b.Failures {
		p("  line %d run=%d %s host=%q src=%q %q\n", f.Line, f.Run, f.Kind, f.Host, f.Source, f.Message)
	}
	p("bench runs %d\n", len(b.Runs))
	for _, r := range b.Runs {
		p("  run %s ranks=%d nodes=%d gpu=%q avg_busbw=%s rows=%d\n", r.Collective, r.Ranks, r.Nodes, r.GPU, g(r.ReportedAvgBusBW), len(r.Rows))
		pr := r.Params
		p("   program=%q line=%d tests=%q nccl=%d/%d params=%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d hosts=%q errcol=%t oob=%d/%t avgfail=%t procs=%d avglines=%d table=%t footer=%t concluded=%t truncated=%t inferred=%t extras=%d\n",
			r.Program, r.Line, r.TestsVersion, r.NCCLHeaders, r.NCCLLibrary,
			pr.NThread, pr.NGpus, pr.MinBytes, pr.MaxBytes, pr.StepFactor, pr.StepBytes, pr.WarmupIters, pr.Iters, pr.AggIters, pr.Validation, pr.Graph, pr.NRanks,
			r.Hosts, r.ErrorColumn, r.OOBValues, r.OOBFailed, r.AvgFailed, r.Processes, r.AvgLines, r.TableHeader, r.Footer, r.Concluded, r.Truncated, r.RanksInferred, r.Extras)
		if r.Repeats > 0 {
			p("   repeats=%d\n", r.Repeats)
		}
		for _, d := range r.Devices {
			p("   rank %d group=%d pid=%d host=%q dev=%d bus=%q gpu=%q line=%d\n", d.Rank, d.Group, d.PID, d.Host, d.Device, d.BusID, d.GPU, d.Line)
		}
		for _, row := range r.Rows {
			half := func(h BenchResult) string {
				if !h.Present {
					return "-"
				}
				return fmt.Sprintf("%s/%s/%s/%d", g(h.TimeUS), g(h.AlgBWGBps), g(h.BusBWGBps), h.Wrong)
			}
			p("    %d %d %s %s %d oop=%s ip=%s\n", row.SizeBytes, row.Count, row.Dtype, row.Redop, row.Root, half(row.OutOfPlace), half(row.InPlace))
			if row.OutOfPlace.MaxDelta >= 0 || row.InPlace.MaxDelta >= 0 || row.Line != 0 {
				p("     line=%d maxdelta=%s/%s\n", row.Line, g(row.OutOfPlace.MaxDelta), g(row.InPlace.MaxDelta))
			}
		}
	}
}
