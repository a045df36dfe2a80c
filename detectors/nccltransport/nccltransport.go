package nccltransport

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// Detector is the nccl-transport rule.
var Detector = &detectors.Detector{
	ID:       "nccl-transport",
	Title:    "NCCL uses a slower transport than the hardware offers",
	Layer:    model.LayerParallelism,
	Severity: model.SevWarning,
	Needs:    []model.Capability{model.CapTopology, model.CapBenchmarks},
	Formats:  []model.Format{model.FormatNCCLTests},
	Params: []detectors.Param{
		{Name: "nvls_ring_ratio", Default: 0.9, Unit: "ratio", Doc: "without INFO lines, an 8-GPU NVSwitch all_reduce plateau at or below this fraction of the NVLink rate is taken as NVLS not engaged"},
	},
	Doc: `Reads the transports NCCL reports per connection ("Channel 00/0 : 0[0] -> 1[1]
via P2P/IPC/read", "[send] via NET/IB/1/GDRDMA", "via SHM/direct/direct"),
"Using network X", "NET/IB : Using ...", "Failed to open libibverbs", "GPU Direct
RDMA Enabled/Disabled", "NVLS multicast support is (not) available" and the channel
summary ("16 coll channels, 0 collnet channels, 0 nvls channels, ...") and flags:

- socket fallback: inter-node traffic over NET/Socket (TCP) although an RDMA
  network exists (IB devices listed, libibverbs missing, NCCL_IB_DISABLE set, or a
  data-centre GPU platform);
- no P2P inside a node: connections between GPUs of one node go through shared
  host memory (SHM) instead of P2P/NVLink/PCIe peer access;
- GPUDirect RDMA off: network connections without /GDRDMA (data bounces through
  host memory);
- NVLS or CollNet unused where available: NVLS multicast available but 0 NVLS
  channels, NVLS unavailable on an NVSwitch system, CollNet requested but not
  connected; without INFO lines, an 8-GPU H100/H200/B200 all_reduce whose plateau
  stays at the ring level (inferred);
- different HCAs on different hosts (the union of the "NET/IB : Using" devices
  of each host's processes differs between hosts);
- a virtual or loopback interface (lo, virbr, docker, br-, veth, cni, tun)
  chosen for bootstrap ("Bootstrap : Using") or socket traffic.

An INFO log where none of these shows gets one info finding saying what was
checked. A log without NCCL_DEBUG=INFO lines makes most of this not measurable.

## How to fix
- Socket fallback: install/expose the RDMA stack in the container (libibverbs,
  rdma-core, /dev/infiniband), unset NCCL_IB_DISABLE, pick the HCAs with
  NCCL_IB_HCA, and for AWS/Slingshot load the aws-ofi-nccl plugin (NCCL_NET_PLUGIN).
- SHM instead of P2P: run containers with --ipc=host (or a large /dev/shm) and
  --cap-add SYS_PTRACE where CUMEM needs it, unset NCCL_P2P_DISABLE, raise
  NCCL_P2P_LEVEL, and disable PCIe ACS / set IOMMU passthrough on bare metal.
- Different HCAs per host: the same NCCL_IB_HCA everywhere, check ibstat.
- Virtual interface: NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) = the real one.
- GPUDirect RDMA: load nvidia-peermem (or use DMA-BUF, NCCL_DMABUF_ENABLE=1),
  check NCCL_NET_GDR_LEVEL and that GPU and NIC share a PCIe switch.
- NVLS: run the NVIDIA fabric manager (and IMEX on multi-node NVLink), leave
  NCCL_NVLS_ENABLE unset or 1, use NCCL >= 2.17 and CUDA >= 12.1.
- CollNet/SHARP: load the SHARP plugin and set NCCL_COLLNET_ENABLE=1 with enough
  nodes (NCCL_COLLNET_NODE_THRESHOLD).
`,
	Run: run,
}

func run(p *detectors.Pass) error {
	nvlsRing := p.Param("nvls_ring_ratio")
	looked := false
	for _, t := range p.Set.Traces {
		b := t.Bench
		if b == nil {
			continue
		}
		name := filepath.Base(t.Path)
		ev := []model.Evidence{{Rank: -1, Device: model.NoDevice, Stream: model.NoStream, Thread: -1, Note: name}}
		if b.NCCL.InfoLines == 0 {
			inferNVLS(p, b, name, ev, nvlsRing)
			if len(b.Runs) > 0 {
				p.NotMeasurable("%s: no NCCL_DEBUG=INFO lines; transports, network and GPUDirect RDMA are unknown (re-run with NCCL_DEBUG=INFO)", name)
			}
			continue
		}
		looked = true
		before := p.Reported()
		devices(p, &b.NCCL, name, ev)
		l := newLog(b, name, ev)
		l.socketFallback(p)
		l.noP2P(p)
		l.gdrOff(p)
		l.nvlsCollNet(p)
		if p.Reported() == before {
			checkedNote(p, l.f, name, ev)
		}
	}
	if !looked {
		p.NotMeasurable("no input has NCCL_DEBUG=INFO lines")
	}
	return nil
}

// ncclLog is what the transport checks read of one benchmark's NCCL INFO
// lines: connections per transport, the NCCL_* environment and the scope
// of the run.
type ncclLog struct {
	f              *model.NCCLFacts
	name           string
	ev             []model.Evidence
	gpu            string
	nodes, perNode int
	use            map[string]int
	env            map[string]string
}

func newLog(b *model.Bench, name string, ev []model.Evidence) *ncclLog {
	f := &b.NCCL
	l := &ncclLog{f: f, name: name, ev: ev, use: map[string]int{}, env: map[string]string{}}
	l.gpu, l.nodes, l.perNode = scope(b)
	for _, u := range f.TransportUse {
		l.use[u.Name] = u.Conns
	}
	for _, e := range f.Env {
		if i := strings.IndexByte(e, '='); i > 0 {
			l.env[e[:i]] = e[i+1:]
		}
	}
	return l
}

// sum is the number of connections over the transports pred accepts.
func (l *ncclLog) sum(pred func(string) bool) int {
	n := 0
	for k, v := range l.use {
		if pred(k) {
			n += v
		}
	}
	return n
}

// socketFallback warns when a multi-node run uses TCP sockets although
// something says RDMA was meant to be there.
func (l *ncclLog) socketFallback(p *detectors.Pass) {
	f, name, ev, gpu, env, sum := l.f, l.name, l.ev, l.gpu, l.env, l.sum
	sockets := l.use["NET/Socket"]
	netConns := sum(func(k string) bool { return strings.HasPrefix(k, "NET/") })
	multi := l.nodes > 1 || netConns > 0
	if multi && (sockets > 0 || strings.EqualFold(f.Network, "Socket")) {
		var why []string
		for _, d := range f.NetDevices {
			if strings.HasPrefix(d, "IB:") {
				why = append(why, "IB devices were listed ("+strings.TrimPrefix(d, "IB: ")+")")
				break
			}
		}
		if f.NoIBVerbs {
			why = append(why, "libibverbs could not be opened (RDMA stack missing in the environment)")
		}
		if v, ok := env["NCCL_IB_DISABLE"]; ok && v != "0" {
			why = append(why, "NCCL_IB_DISABLE="+v+" is set")
		}
		if isDatacenter(gpu) {
			why = append(why, gpu+" systems normally have an RDMA network")
		}
		if len(why) > 0 {
			p.Report(model.Finding{
				Severity: model.SevWarning,
				Title:    "NCCL falls back to TCP sockets between nodes",
				Message: fmt.Sprintf("%s: inter-node traffic uses TCP sockets (network %q, %d NET/Socket connections of %d network connections) although %s.",
					name, orDash(f.Network), sockets, netConns, strings.Join(why, "; ")),
				Recommendation: "Expose the RDMA stack (libibverbs, /dev/infiniband) or the aws-ofi-nccl plugin to the job and unset NCCL_IB_DISABLE; expect several times the bandwidth.",
				Metrics:        []model.Metric{{Name: "socket_conns", Value: float64(sockets), Unit: "count"}, {Name: "net_conns", Value: float64(netConns), Unit: "count"}},
				Evidence:       ev,
			})
		}
	}
}

// noP2P reports GPUs of one node that talk through shared memory instead
// of peer-to-peer, entirely (warning) or for some pairs (info).
func (l *ncclLog) noP2P(p *detectors.Pass) {
	f, name, ev, gpu, env, sum, perNode := l.f, l.name, l.ev, l.gpu, l.env, l.sum, l.perNode
	shm := sum(func(k string) bool { return strings.HasPrefix(k, "SHM") })
	p2p := sum(func(k string) bool { return strings.HasPrefix(k, "P2P") })
	p2pOff, hasP2POff := env["NCCL_P2P_DISABLE"]
	switch {
	case perNode > 1 || shm > 0 || p2p > 0 || f.P2PDisabledHint:
		if shm > 0 && p2p == 0 || f.P2PDisabledHint || (hasP2POff && p2pOff != "0") {
			var why []string
			if shm > 0 {
				why = append(why, fmt.Sprintf("%d intra-node connections use SHM and none P2P", shm))
			}
			if f.P2PDisabledHint {
				why = append(why, "NCCL reported intraNodeP2pSupport 0")
			}
			if hasP2POff && p2pOff != "0" {
				why = append(why, "NCCL_P2P_DISABLE="+p2pOff+" is set")
			}
			p.Report(model.Finding{
				Severity:       model.SevWarning,
				Title:          "No GPU peer-to-peer transport inside a node",
				Message:        fmt.Sprintf("%s: GPUs of one node (%s) do not talk peer-to-peer: %s; traffic is staged through host memory.", name, orDash(gpu), strings.Join(why, "; ")),
				Recommendation: "Run the container with --ipc=host, unset NCCL_P2P_DISABLE, and check PCIe ACS/IOMMU settings (nvidia-smi topo -p2p r).",
				Metrics:        []model.Metric{{Name: "shm_conns", Value: float64(shm), Unit: "count"}, {Name: "p2p_conns", Value: float64(p2p), Unit: "count"}},
				Evidence:       ev,
			})
		} else if shm > 0 && p2p > 0 {
			p.Report(model.Finding{
				Severity:       model.SevInfo,
				Title:          "Some GPU pairs of a node use shared memory instead of P2P",
				Message:        fmt.Sprintf("%s: %d of %d intra-node connections use SHM, the rest P2P: some GPU pairs (often across CPU sockets or PCIe root complexes) lack peer access.", name, shm, shm+p2p),
				Recommendation: "Check nvidia-smi topo -m for SYS/NODE paths between the pairs; NCCL_P2P_LEVEL=SYS forces P2P where the platform allows it.",
				Metrics:        []model.Metric{{Name: "shm_conns", Value: float64(shm), Unit: "count"}, {Name: "p2p_conns", Value: float64(p2p), Unit: "count"}, {Name: "shm_share", Value: float64(shm) / float64(shm+p2p), Unit: "ratio", Num: float64(shm), Den: float64(shm + p2p)}},
				Evidence:       ev,
			})
		}
	}
}

// gdrOff warns when RDMA network connections run without GPUDirect RDMA.
func (l *ncclLog) gdrOff(p *detectors.Pass) {
	f, name, ev, sum := l.f, l.name, l.ev, l.sum
	rdma := sum(func(k string) bool { return strings.HasPrefix(k, "NET/") && k != "NET/Socket" })
	gdr := sum(func(k string) bool { return strings.HasPrefix(k, "NET/") && strings.HasSuffix(k, "/GDRDMA") })
	if (rdma > 0 && gdr == 0) || (f.GDRDisabled > 0 && f.GDREnabled == 0) {
		p.Report(model.Finding{
			Severity: model.SevWarning,
			Title:    "GPUDirect RDMA is off",
			Message: fmt.Sprintf("%s: %d RDMA network connections, %d with GDRDMA; %d \"GPU Direct RDMA Disabled\" lines: network data bounces through host memory.",
				name, rdma, gdr, f.GDRDisabled),
			Recommendation: "Load nvidia-peermem (or enable DMA-BUF), check NCCL_NET_GDR_LEVEL and that the NIC and GPU share a PCIe switch.",
			Metrics:        []model.Metric{{Name: "rdma_conns", Value: float64(rdma), Unit: "count"}, {Name: "gdrdma_conns", Value: float64(gdr), Unit: "count"}},
			Evidence:       ev,
		})
	}
}

// nvlsCollNet notes NVLS available but unused or missing on an NVSwitch
// system, and CollNet requested but not connected.
func (l *ncclLog) nvlsCollNet(p *detectors.Pass) {
	f, name, ev, gpu, env, sum, perNode := l.f, l.name, l.ev, l.gpu, l.env, l.sum, l.perNode
	switch {
	case f.NVLSSupport == 1 && f.NVLSChannels == 0:
		p.Report(model.Finding{
			Severity:       model.SevInfo,
			Title:          "NVLS (NVLink SHARP) available but unused",
			Message:        fmt.Sprintf("%s: NCCL reports NVLS multicast support but sets up 0 NVLS channels (%d coll channels).", name, f.CollChannels),
			Recommendation: "Leave NCCL_NVLS_ENABLE unset (or 1) and check NCCL_ALGO does not exclude NVLS; NVLS gives ~470-480 GB/s all_reduce on 8xH100 against ~370 for Ring.",
			Metrics:        []model.Metric{{Name: "nvls_channels", Value: 0, Unit: "count"}, {Name: "coll_channels", Value: float64(f.CollChannels), Unit: "count"}},
			Evidence:       ev,
		})
	case f.NVLSSupport == 0 && perNode >= 4 && nvSwitchGPU(gpu):
		p.Report(model.Finding{
			Severity:       model.SevInfo,
			Title:          "NVLS (NVLink SHARP) not available",
			Message:        fmt.Sprintf("%s: NCCL reports no NVLS multicast support on %d x %s per node.", name, perNode, gpu),
			Recommendation: "Run the NVIDIA fabric manager (IMEX for multi-node NVLink) and use CUDA >= 12.1 drivers; inside containers expose the fabric manager socket.",
			Metrics:        []model.Metric{{Name: "gpus_per_node", Value: float64(perNode), Unit: "count"}},
			Evidence:       ev,
		})
	}
	if v := env["NCCL_COLLNET_ENABLE"]; v != "" && v != "0" && sum(func(k string) bool { return strings.HasPrefix(k, "COLLNET/") }) == 0 {
		p.Report(model.Finding{
			Severity:       model.SevInfo,
			Title:          "CollNet requested but not connected",
			Message:        fmt.Sprintf("%s: NCCL_COLLNET_ENABLE=%s but no CollNet connection was set up (%d collnet channels reported).", name, v, max(f.CollNetChannels, 0)),
			Recommendation: "Load the SHARP collnet plugin (HPC-X nccl_rdma_sharp_plugin) and check NCCL_COLLNET_NODE_THRESHOLD against the node count.",
			Metrics:        []model.Metric{{Name: "collnet_channels", Value: float64(max(f.CollNetChannels, 0)), Unit: "count"}},
			Evidence:       ev,
		})
	}
}

// inferNVLS flags, without INFO lines, a single-node 8-GPU NVSwitch
// all_reduce whose plateau stays at the ring level.
func inferNVLS(p *detectors.Pass, b *model.Bench, name string, ev []model.Evidence, ratio float64) {
	for i, r := range b.Runs {
		if r.Collective != "all_reduce" || r.Nodes != 1 || r.Ranks < 8 || len(r.Rows) < 3 {
			continue
		}
		link := nvlinkRate(r.GPU)
		if link == 0 {
			continue
		}
		var sizes []int64
		bus := map[int64]float64{}
		for _, row := range r.Rows {
			if row.OutOfPlace.Present {
				if _, ok := bus[row.SizeBytes]; !ok {
					sizes = append(sizes, row.SizeBytes)
				}
				bus[row.SizeBytes] = row.OutOfPlace.BusBWGBps
			}
		}
		if len(sizes) < 3 {
			continue
		}
		sort.Slice(sizes, func(a, b int) bool { return sizes[a] > sizes[b] })
		if sizes[0] < 256<<20 {
			continue
		}
		top := []float64{bus[sizes[0]], bus[sizes[1]], bus[sizes[2]]}
		sort.Float64s(top)
		plateau := top[1]
		if plateau > ratio*link || plateau < 0.5*link {
			continue // NVLS-level, or so low that nccl-bandwidth explains it
		}
		p.Report(model.Finding{
			Severity:   model.SevInfo,
			Confidence: model.Inferred,
			Title:      "NVLS (NVLink SHARP) apparently not engaged",
			Message: fmt.Sprintf("%s run %d (line %d): 8-GPU %s all_reduce plateau %.2f GB/s is at the Ring level (%.0f%% of the %.0f GB/s NVLink rate); with NVLS it typically exceeds the link rate (~470-480 GB/s on H100/H200).",
				name, i+1, r.Line, r.GPU, plateau, 100*plateau/link, link),
			Recommendation: "Re-run with NCCL_DEBUG=INFO to see \"NVLS multicast support\" and the nvls channel count; run the fabric manager and leave NCCL_NVLS_ENABLE/NCCL_ALGO unset.",
			Metrics:        []model.Metric{{Name: "plateau_busbw", Value: plateau, Unit: "GB/s"}, {Name: "nvlink_gbps", Value: link, Unit: "GB/s"}},
			Evidence:       ev,
		})
	}
}

// scope returns the first GPU model, the most nodes and GPUs per node of the
// log's runs (0 when unknown).
func scope(b *model.Bench) (gpu string, nodes, perNode int) {
	for _, r := range b.Runs {
		if gpu == "" {
			gpu = r.GPU
		}
		if r.Nodes > nodes {
			nodes = r.Nodes
		}
		if r.Nodes > 0 && r.Ranks/r.Nodes > perNode {
			perNode = r.Ranks / r.Nodes
		}
	}
	if b.NCCL.Nodes > nodes {
		nodes = b.NCCL.Nodes
	}
	return gpu, nodes, perNode
}

func isDatacenter(gpu string) bool {
	g := strings.ToLower(gpu)
	for _, k := range []string{"a100", "a800", "h100", "h800", "h200", "gh200", "b200", "b300", "gb200", "gb300", "mi250", "mi300", "mi325", "v100-sxm"} {
		if strings.Contains(g, k) {
			return true
		}
	}
	return false
}

// nvSwitchGPU reports SXM parts of NVLink-4/5 NVSwitch systems (NVLS capable).
func nvSwitchGPU(gpu string) bool { return nvlinkRate(gpu) > 0 }

func nvlinkRate(gpu string) float64 {
	g := strings.ToLower(gpu)
	switch {
	case strings.Contains(g, "nvl") && strings.Contains(g, "h100"), strings.Contains(g, "pcie"):
		return 0
	case strings.Contains(g, "b200"), strings.Contains(g, "b300"):
		return 900
	case strings.Contains(g, "h100"), strings.Contains(g, "h200"):
		return 450
	}
	return 0
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
