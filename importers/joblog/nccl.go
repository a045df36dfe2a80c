package joblog

import (
	"bytes"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/tracedx/tracedx/model"
)

// Caps on what NCCL lines may add, so that huge logs stay in bounded memory.
const (
	maxHosts       = 4096
	maxListed      = 64  // interfaces, devices, env settings per list
	maxTransports  = 128 // distinct transport names
	maxNCCLWarns   = 200
	maxRanksListed = 1 << 16
)

// NCCL message grammar (NCCL 2.x src/ debug lines, as of 2.18–2.27):
//
//	host:pid:tid [dev] NCCL INFO|WARN <message>
//
// The messages read here (format strings from init.cc, bootstrap.cc,
// transport/net_ib.cc, net_socket.cc, transport.cc, graph/connect.cc):
//
//	NCCL version 2.21.5+cuda12.4
//	Bootstrap : Using eth0:10.0.0.1<0>              (2.23+: "Bootstrap: Using")
//	NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>
//	NET/Socket : Using [0]eth0:10.0.0.1<0> [1]virbr0:192.168.122.1<0>
//	NET/OFI Selected Provider is efa (aws-ofi-nccl)
//	Using network IB | Socket | AWS Libfabric | <plugin name>
//	Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read     (also [send]/[receive] via NET/IB/0/GDRDMA)
//	Channel 00/04 :    0   1   2   3                  (ring order)
//	Trees [0] 1/-1/-1->0->-1 [1] ...                  (this rank between "->" and "->")
//	comm 0x.. rank 0 nranks 4 cudaDev 0 ... - Init COMPLETE
//	GPU Direct RDMA Enabled|Disabled for HCA 0 'mlx5_0'
//	X set by environment to Y
//	N coll channels, [M collnet channels, ][K nvls channels, ]P p2p channels, Q p2p channels per peer
var (
	reIfAddr     = regexp.MustCompile(`(?:\[\d+\])?([\w.:-]+?):([0-9a-fA-F.:%]+)<\d+>`)
	reHCA        = regexp.MustCompile(`\[\d+\]([\w.-]+:\d+)/(\w+)`)
	reConn       = regexp.MustCompile(`^Channel \d+/\d+ : (\d+)\[(\d+)\] -> (\d+)\[(\d+)\](?: \[\w+\])? via (.+)$`)
	reRingOrder  = regexp.MustCompile(`^Channel \d+/(\d+) :(?:\s+\d+)+\s*$`)
	reTreeRank   = regexp.MustCompile(`->(\d+)->`)
	reRingOld    = regexp.MustCompile(`^Ring \d+ : \d+ -> (\d+) -> \d+`)
	reCommRank   = regexp.MustCompile(`\brank (\d+) nranks (\d+)\b`)
	reNodes      = regexp.MustCompile(`\bnNodes (\d+)`)
	reEnvSet     = regexp.MustCompile(`^(\S+) set by environment to (.*?)\.?\s*$`)
	reOFIProv    = regexp.MustCompile(`(?i)^NET/OFI Selected provider is (\w+)`)
	reChanCounts = regexp.MustCompile(`^(\d+) coll channels, (?:(\d+) collnet channels, )?(?:(\d+) nvls channels, )?(\d+) p2p channels`)
)

// ncclHead splits "host:pid:tid [dev] [file.cc:NN ]NCCL INFO|WARN body" (the
// host and device may be missing: users trim them). ok is false when the
// line has no NCCL INFO / WARN marker.
func ncclHead(msg []byte) (host string, dev int, kind string, body []byte, ok bool) {
	i := -1
	for off := 0; ; {
		k := bytes.Index(msg[off:], []byte("NCCL "))
		if k < 0 {
			return "", -1, "", nil, false
		}
		k += off
		rest := msg[k+5:]
		if (k == 0 || msg[k-1] == ' ' || msg[k-1] == ']') && (bytes.HasPrefix(rest, []byte("INFO")) || bytes.HasPrefix(rest, []byte("WARN"))) &&
			(len(rest) == 4 || rest[4] == ' ') {
			i = k
			kind = string(rest[:4])
			body = rest[4:]
			break
		}
		off = k + 5
	}
	dev = -1
	toks := bytes.Fields(msg[:i])
	n := len(toks)
	if n > 0 && bytes.IndexByte(toks[n-1], '[') < 0 && bytes.IndexByte(toks[n-1], '.') > 0 && bytes.IndexByte(toks[n-1], ':') > 0 {
		n-- // "misc/ibvwrap.cc:63" source location of WARN lines
	}
	if n > 0 {
		if t := toks[n-1]; len(t) > 2 && t[0] == '[' && t[len(t)-1] == ']' && isDigits(t[1:len(t)-1]) {
			dev = atoi(t[1 : len(t)-1])
			n--
		}
	}
	if n > 0 {
		t := toks[n-1]
		if c2 := bytes.LastIndexByte(t, ':'); c2 > 0 && isDigits(t[c2+1:]) {
			if c1 := bytes.LastIndexByte(t[:c2], ':'); c1 > 0 && isDigits(t[c1+1:c2]) {
				h := t[:c1]
				if j := bytes.LastIndexAny(h, "]:"); j >= 0 {
					h = h[j+1:] // "[rank0]:host" glued by a launcher
				}
				host = string(h)
			}
		}
	}
	return host, dev, kind, body, true
}

// hostAcc accumulates one host's NCCL facts.
type hostAcc struct {
	h      model.JobHost
	devs   map[int]bool
	ranks  map[int]bool
	tr     map[string]int
	warned map[string]bool
}

// ncclState accumulates the NCCL facts of the whole log and per host.
type ncclState struct {
	all   hostAcc
	hosts map[string]*hostAcc
}

func newHostAcc(name string) *hostAcc {
	a := &hostAcc{h: model.JobHost{Host: name}, devs: map[int]bool{}, ranks: map[int]bool{}, tr: map[string]int{}, warned: map[string]bool{}}
	resetFacts(&a.h.Facts)
	return a
}

func resetFacts(f *model.NCCLFacts) {
	f.NVLSSupport, f.CollChannels, f.CollNetChannels, f.NVLSChannels, f.P2PChannels, f.RingChannels = -1, -1, -1, -1, -1, -1
}

// ncclLine parses a line holding "NCCL INFO" / "NCCL WARN"; it returns false
// when there is no such marker.
func (s *ncclState) line(msg []byte, j *model.JobLog) bool {
	host, dev, kind, body, ok := ncclHead(msg)
	if !ok {
		return false
	}
	body = bytes.TrimSpace(body)
	accs := []*hostAcc{&s.all}
	if host != "" {
		a := s.hosts[host]
		if a == nil && len(s.hosts) < maxHosts {
			a = newHostAcc(host)
			s.hosts[host] = a
		}
		if a != nil {
			accs = append(accs, a)
			if dev >= 0 && len(a.devs) < maxListed {
				a.devs[dev] = true
			}
		}
	}
	for _, a := range accs {
		a.apply(kind, body, j)
	}
	return true
}

// apply records one NCCL WARN or INFO message in the host's facts.
func (a *hostAcc) apply(kind string, msg []byte, j *model.JobLog) {
	if kind == "WARN" {
		a.warn(string(msg))
		return
	}
	a.h.Facts.InfoLines++
	a.info(string(msg), j)
}

// warn counts a WARN line and keeps its first 300 bytes once.
func (a *hostAcc) warn(w string) {
	f := &a.h.Facts
	f.WarnLines++
	if len(w) > 300 {
		w = w[:300]
	}
	if strings.Contains(w, "libibverbs") {
		f.NoIBVerbs = true
	}
	if !a.warned[w] && len(f.Warnings) < maxNCCLWarns {
		a.warned[w] = true
		f.Warnings = append(f.Warnings, w)
	}
}

// info reads what an INFO message says about the set-up: connections and
// their transports, rings and trees, version, network devices and
// interfaces, GDR, ranks and nodes, environment, channels, NVLS.
func (a *hostAcc) info(s string, j *model.JobLog) {
	f := &a.h.Facts
	switch {
	case strings.HasPrefix(s, "Channel ") && strings.Contains(s, " via "):
		if m := reConn.FindStringSubmatch(s); m != nil {
			a.addRank(atoiS(m[1]))
			a.addTransport(transportName(m[5]))
		} else {
			a.addTransport(transportName(s[strings.Index(s, " via ")+5:]))
		}
	case strings.HasPrefix(s, "Channel "):
		if m := reRingOrder.FindStringSubmatch(s); m != nil {
			f.RingChannels = max(f.RingChannels, atoiS(m[1]))
		}
	case strings.HasPrefix(s, "NCCL version "):
		setVersion(f, s[len("NCCL version "):])
	case strings.HasPrefix(s, "Bootstrap"):
		if i := strings.Index(s, "Using "); i > 0 {
			for _, m := range reIfAddr.FindAllStringSubmatch(s[i:], -1) {
				a.h.Bootstrap = addStr(a.h.Bootstrap, m[1]+":"+m[2])
			}
		}
	case strings.HasPrefix(s, "NET/IB"):
		a.netIB(s)
	case strings.HasPrefix(s, "NET/Socket"):
		if i := strings.Index(s, "Using "); i > 0 {
			for _, m := range reIfAddr.FindAllStringSubmatch(s[i:], -1) {
				a.h.SocketIfs = addStr(a.h.SocketIfs, m[1])
			}
			f.NetDevices = addStr(f.NetDevices, "Socket: "+strings.TrimSpace(s[i+len("Using "):]))
		}
	case strings.HasPrefix(s, "NET/OFI"):
		if m := reOFIProv.FindStringSubmatch(s); m != nil && f.OFIProvider == "" {
			f.OFIProvider = m[1]
		}
	case strings.HasPrefix(s, "Using network "):
		n := strings.TrimSpace(s[len("Using network "):])
		if f.Network == "" {
			f.Network = n
		}
		f.Networks = addStr(f.Networks, n)
	case strings.Contains(s, "GPU Direct RDMA "):
		a.gdr(s)
	case strings.Contains(s, "libibverbs"):
		f.NoIBVerbs = true
	case strings.HasPrefix(s, "Trees "):
		if m := reTreeRank.FindStringSubmatch(s); m != nil {
			a.addRank(atoiS(m[1]))
		}
	case strings.HasPrefix(s, "Ring "):
		if m := reRingOld.FindStringSubmatch(s); m != nil {
			a.addRank(atoiS(m[1]))
		}
	case strings.Contains(s, " nranks "):
		a.commRank(s, j)
	case strings.Contains(s, " set by environment to "):
		if m := reEnvSet.FindStringSubmatch(s); m != nil {
			f.Env = addStr(f.Env, m[1]+"="+m[2])
			if m[1] == "NCCL_P2P_DISABLE" && m[2] == "1" {
				f.P2PDisabledHint = true
			}
		}
	case strings.HasPrefix(s, "Check P2P Type intraNodeP2pSupport 0"):
		f.P2PDisabledHint = true
	case strings.Contains(s, " coll channels, "):
		if m := reChanCounts.FindStringSubmatch(s); m != nil {
			f.CollChannels = max(f.CollChannels, atoiS(m[1]))
			if m[2] != "" {
				f.CollNetChannels = max(f.CollNetChannels, atoiS(m[2]))
			}
			if m[3] != "" {
				f.NVLSChannels = max(f.NVLSChannels, atoiS(m[3]))
			}
			f.P2PChannels = max(f.P2PChannels, atoiS(m[4]))
		}
	case strings.HasPrefix(s, "NVLS multicast support is "):
		if strings.Contains(s, "not available") {
			if f.NVLSSupport != 1 {
				f.NVLSSupport = 0
			}
		} else {
			f.NVLSSupport = 1
		}
	}
}

// netIB records the HCAs of a "NET/IB : Using" line and the bootstrap
// interface after its "; OOB".
func (a *hostAcc) netIB(s string) {
	i := strings.Index(s, "Using ")
	if i <= 0 {
		if strings.Contains(s, "GPU Direct RDMA") {
			a.gdr(s)
		}
		return
	}
	dev := s[i+len("Using "):]
	oob := ""
	if k := strings.Index(dev, "; OOB"); k >= 0 {
		dev, oob = dev[:k], dev[k:]
	}
	for _, m := range reHCA.FindAllStringSubmatch(dev, -1) {
		a.h.HCAs = addStr(a.h.HCAs, m[1])
	}
	a.h.Facts.NetDevices = addStr(a.h.Facts.NetDevices, "IB: "+strings.TrimSpace(dev))
	for _, m := range reIfAddr.FindAllStringSubmatch(oob, -1) {
		a.h.Bootstrap = addStr(a.h.Bootstrap, m[1]+":"+m[2])
	}
}

// commRank reads a communicator line with "rank R nranks N" (and "Init
// COMPLETE", "nNodes"): the rank is seen, N may set the job's world size.
func (a *hostAcc) commRank(s string, j *model.JobLog) {
	f := &a.h.Facts
	if m := reCommRank.FindStringSubmatch(s); m != nil {
		a.addRank(atoiS(m[1]))
		n := atoiS(m[2])
		if strings.Contains(s, "Init COMPLETE") {
			f.InitComplete++
			f.InitRanks = max(f.InitRanks, n)
		}
		if n > j.WorldSize && n < maxRanksListed {
			j.WorldSize = n
		}
	}
	if m := reNodes.FindStringSubmatch(s); m != nil {
		f.Nodes = max(f.Nodes, atoiS(m[1]))
	}
}

// version records a bare "NCCL version X" line (no host) for the whole log.
func (s *ncclState) version(v string) { setVersion(&s.all.h.Facts, v) }

func setVersion(f *model.NCCLFacts, v string) {
	if f.Version != "" {
		return
	}
	v = strings.TrimSpace(v)
	if i := strings.IndexByte(v, ' '); i > 0 {
		v = v[:i]
	}
	f.Version = v
}

func (a *hostAcc) gdr(s string) {
	switch {
	case strings.Contains(s, "GPU Direct RDMA Enabled"):
		a.h.Facts.GDREnabled++
	case strings.Contains(s, "GPU Direct RDMA Disabled"):
		a.h.Facts.GDRDisabled++
	}
}

func (a *hostAcc) addRank(r int) {
	if r >= 0 && r < maxRanksListed && len(a.ranks) < maxListed*16 {
		a.ranks[r] = true
	}
}

func (a *hostAcc) addTransport(name string) {
	if _, ok := a.tr[name]; ok || len(a.tr) < maxTransports {
		a.tr[name]++
	}
}

// transportName drops what varies per connection from a "via" transport:
// the NIC index and PXN proxy of NET/IB/0(1)/GDRDMA, keeping GDRDMA.
// "NET/IB/1/GDRDMA" → "NET/IB/GDRDMA", "NET/Socket/0" → "NET/Socket".
func transportName(via string) string {
	via = strings.TrimSpace(via)
	if !strings.HasPrefix(via, "NET/") && !strings.HasPrefix(via, "COLLNET/") {
		if via == "direct shared memory" {
			return "SHM/direct"
		}
		if len(via) > 64 {
			via = via[:64]
		}
		return via
	}
	parts := strings.Split(via, "/")
	name := parts[0] + "/" + parts[1]
	if strings.Contains(via, "/GDRDMA") {
		name += "/GDRDMA"
	}
	return name
}

func addStr(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	if len(list) >= maxListed {
		return list
	}
	return append(list, s)
}

// finish turns the accumulators into the JobLog's facts, sorted.
func (s *ncclState) finish(j *model.JobLog) {
	j.NCCL = s.all.facts()
	names := make([]string, 0, len(s.hosts))
	for n := range s.hosts {
		names = append(names, n)
	}
	sort.Strings(names)
	ranks := map[int]bool{}
	for _, n := range names {
		a := s.hosts[n]
		h := a.h
		h.Facts = a.facts()
		h.Devices = keys(a.devs)
		h.Ranks = keys(a.ranks)
		for r := range a.ranks {
			ranks[r] = true
		}
		j.Hosts = append(j.Hosts, h)
	}
	for r := range s.all.ranks {
		ranks[r] = true
	}
	for _, r := range j.Ranks {
		ranks[r] = true
	}
	j.Ranks = keys(ranks)
}

func (a *hostAcc) facts() model.NCCLFacts {
	f := a.h.Facts
	names := make([]string, 0, len(a.tr))
	for n := range a.tr {
		names = append(names, n)
	}
	sort.Strings(names)
	f.Transports = names
	for _, n := range names {
		f.TransportUse = append(f.TransportUse, model.NCCLTransport{Name: n, Conns: a.tr[n]})
	}
	sort.Strings(f.Env)
	return f
}

func keys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

func atoiS(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}
