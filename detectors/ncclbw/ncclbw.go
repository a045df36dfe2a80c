package ncclbw

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// Detector is the nccl-bandwidth rule.
var Detector = &detectors.Detector{
	ID:       "nccl-bandwidth",
	Title:    "nccl-tests bandwidth below what the fabric should give",
	Layer:    model.LayerParallelism,
	Severity: model.SevWarning,
	Needs:    []model.Capability{model.CapBenchmarks},
	Formats:  []model.Format{model.FormatNCCLTests},
	Params: []detectors.Param{
		{Name: "min_ratio", Default: 0.7, Unit: "ratio", Doc: "flag a plateau busbw below this fraction of the expected link rate"},
		{Name: "expected_gbps", Default: 0, Unit: "GB/s", Doc: "expected busbw to compare against; 0 = from the built-in fabric table"},
		{Name: "plateau_min_bytes", Default: 32 << 20, Unit: "bytes", Doc: "a sweep must reach this size for its plateau to be judged"},
		{Name: "dip_ratio", Default: 0.3, Unit: "ratio", Doc: "a busbw drop of at least this fraction between neighbouring sizes (or from the peak to the largest size) is a dip"},
		{Name: "dip_min_bytes", Default: 1 << 20, Unit: "bytes", Doc: "sizes below this are ignored for dips and in-place gaps"},
		{Name: "gap_ratio", Default: 0.2, Unit: "ratio", Doc: "flag a median in-place vs out-of-place busbw difference above this fraction"},
		{Name: "small_bytes", Default: 8192, Unit: "bytes", Doc: "sizes up to this measure small-message latency"},
		{Name: "latency_intra_us", Default: 50, Unit: "us", Doc: "small-message latency above this is flagged on one node"},
		{Name: "latency_inter_us", Default: 150, Unit: "us", Doc: "small-message latency above this is flagged across nodes"},
	},
	Doc: `Compares each nccl-tests run's bus bandwidth with what the interconnect should
deliver. The plateau is the median busbw of the three largest sizes (out-of-place
half; the in-place half when only that was printed); the peak is the largest busbw
of the run. The expected rate comes from a documented table (NVLink generation
per GPU model, PCIe generation for PCIe cards, AMD Infinity Fabric, and the
per-GPU network rate: InfiniBand EDR/HDR/NDR/XDR, RoCE, AWS EFA v1/v2/v3,
Slingshot): on one node it is the GPU-to-GPU link; across nodes it is
min(link, NIC per GPU x GPUs per node) for ring collectives (each node sends
busbw through its NICs), NIC x (n-1)/(n-G) for alltoall and the NIC rate for
sendrecv. When the log has no NCCL_DEBUG lines the network is assumed from the
GPU platform and the finding says so (confidence "estimated"); HPE Cray EX host
names (x3006c0s1b1n0) mean Slingshot, judged against 2 NICs per node (the lower
of 2-4 on Cray EX nodes).

TCP-socket fallback: across nodes, a small-message latency of 30 us or more with
a busbw ceiling at or below 12.5 GB/s (what TCP gets out of one 100-200 Gb/s
NIC), and no RDMA network in the log, is named as NCCL's socket transport; when
the sweep stops before the plateau, a NET/Socket line or a libibverbs warning
must back it. Fix: make NCCL use RDMA (rdma-core/libibverbs and /dev/infiniband
in the container, NCCL_IB_HCA, or the aws-ofi-nccl plugin for EFA/Slingshot).

Also reported: dips (busbw falling by dip_ratio between neighbouring sizes and
recovering later, or collapsing at the largest sizes), a median in-place vs
out-of-place gap above gap_ratio, and small-message latency above the limits.

Healthy numbers: Ring busbw is about 78-82% of the per-direction NVLink rate
(8xA100 ~235 of 300 GB/s; 8xH100 ~360-370 of 450); NVLS/CollNet/Tree can
exceed the link rate, which is never flagged. busbw is meaningless for one rank.

## How to fix
- Plateau far below the link: check that P2P/NVLink is used (NCCL_DEBUG=INFO,
  "via P2P/..."; see nccl-transport), that NCCL_P2P_DISABLE/NCCL_SHM_DISABLE are
  unset, that containers run with --ipc=host and enough shared memory, and that
  the PCIe ACS/IOMMU settings allow peer access.
- Across nodes: confirm the fast network is used ("Using network IB", GDRDMA),
  one NIC per GPU on the right NUMA node (NCCL_IB_HCA, NCCL_CROSS_NIC), and run
  a sweep up to at least 1-8 GiB (-e 8G) so that the plateau is reached.
- Dips at one size: pin the algorithm/protocol (NCCL_ALGO, NCCL_PROTO) to find
  the tuner's bad choice; collapses at large sizes often mean memory pressure
  ("Reducing maxBytes") or PCIe/NIC congestion.
- High small-message latency: check launcher CPU binding, NCCL_PROTO=LL, and
  that the network is not TCP sockets.
`,
	Run: run,
}

// Expected is the reference for one run.
type Expected struct {
	GBps    float64
	Basis   string // how it was derived
	Assumed bool   // the network was not reported by the log
}

// ExpectedFor derives the expected busbw of a run from the table: nodes and
// ranks from the run, the network from the NCCL facts. ok is false when the
// GPU model or the scope (nodes) is unknown.
func ExpectedFor(t Table, r *model.BenchRun, facts *model.NCCLFacts) (Expected, bool) {
	if r.GPU == "" || r.Nodes == 0 || r.Ranks < 2 {
		return Expected{}, false
	}
	g, ok := t.gpuFabric(r.GPU)
	if !ok {
		return Expected{}, false
	}
	perNode := r.Ranks / r.Nodes
	if perNode < 1 {
		perNode = 1
	}
	intra, hasIntra := t.Links[g.Intra]
	intraGBps := intra.GBps
	if hasIntra && intra.Mesh && perNode > 1 {
		intraGBps = intra.GBps * float64(perNode-1)
	}
	if r.Nodes == 1 {
		if !hasIntra {
			return Expected{}, false
		}
		basis := intra.Name
		if intra.Mesh {
			basis = fmt.Sprintf("%s, %g GB/s x %d peers", intra.Name, intra.GBps, perNode-1)
		}
		return Expected{GBps: intraGBps, Basis: basis}, true
	}
	network, ofi := "", ""
	if facts != nil {
		network, ofi = facts.Network, facts.OFIProvider
	}
	cray := network == "" && ofi == "" && slingshotHosts(r.Hosts)
	if cray {
		ofi = "cxi" // HPE Cray EX machines run Slingshot
	}
	key, assumed := t.nicFor(r.GPU, network, ofi, g)
	nic, ok := t.Links[key]
	if !ok {
		return Expected{}, false
	}
	n, G := float64(r.Ranks), float64(perNode)
	var gbps float64
	var basis string
	switch r.Collective {
	case "alltoall", "alltoallv":
		gbps = nic.GBps * (n - 1) / (n - G)
		basis = fmt.Sprintf("%s x (n-1)/(n-G) = %g x %g/%g", nic.Name, nic.GBps, n-1, n-G)
	case "sendrecv":
		gbps = nic.GBps
		basis = nic.Name
	default:
		gbps = nic.GBps * G
		basis = fmt.Sprintf("%s x %d GPUs per node", nic.Name, perNode)
	}
	if hasIntra && perNode > 1 && intraGBps < gbps {
		gbps = intraGBps
		basis = intra.Name + " (the node's internal link is the tighter bound)"
	}
	if cray && r.Collective != "sendrecv" && gbps > 2*nic.GBps {
		// Cray EX nodes carry 2 (Polaris) to 4 (Perlmutter) Slingshot NICs
		// for 4 GPUs; the log cannot tell which: judge against the lower.
		gbps = 2 * nic.GBps
		basis = fmt.Sprintf("%s x 2 NICs per node (the lower of 2-4 NICs on Cray EX nodes)", nic.Name)
	}
	if cray {
		basis += "; Slingshot inferred from HPE Cray EX host names"
	}
	if assumed {
		basis += "; network not in the log, assumed from the GPU platform"
	}
	return Expected{GBps: gbps, Basis: basis, Assumed: assumed}, true
}

var bwCollectives = map[string]bool{"all_reduce": true, "all_gather": true, "reduce_scatter": true, "alltoall": true,
	"broadcast": true, "reduce": true, "sendrecv": true, "alltoallv": true, "gather": true, "scatter": true}

func run(p *detectors.Pass) error {
	minRatio := p.Param("min_ratio")
	override := p.Param("expected_gbps")
	plateauMin := int64(p.Param("plateau_min_bytes"))
	dipRatio := p.Param("dip_ratio")
	dipMin := int64(p.Param("dip_min_bytes"))
	gapRatio := p.Param("gap_ratio")
	smallBytes := int64(p.Param("small_bytes"))
	latIntra, latInter := p.Param("latency_intra_us"), p.Param("latency_inter_us")
	tbl := DefaultTable()
	judged := 0
	for _, t := range p.Set.Traces {
		if t.Bench == nil {
			continue
		}
		for i := range t.Bench.Runs {
			r := &t.Bench.Runs[i]
			where := fmt.Sprintf("%s run %d (%s, line %d)", filepath.Base(t.Path), i+1, orUnknown(r.Collective), r.Line)
			ev := []model.Evidence{{Rank: -1, Device: model.NoDevice, Stream: model.NoStream, Thread: -1, Note: where}}
			if len(r.Rows) == 0 || !bwCollectives[r.Collective] {
				continue
			}
			if r.Ranks == 1 {
				p.NotMeasurable("%s: one rank; busbw is not a bandwidth (factor 0 or a local copy)", where)
				continue
			}
			pts := points(r)
			if len(pts) == 0 {
				continue
			}
			judged++
			plateau, peak, largest := plateauOf(pts)
			// Plateau against the fabric.
			switch {
			case largest < plateauMin:
				p.NotMeasurable("%s: the sweep stops at %d bytes, below %d; the plateau is not reached", where, largest, plateauMin)
			default:
				exp, ok := Expected{}, false
				if override > 0 {
					exp, ok = Expected{GBps: override, Basis: "expected_gbps parameter"}, true
				} else {
					exp, ok = ExpectedFor(tbl, r, &t.Bench.NCCL)
				}
				if !ok {
					p.NotMeasurable("%s: no reference rate for GPU %q on %d node(s), network %q", where, r.GPU, r.Nodes, t.Bench.NCCL.Network)
					break
				}
				ratio := plateau / exp.GBps
				if ratio >= minRatio {
					// Healthy: say what the fabric should give and that the run
					// reaches it, so the report explains the numbers.
					p.Report(model.Finding{
						Severity:   model.SevInfo,
						Confidence: model.Measured,
						Title: fmt.Sprintf("%s busbw %.2f GB/s reaches %.0f%% of the %.2f GB/s expected (%s)",
							r.Collective, plateau, 100*ratio, exp.GBps, exp.Basis),
						Message: fmt.Sprintf("%s: %s busbw plateau %.2f GB/s (peak %.2f) is %.0f%% of the %.2f GB/s expected for %d x %s (%s): the fabric performs as it should.",
							where, r.Collective, plateau, peak, 100*ratio, exp.GBps, r.Ranks, r.GPU, exp.Basis),
						Metrics: []model.Metric{
							{Name: "plateau_busbw", Value: plateau, Unit: "GB/s"},
							{Name: "peak_busbw", Value: peak, Unit: "GB/s"},
							{Name: "expected_busbw", Value: exp.GBps, Unit: "GB/s"},
							{Name: "plateau_ratio", Value: ratio, Unit: "ratio", Num: plateau, Den: exp.GBps},
						},
						Evidence: ev,
					})
				}
				if ratio < minRatio {
					conf := model.Measured
					if exp.Assumed {
						conf = model.Estimated
					}
					scope := "one node"
					if r.Nodes > 1 {
						scope = fmt.Sprintf("%d nodes", r.Nodes)
					}
					p.Report(model.Finding{
						Severity:   model.SevWarning,
						Confidence: conf,
						Title: fmt.Sprintf("%s busbw %.2f GB/s is %.0f%% of the %.2f GB/s expected (%s)",
							r.Collective, plateau, 100*ratio, exp.GBps, exp.Basis),
						Message: fmt.Sprintf("%s: %s busbw plateau %.2f GB/s (peak %.2f) is %.0f%% of the %.2f GB/s expected for %d x %s on %s (%s).",
							where, r.Collective, plateau, peak, 100*ratio, exp.GBps, r.Ranks, r.GPU, scope, exp.Basis),
						Recommendation: "Check the transport NCCL chose (NCCL_DEBUG=INFO: P2P/NVLink inside a node, IB/EFA with GDRDMA across nodes), NIC-GPU affinity, and sweep to at least 1-8 GiB.",
						Metrics: []model.Metric{
							{Name: "plateau_busbw", Value: plateau, Unit: "GB/s"},
							{Name: "peak_busbw", Value: peak, Unit: "GB/s"},
							{Name: "expected_busbw", Value: exp.GBps, Unit: "GB/s"},
							{Name: "plateau_ratio", Value: ratio, Unit: "ratio", Num: plateau, Den: exp.GBps},
							{Name: "ranks", Value: float64(r.Ranks), Unit: "count"},
							{Name: "nodes", Value: float64(r.Nodes), Unit: "count"},
						},
						Evidence: ev,
					})
				}
			}
			dips(p, r, pts, dipRatio, dipMin, where, ev)
			gaps(p, r, dipMin, gapRatio, where, ev)
			latency(p, r, smallBytes, latIntra, latInter, where, ev)
			tcpFallback(p, r, &t.Bench.NCCL, smallBytes, plateau, largest >= plateauMin, where, ev)
		}
	}
	if judged == 0 {
		p.NotMeasurable("no nccl-tests run with multi-rank bandwidth rows")
	}
	return nil
}

// point is one row's busbw (out-of-place, or in-place when only that half
// was printed), in sweep order.
type point struct {
	size  int64
	bus   float64
	sweep int
}

// points returns one point per row; a new sweep starts whenever the size
// does not grow (-d all / -o all / -N blocks inside one table).
func points(r *model.BenchRun) []point {
	var out []point
	sweep := 0
	for i, row := range r.Rows {
		h := row.OutOfPlace
		if !h.Present {
			h = row.InPlace
		}
		if !h.Present {
			continue
		}
		if i > 0 && row.SizeBytes <= r.Rows[i-1].SizeBytes {
			sweep++
		}
		out = append(out, point{size: row.SizeBytes, bus: h.BusBWGBps, sweep: sweep})
	}
	return out
}

// plateauOf returns the median busbw of the three largest sizes, the peak
// busbw and the largest size.
func plateauOf(pts []point) (plateau, peak float64, largest int64) {
	s := append([]point(nil), pts...)
	sort.SliceStable(s, func(i, j int) bool { return s[i].size > s[j].size })
	k := 3
	if len(s) < k {
		k = len(s)
	}
	top := make([]float64, k)
	for i := 0; i < k; i++ {
		top[i] = s[i].bus
	}
	sort.Float64s(top)
	plateau = top[k/2]
	if k%2 == 0 {
		plateau = (top[k/2-1] + top[k/2]) / 2
	}
	for _, x := range pts {
		if x.bus > peak {
			peak = x.bus
		}
	}
	return plateau, peak, s[0].size
}

func dips(p *detectors.Pass, r *model.BenchRun, pts []point, ratio float64, minSize int64, where string, ev []model.Evidence) {
	var msgs []string
	worst := 0.0
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		if a.sweep != b.sweep || b.size < minSize || a.bus <= 0 {
			continue
		}
		drop := 1 - b.bus/a.bus
		if drop < ratio {
			continue
		}
		// A dip recovers later in the same sweep; a collapse does not.
		for j := i + 1; j < len(pts) && pts[j].sweep == b.sweep; j++ {
			if pts[j].bus >= (1-ratio/2)*a.bus {
				msgs = append(msgs, fmt.Sprintf("%s: %.2f -> %.2f GB/s (-%.0f%%), back to %.2f at %s",
					sizeStr(b.size), a.bus, b.bus, 100*drop, pts[j].bus, sizeStr(pts[j].size)))
				if drop > worst {
					worst = drop
				}
				break
			}
		}
	}
	// Collapse: the largest size of a sweep far below the sweep's peak
	// (among sizes >= minSize).
	for s := 0; len(pts) > 0 && s <= pts[len(pts)-1].sweep; s++ {
		var peak, last point
		found := false
		for _, x := range pts {
			if x.sweep != s || x.size < minSize {
				continue
			}
			if !found || x.bus > peak.bus {
				peak = x
			}
			last, found = x, true
		}
		if found && peak.size != last.size && peak.bus > 0 && last.bus < (1-ratio)*peak.bus {
			drop := 1 - last.bus/peak.bus
			msgs = append(msgs, fmt.Sprintf("largest size %s: %.2f GB/s, %.0f%% below the peak %.2f at %s",
				sizeStr(last.size), last.bus, 100*drop, peak.bus, sizeStr(peak.size)))
			if drop > worst {
				worst = drop
			}
		}
	}
	if len(msgs) == 0 {
		return
	}
	p.Report(model.Finding{
		Severity: model.SevWarning,
		Title:    "nccl-tests busbw dips at some message sizes",
		Message:  fmt.Sprintf("%s: %s busbw is not monotonic: %s.", where, r.Collective, strings.Join(msgs, "; ")),
		Recommendation: "Re-run the sizes around the dip with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING to see the algorithm/protocol switch; " +
			"pin NCCL_ALGO/NCCL_PROTO to confirm, and check memory pressure or congestion for collapses at the largest sizes.",
		Metrics:  []model.Metric{{Name: "worst_drop", Value: worst, Unit: "ratio"}, {Name: "dips", Value: float64(len(msgs)), Unit: "count"}},
		Evidence: ev,
	})
}

func gaps(p *detectors.Pass, r *model.BenchRun, minSize int64, ratio float64, where string, ev []model.Evidence) {
	var rel []float64
	var oopSum, ipSum float64
	for _, row := range r.Rows {
		o, i := row.OutOfPlace, row.InPlace
		if row.SizeBytes < minSize || !o.Present || !i.Present || o.BusBWGBps <= 0 || i.BusBWGBps <= 0 {
			continue
		}
		m := o.BusBWGBps
		if i.BusBWGBps > m {
			m = i.BusBWGBps
		}
		d := o.BusBWGBps - i.BusBWGBps
		if d < 0 {
			d = -d
		}
		rel = append(rel, d/m)
		oopSum += o.BusBWGBps
		ipSum += i.BusBWGBps
	}
	if len(rel) < 2 {
		return
	}
	sort.Float64s(rel)
	med := rel[len(rel)/2]
	if med <= ratio {
		return
	}
	n := float64(len(rel))
	slower := "in-place"
	if oopSum < ipSum {
		slower = "out-of-place"
	}
	p.Report(model.Finding{
		Severity: model.SevInfo,
		Title:    "nccl-tests in-place and out-of-place bandwidth differ",
		Message: fmt.Sprintf("%s: %s in-place and out-of-place busbw differ by a median %.0f%% over %d sizes >= %s (mean %.2f vs %.2f GB/s; %s is slower).",
			where, r.Collective, 100*med, len(rel), sizeStr(minSize), oopSum/n, ipSum/n, slower),
		Recommendation: "A large gap points at buffer registration or memory placement differences (NCCL_NVLS_ENABLE, user buffer registration -R, NUMA placement); compare with NCCL_DEBUG=INFO.",
		Metrics: []model.Metric{{Name: "median_gap", Value: med, Unit: "ratio"},
			{Name: "oop_mean_busbw", Value: oopSum / n, Unit: "GB/s"}, {Name: "ip_mean_busbw", Value: ipSum / n, Unit: "GB/s"}},
		Evidence: ev,
	})
}

func latency(p *detectors.Pass, r *model.BenchRun, small int64, intra, inter float64, where string, ev []model.Evidence) {
	best, at := smallLatency(r, small)
	if best < 0 || r.Nodes == 0 {
		return
	}
	limit, scope := intra, "one node"
	if r.Nodes > 1 {
		limit, scope = inter, fmt.Sprintf("%d nodes", r.Nodes)
	}
	if best <= limit {
		return
	}
	p.Report(model.Finding{
		Severity: model.SevInfo,
		Title:    "nccl-tests small-message latency is high",
		Message:  fmt.Sprintf("%s: the fastest %s of <= %s takes %.2f us (at %s), above %.0f us for %s.", where, r.Collective, sizeStr(small), best, sizeStr(at), limit, scope),
		Recommendation: "Small collectives are latency-bound: check for TCP sockets instead of RDMA, proxy/CPU binding (NCCL_PROXY_*, launcher --bind-to), " +
			"and whether the LL/LL128 protocols are disabled (NCCL_PROTO).",
		Metrics:  []model.Metric{{Name: "small_latency", Value: best, Unit: "us"}, {Name: "limit", Value: limit, Unit: "us"}},
		Evidence: ev,
	})
}

func sizeStr(b int64) string {
	switch {
	case b >= 1<<30 && b%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", b>>30)
	case b >= 1<<20 && b%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", b>>20)
	case b >= 1<<10 && b%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", b>>10)
	}
	return fmt.Sprintf("%d B", b)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown collective"
	}
	return s
}
