package collectivetimeout

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// Detector is the collective-timeout rule.
var Detector = &detectors.Detector{
	ID:       "collective-timeout",
	Title:    "Hung collectives and NCCL transport problems in job logs",
	Layer:    model.LayerParallelism,
	Severity: model.SevError,
	Formats:  []model.Format{model.FormatJobLog},
	Params: []detectors.Param{
		{Name: "startup_seq", Default: 2, Unit: "count", Doc: "a hang at a sequence number up to this one (or with no completed work) is a start-up hang"},
		{Name: "max_ranks_listed", Default: 16, Unit: "count", Doc: "how many ranks a message names before summarising"},
	},
	Doc: `Reads job logs (importers/joblog) for collectives that never finished and for
NCCL transport set-ups that make them slow or hang:

- c10d watchdog timeouts ("Watchdog caught collective operation timeout:
  WorkNCCL(SeqNum=…, OpType=…, NumelIn=…, Timeout(ms)=…)"): the hung
  collective (op, sequence number, elements, timeout); whether it is a
  start-up hang (sequence number ≤ startup_seq, or "last completed NCCL work"
  0: the first collective never completed, so NCCL init / the network is the
  suspect) or mid-run (a rank stopped arriving: a crash, a hang in Python,
  rank-dependent control flow, uneven data); which ranks reported the
  timeout (they arrived and waited), which ranks' "last enqueued NCCL work"
  is below the hung sequence (they never arrived), and which ranks of the
  world the log does not show; the arrival skew from the timeout lines'
  timestamps minus "ran for N milliseconds" (error);
- "ProcessGroupNCCL's watchdog got stuck" (heartbeat monitor) and NCCL error
  strings (unhandled cuda / system error, remote error) (error);
- transport problems from NCCL_DEBUG=INFO lines, per host (warning): a host
  on TCP sockets ("Using network Socket") while other hosts use IB or an OFI
  plugin; hosts using different HCAs (mlx5_0 on one, mlx5_1 on another); a
  virtual, loopback or container interface (virbr*, docker*, veth*, br-*,
  lo, cni*, flannel*, cali*) used for bootstrap or offered to NET/Socket; P2P
  disabled (NCCL_P2P_DISABLE=1, intraNodeP2pSupport 0); GPUDirect RDMA off
  ("GPU Direct RDMA Disabled", NET/IB connections without GDRDMA,
  NCCL_NET_GDR_LEVEL=LOC/0); NCCL WARN lines;
- an NCCL INFO log with none of these gets one info finding saying what was
  checked (hosts, ranks, networks, transports).

## How to fix
- Start-up hang (first collective): the ranks cannot connect. Run with
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET and compare the hosts; pin the
  interface (NCCL_SOCKET_IFNAME=eth0, GLOO_SOCKET_IFNAME) away from virbr0 /
  docker0 / lo; open the ports between nodes; in containers use --ipc=host
  or a large --shm-size; try NCCL_P2P_DISABLE=1 once to rule out a broken
  P2P path (and fix the ACS / IOMMU setting it points to).
- Mid-run hang: find the rank that never arrived (the ranks listed as not
  arrived, or those missing from the log): py-spy dump --pid on it, or
  TORCH_NCCL_DUMP_ON_TIMEOUT=1 with the flight recorder
  (TORCH_NCCL_TRACE_BUFFER_SIZE) to see its last collective; look for
  rank-dependent code paths, uneven batches, a data-loader stall or an
  exception on that rank. Raise the timeout (init_process_group(timeout=…))
  only when a step is legitimately that long.
- Socket fallback / mixed fabrics: install the IB / OFI plugin on every
  host (libibverbs, aws-ofi-nccl), set NCCL_IB_HCA the same way everywhere,
  check that the HCAs of every host are up (ibstat).
- GDR off: load nvidia-peermem (or use DMA-BUF with a recent driver), check
  PCIe topology (nvidia-smi topo -m) and NCCL_NET_GDR_LEVEL.
`,
	Run: run,
}

func run(p *detectors.Pass) error {
	looked := false
	for _, t := range p.Set.Traces {
		j := t.JobLog
		if j == nil {
			continue
		}
		name := filepath.Base(t.Path)
		hang := hangs(p, j, name)
		errs := ncclErrors(p, j, name)
		transport := 0
		if j.NCCL.InfoLines+j.NCCL.WarnLines > 0 {
			transport = transportChecks(p, j, name)
		}
		if len(j.Watchdog) > 0 || j.NCCL.InfoLines+j.NCCL.WarnLines > 0 {
			looked = true
		}
		if j.NCCL.InfoLines > 0 && hang+errs+transport == 0 {
			p.Report(model.Finding{
				Severity: model.SevInfo,
				Title:    "NCCL set-up checked: no transport problem seen",
				Message: fmt.Sprintf("%s: %d NCCL INFO lines from %d host(s), ranks %s; networks %s; transports %s. Checked: socket fallback "+
					"against other hosts, HCAs per host, virtual/loopback interfaces, P2P disabled, GPUDirect RDMA, NCCL WARN lines.",
					name, j.NCCL.InfoLines, len(j.Hosts), ranksText(j.Ranks, 16), orNone(strings.Join(j.NCCL.Networks, ", ")), transportsText(j.NCCL.TransportUse)),
				Metrics:  []model.Metric{{Name: "hosts", Value: float64(len(j.Hosts)), Unit: "count"}, {Name: "info_lines", Value: float64(j.NCCL.InfoLines), Unit: "count"}},
				Evidence: []model.Evidence{model.LogEvidence(model.NoRank, 0, name+" NCCL INFO lines")},
			})
		}
	}
	if !looked {
		p.NotMeasurable("no NCCL_DEBUG or c10d watchdog lines in the job log(s)")
	}
	return nil
}

type hangKey struct {
	pg  string
	seq int64
	op  string
}

// hangs reports one finding per hung collective (process group, sequence
// number, op) and returns how many it reported.
func hangs(p *detectors.Pass, j *model.JobLog, name string) int {
	groups, order, lastWork := groupTimeouts(j)
	for _, k := range order {
		reportHang(p, j, name, k, groups[k], lastWork)
	}
	return len(order)
}

// groupTimeouts groups the watchdog timeout lines by hung collective, in
// order of first appearance, and keeps each rank's latest last-work line.
func groupTimeouts(j *model.JobLog) (map[hangKey][]model.WatchdogEvent, []hangKey, map[int]model.WatchdogEvent) {
	groups := map[hangKey][]model.WatchdogEvent{}
	var order []hangKey
	lastWork := map[int]model.WatchdogEvent{} // rank → latest last-work line
	for _, w := range j.Watchdog {
		switch w.Kind {
		case "timeout":
			k := hangKey{w.PG, w.SeqNum, w.Op}
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], w)
		case "last-work":
			if w.Rank != model.NoRank {
				lastWork[w.Rank] = w
			}
		}
	}
	return groups, order, lastWork
}

// arrivals is where each rank stood at a hung collective, from the ranks'
// last-work lines: completed it, enqueued it (waited), or never arrived;
// startup when the first collective never completed.
type arrivals struct {
	notArrived, completed, waited []int
	startup                       bool
}

func arrivalsAt(k hangKey, evs []model.WatchdogEvent, lastWork map[int]model.WatchdogEvent, startupSeq int64) arrivals {
	waited := map[int]bool{}
	for _, w := range evs {
		if w.Rank != model.NoRank {
			waited[w.Rank] = true
		}
	}
	var a arrivals
	a.startup = k.seq >= 0 && k.seq <= startupSeq
	for r, lw := range lastWork {
		if lw.LastCompleted == 0 && k.seq >= 0 && k.seq <= lw.LastEnqueued {
			a.startup = true
		}
		switch {
		case k.seq < 0:
		case lw.LastCompleted >= k.seq:
			a.completed = append(a.completed, r)
		case lw.LastEnqueued >= k.seq:
			waited[r] = true
		default:
			a.notArrived = append(a.notArrived, r)
		}
	}
	sort.Ints(a.notArrived)
	sort.Ints(a.completed)
	a.waited = keys(waited)
	return a
}

// missingRanks are the ranks below the world size with no line in the log.
func missingRanks(j *model.JobLog) []int {
	var missing []int
	if j.WorldSize > 0 {
		seen := map[int]bool{}
		for _, r := range j.Ranks {
			seen[r] = true
		}
		for r := 0; r < j.WorldSize; r++ {
			if !seen[r] {
				missing = append(missing, r)
			}
		}
	}
	return missing
}

// arrivalSkew is the spread (ms) of the ranks' arrivals, each the report
// time minus how long the work ran; false with fewer than two.
func arrivalSkew(evs []model.WatchdogEvent) (float64, bool) {
	var starts []float64
	for _, w := range evs {
		if w.HasTime && w.RanForMs >= 0 {
			starts = append(starts, float64(w.Time)/1e6-float64(w.RanForMs))
		}
	}
	if len(starts) < 2 {
		return 0, false
	}
	lo, hi := starts[0], starts[0]
	for _, s := range starts {
		lo, hi = min(lo, s), max(hi, s)
	}
	return hi - lo, true
}

// reportHang reports one hung collective: which ranks timed out, which
// completed or waited, which never arrived, and the arrival skew.
func reportHang(p *detectors.Pass, j *model.JobLog, name string, k hangKey, evs []model.WatchdogEvent, lastWork map[int]model.WatchdogEvent) {
	maxList := int(p.Param("max_ranks_listed"))
	w0 := evs[0]
	a := arrivalsAt(k, evs, lastWork, int64(p.Param("startup_seq")))
	missing := missingRanks(j)
	what := opText(w0)
	phase := "mid-run: earlier collectives completed, so one rank stopped arriving"
	if a.startup {
		phase = "at start-up: the first collective never completed, so the ranks could not connect (NCCL init, network, P2P)"
	}
	msg := fmt.Sprintf("%s: %s timed out on %d rank(s) (%s) after %s; %s.", name, what, len(evs), ranksText(ranksOf(evs), maxList),
		msText(w0.TimeoutMs), phase)
	metrics := []model.Metric{
		{Name: "seq", Value: float64(k.seq), Unit: "count"},
		{Name: "numel", Value: float64(w0.NumelIn), Unit: "count"},
		{Name: "timeout_ms", Value: float64(w0.TimeoutMs), Unit: "ms"},
		{Name: "ranks_timed_out", Value: float64(len(evs)), Unit: "count"},
	}
	if len(a.completed) > 0 {
		msg += fmt.Sprintf(" Ranks %s completed SeqNum %d.", ranksText(a.completed, maxList), k.seq)
	}
	if len(a.waited) > 0 && len(lastWork) > 0 {
		msg += fmt.Sprintf(" Ranks %s had enqueued it (waiting for the others).", ranksText(a.waited, maxList))
	}
	switch {
	case len(a.notArrived) > 0:
		msg += fmt.Sprintf(" Rank(s) %s never arrived (last enqueued below %d): the hang is there.", ranksText(a.notArrived, maxList), k.seq)
		metrics = append(metrics, model.Metric{Name: "ranks_not_arrived", Value: float64(len(a.notArrived)), Unit: "count"})
	case len(missing) > 0:
		msg += fmt.Sprintf(" Every rank in the log had arrived; the log shows no line from rank(s) %s of %d: look there.", ranksText(missing, maxList), j.WorldSize)
		metrics = append(metrics, model.Metric{Name: "ranks_not_in_log", Value: float64(len(missing)), Unit: "count"})
	default:
		msg += " Every rank in the log had arrived; the one that did not is not in this log (give every rank's log)."
	}
	if skew, ok := arrivalSkew(evs); ok {
		msg += fmt.Sprintf(" Arrival skew of the ranks that reported it: %.0f ms (from the timeout lines' time minus \"ran for\").", skew)
		metrics = append(metrics, model.Metric{Name: "arrival_skew_ms", Value: skew, Unit: "ms"})
	}
	rec := "Find the rank that never arrived (py-spy dump, TORCH_NCCL_DUMP_ON_TIMEOUT=1 flight recorder) and what it was doing; look for rank-dependent code, uneven data or an exception there."
	if a.startup {
		rec = "The ranks never connected: run with NCCL_DEBUG=INFO, pin NCCL_SOCKET_IFNAME to the real interface, check firewalls/ports, /dev/shm (--ipc=host) and try NCCL_P2P_DISABLE=1 once to rule out a broken P2P path."
	}
	var ev []model.Evidence
	for i, w := range evs {
		if i >= maxList {
			break
		}
		ev = append(ev, model.LogEvidence(w.Rank, w.Time, fmt.Sprintf("%s line %d", name, w.Line)))
	}
	p.Report(model.Finding{
		Severity:       model.SevError,
		Title:          fmt.Sprintf("Collective timeout: %s", what),
		Message:        msg,
		Recommendation: rec,
		Metrics:        metrics,
		Evidence:       ev,
	})
}

// ncclErrors reports the watchdog-stuck and NCCL error lines, one finding per kind.
func ncclErrors(p *detectors.Pass, j *model.JobLog, name string) int {
	kinds := map[string][]model.WatchdogEvent{}
	var order []string
	for _, w := range j.Watchdog {
		switch w.Kind {
		case "stuck", "cuda-error", "system-error", "internal-error", "remote-error":
			if _, ok := kinds[w.Kind]; !ok {
				order = append(order, w.Kind)
			}
			kinds[w.Kind] = append(kinds[w.Kind], w)
		}
	}
	for _, k := range order {
		evs := kinds[k]
		title, rec := "", ""
		switch k {
		case "stuck":
			title = "ProcessGroupNCCL watchdog stuck"
			rec = "A CUDA/NCCL call blocked the watchdog (often another thread holding the GIL in a CUDA call, or a hung GPU); dump stacks (py-spy dump --native) and raise TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC only if the wait is legitimate."
		case "cuda-error":
			title = "NCCL unhandled CUDA error"
			rec = "Rerun with NCCL_DEBUG=INFO to see the failing CUDA call; common causes: out of GPU memory during NCCL buffer allocation, a broken P2P path (try NCCL_P2P_DISABLE=1), driver/NCCL mismatch."
		case "system-error":
			title = "NCCL unhandled system error"
			rec = "A socket, shared-memory or IB verbs call failed: /dev/shm too small in containers (--ipc=host / --shm-size), wrong NCCL_SOCKET_IFNAME, IB devices down or not visible in the container."
		case "remote-error":
			title = "NCCL remote error (a peer failed or exited)"
			rec = "Look at the other ranks' logs for the first failure; this rank only saw its peer disappear."
		default:
			title = "NCCL internal error"
			rec = "Rerun with NCCL_DEBUG=INFO; an internal error usually means mismatched NCCL versions or a corrupted communicator."
		}
		p.Report(model.Finding{
			Severity:       model.SevError,
			Title:          title,
			Message:        fmt.Sprintf("%s: %d line(s), first at line %d: %q.", name, len(evs), evs[0].Line, evs[0].Message),
			Recommendation: rec,
			Metrics:        []model.Metric{{Name: "lines", Value: float64(len(evs)), Unit: "count"}},
			Evidence:       []model.Evidence{model.LogEvidence(evs[0].Rank, evs[0].Time, fmt.Sprintf("%s line %d", name, evs[0].Line))},
		})
	}
	return len(order)
}

// transportChecks reports transport problems from the NCCL lines; it returns
// how many findings it made.
func transportChecks(p *detectors.Pass, j *model.JobLog, name string) int {
	n := 0
	report := func(title, msg, rec string, metrics ...model.Metric) {
		p.Report(model.Finding{Severity: model.SevWarning, Title: title, Message: name + ": " + msg, Recommendation: rec, Metrics: metrics,
			Evidence: []model.Evidence{model.LogEvidence(model.NoRank, 0, name+" NCCL INFO lines")}})
		n++
	}
	var sockHosts, fastHosts []string
	hcas := map[string][]string{}
	for _, h := range j.Hosts {
		sock, fast := false, false
		for _, net := range h.Facts.Networks {
			switch {
			case net == "Socket":
				sock = true
			default:
				fast = true
			}
		}
		if sock && !fast {
			sockHosts = append(sockHosts, h.Host)
		}
		if fast {
			fastHosts = append(fastHosts, h.Host)
		}
		if len(h.HCAs) > 0 {
			hcas[h.Host] = h.HCAs
		}
	}
	if len(sockHosts) > 0 && len(fastHosts) > 0 {
		report("Socket fallback on some hosts", fmt.Sprintf("host(s) %s use TCP sockets (\"Using network Socket\") while %s use IB / a network plugin: every collective runs at the socket hosts' speed.",
			strings.Join(sockHosts, ", "), strings.Join(fastHosts, ", ")),
			"Make the IB / OFI plugin usable on every host (libibverbs and the HCAs visible in the container, aws-ofi-nccl installed), then check \"Using network\" again.",
			model.Metric{Name: "socket_hosts", Value: float64(len(sockHosts)), Unit: "count"})
	}
	if parts := model.HostSets(hcas, " "); len(parts) > 1 {
		report("Hosts use different HCAs", "NET/IB device lists differ between hosts: "+strings.Join(parts, "; ")+". Ranks on different rails may cross switches or use a port that is down.",
			"Set NCCL_IB_HCA identically (e.g. =mlx5_0,mlx5_1) or check with ibstat that the same ports are up on every host.",
			model.Metric{Name: "hca_sets", Value: float64(len(parts)), Unit: "count"})
	}
	var virt []string
	for _, h := range j.Hosts {
		for _, b := range h.Bootstrap {
			if ifn, _, _ := strings.Cut(b, ":"); detectors.VirtualInterface(ifn) {
				virt = append(virt, fmt.Sprintf("%s bootstrap %s", h.Host, ifn))
			}
		}
		for _, s := range h.SocketIfs {
			if detectors.VirtualInterface(s) {
				virt = append(virt, fmt.Sprintf("%s NET/Socket %s", h.Host, s))
			}
		}
	}
	if len(virt) > 0 {
		report("Virtual or loopback interface used by NCCL", "NCCL uses or offers a virtual/loopback/container interface: "+strings.Join(virt, "; ")+". Traffic over it cannot reach other hosts or is slow.",
			"Pin the interface: NCCL_SOCKET_IFNAME=eth0 (or ^virbr0,docker0,lo) and GLOO_SOCKET_IFNAME likewise.",
			model.Metric{Name: "virtual_interfaces", Value: float64(len(virt)), Unit: "count"})
	}
	f := &j.NCCL
	if f.P2PDisabledHint || hasEnv(f.Env, "NCCL_P2P_DISABLE=1") {
		report("P2P disabled", "GPU peer-to-peer is off (NCCL_P2P_DISABLE=1 or intraNodeP2pSupport 0): intra-node traffic goes through host memory (SHM).",
			"Remove NCCL_P2P_DISABLE unless it works around a real fault; otherwise fix the cause (ACS/IOMMU settings, a PCIe switch without P2P, a container without the IPC namespace).")
	}
	ibNoGDR := 0
	for _, tu := range f.TransportUse {
		if strings.HasPrefix(tu.Name, "NET/IB") && !strings.HasSuffix(tu.Name, "GDRDMA") {
			ibNoGDR += tu.Conns
		}
	}
	if f.GDRDisabled > 0 || ibNoGDR > 0 || hasEnv(f.Env, "NCCL_NET_GDR_LEVEL=LOC") || hasEnv(f.Env, "NCCL_NET_GDR_LEVEL=0") {
		report("GPUDirect RDMA off", fmt.Sprintf("%d \"GPU Direct RDMA Disabled\" line(s), %d NET/IB connection(s) without GDRDMA: network traffic is staged through host memory.", f.GDRDisabled, ibNoGDR),
			"Load nvidia-peermem (or use DMA-BUF), check the GPU-NIC PCIe distance (nvidia-smi topo -m) and NCCL_NET_GDR_LEVEL.",
			model.Metric{Name: "ib_conns_without_gdr", Value: float64(ibNoGDR), Unit: "count"})
	}
	if f.WarnLines > 0 {
		ex := f.Warnings
		if len(ex) > 3 {
			ex = ex[:3]
		}
		report("NCCL printed warnings", fmt.Sprintf("%d NCCL WARN line(s), e.g. %q.", f.WarnLines, strings.Join(ex, "; ")),
			"Read the WARN lines in context (NCCL_DEBUG=INFO); they usually name the failing transport or device.",
			model.Metric{Name: "warn_lines", Value: float64(f.WarnLines), Unit: "count"})
	}
	return n
}

func hasEnv(env []string, kv string) bool {
	for _, e := range env {
		if e == kv {
			return true
		}
	}
	return false
}

func opText(w model.WatchdogEvent) string {
	s := w.Op
	if s == "" {
		s = "collective"
	}
	if w.SeqNum >= 0 {
		s += fmt.Sprintf(" SeqNum %d", w.SeqNum)
	}
	if w.NumelIn >= 0 {
		s += fmt.Sprintf(" (%d elements)", w.NumelIn)
	}
	if w.PG != "" {
		s += " in process group " + w.PG
	}
	return s
}

func msText(ms int64) string {
	if ms < 0 {
		return "an unknown timeout"
	}
	return fmt.Sprintf("%.0f s", float64(ms)/1000)
}

func ranksOf(evs []model.WatchdogEvent) []int {
	m := map[int]bool{}
	for _, w := range evs {
		if w.Rank != model.NoRank {
			m[w.Rank] = true
		}
	}
	return keys(m)
}

func keys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

func ranksText(rs []int, maxList int) string {
	if len(rs) == 0 {
		return "unknown"
	}
	var parts []string
	for i, r := range rs {
		if i >= maxList {
			parts = append(parts, fmt.Sprintf("… (%d in all)", len(rs)))
			break
		}
		parts = append(parts, fmt.Sprint(r))
	}
	return strings.Join(parts, ", ")
}

func transportsText(ts []model.NCCLTransport) string {
	if len(ts) == 0 {
		return "none printed"
	}
	var parts []string
	for _, t := range ts {
		parts = append(parts, fmt.Sprintf("%s ×%d", t.Name, t.Conns))
	}
	return strings.Join(parts, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "none printed"
	}
	return s
}
