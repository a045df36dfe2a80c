// Package ncclinfo reads NCCL_DEBUG=INFO/WARN messages into model.NCCLFacts.
// It is the one reader of these messages for every importer (nccl-tests
// logs, job logs); each importer finds the line head itself ("host:pid:tid
// [dev] NCCL INFO") and keeps what is its own (per-host devices, ranks, world
// size) from the Seen a message returns.
//
// NCCL message grammar (NCCL 2.x debug lines, as of 2.18–2.27):
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
//	comm 0x.. rank 0 nRanks 24 nNodes 3 localRanks 8 localRank 0 MNNVL 0 (2.19+)
//	GPU Direct RDMA Enabled|Disabled for HCA 0 'mlx5_0'
//	X set by environment to Y
//	N coll channels, [M collnet channels, ][K nvls channels, ]P p2p channels, Q p2p channels per peer
package ncclinfo

import (
	"bytes"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/tracedx/tracedx/model"
)

// Caps on what messages may add, so that huge logs stay in bounded memory.
const (
	MaxListed     = 64 // networks, devices per list
	maxEnv        = 128
	maxTransports = 256
	maxWarnings   = 200
	maxWarnLen    = 300
)

var (
	reConn     = regexp.MustCompile(`^Channel \d+/\d+ : (\d+)\[(\d+)\] -> (\d+)\[(\d+)\](?: \[\w+\])? via (.+)$`)
	reRing     = regexp.MustCompile(`^Channel \d+/(\d+) :(?:\s+\d+)+\s*$`)
	reTreeRank = regexp.MustCompile(`->(\d+)->`)
	reRingOld  = regexp.MustCompile(`^Ring \d+ : \d+ -> (\d+) -> \d+`)
	reCommRank = regexp.MustCompile(`\brank (\d+) n[Rr]anks (\d+)\b`)
	reNRanks   = regexp.MustCompile(`\bn[Rr]anks (\d+)`)
	reNodes    = regexp.MustCompile(`\bnNodes (\d+)`)
	reEnv      = regexp.MustCompile(`^(\S+) set by environment to (.*?)\.?\s*$`)
	reOFI      = regexp.MustCompile(`(?i)^NET/OFI Selected provider is (\w+)`)
	reChannels = regexp.MustCompile(`^(\d+) coll channels, (?:(\d+) collnet channels, )?(?:(\d+) nvls channels, )?(\d+) p2p channels`)
)

// Seen is what one message says that an importer may keep on its own.
type Seen struct {
	Rank   int    // a rank the message shows (connection, tree, ring, communicator); -1 none
	NRanks int    // communicator size of a "rank R nranks N" line; 0 none
	Net    string // "IB", "Socket" or "Bootstrap" for a "… : Using" device line
	Device string // the NetDevices entry of that line ("IB: [0]mlx5_0:1/IB")
	Using  string // the devices after "Using " (before "; OOB")
	OOB    string // the "; OOB …" tail of a NET/IB line
}

// Reader accumulates the facts of one scope (a log, a host) into F.
type Reader struct {
	F      *model.NCCLFacts
	Ranks  bool // fill Seen.Rank of connection lines (a regexp per line: off unless wanted)
	warned map[string]bool
	tr     map[string]int
}

// New returns a reader that writes into f, marking NVLS support and the
// channel counts of f as not (yet) seen.
func New(f *model.NCCLFacts) *Reader {
	f.NVLSSupport, f.CollChannels, f.CollNetChannels, f.NVLSChannels, f.P2PChannels, f.RingChannels = -1, -1, -1, -1, -1, -1
	return &Reader{F: f, warned: map[string]bool{}, tr: map[string]int{}}
}

// Apply reads one message of kind "WARN" or "INFO" (other kinds are
// ignored); msg is the text after the kind, trimmed.
func (r *Reader) Apply(kind, msg string) Seen {
	switch kind {
	case "WARN":
		r.warn(msg)
	case "INFO":
		r.F.InfoLines++
		return r.info(msg)
	}
	return Seen{Rank: -1}
}

// warn counts a WARN line and keeps its first 300 bytes once.
func (r *Reader) warn(w string) {
	f := r.F
	f.WarnLines++
	if strings.Contains(w, "Failed to open libibverbs") {
		f.NoIBVerbs = true
	}
	if len(w) > maxWarnLen {
		w = w[:maxWarnLen]
	}
	if !r.warned[w] && len(f.Warnings) < maxWarnings {
		r.warned[w] = true
		f.Warnings = append(f.Warnings, w)
	}
}

// info reads what an INFO message says about the set-up.
func (r *Reader) info(s string) Seen {
	f := r.F
	seen := Seen{Rank: -1}
	switch {
	case strings.Contains(s, " via "):
		r.AddTransport(transportName(s[strings.Index(s, " via ")+5:]), 1)
		if r.Ranks {
			if m := reConn.FindStringSubmatch(s); m != nil {
				seen.Rank = atoi(m[1])
			}
		}
	case strings.HasPrefix(s, "Channel "):
		if m := reRing.FindStringSubmatch(s); m != nil {
			f.RingChannels = max(f.RingChannels, atoi(m[1]))
		}
	case strings.HasPrefix(s, "NCCL version "):
		SetVersion(f, s[len("NCCL version "):])
	case strings.HasPrefix(s, "NET/IB") || strings.HasPrefix(s, "NET/Socket") || strings.HasPrefix(s, "Bootstrap"):
		r.netDevice(s, &seen)
	case strings.HasPrefix(s, "NET/OFI"):
		if m := reOFI.FindStringSubmatch(s); m != nil && f.OFIProvider == "" {
			f.OFIProvider = m[1]
		}
	case strings.HasPrefix(s, "Using network "):
		n := strings.TrimSpace(s[len("Using network "):])
		if f.Network == "" {
			f.Network = n
		}
		f.Networks = AddStr(f.Networks, n, MaxListed)
	case strings.Contains(s, "GPU Direct RDMA "):
		r.gdr(s)
	case strings.Contains(s, "Failed to open libibverbs"):
		f.NoIBVerbs = true
	case strings.HasPrefix(s, "Trees "):
		if m := reTreeRank.FindStringSubmatch(s); m != nil {
			seen.Rank = atoi(m[1])
		}
	case strings.HasPrefix(s, "Ring "):
		if m := reRingOld.FindStringSubmatch(s); m != nil {
			seen.Rank = atoi(m[1])
		}
	case strings.Contains(s, " nranks ") || strings.Contains(s, " nRanks ") || strings.HasSuffix(s, "Init COMPLETE") || strings.Contains(s, " nNodes "):
		r.comm(s, &seen)
	case strings.Contains(s, " set by environment to "):
		if m := reEnv.FindStringSubmatch(s); m != nil {
			f.Env = AddStr(f.Env, m[1]+"="+m[2], maxEnv)
			if m[1] == "NCCL_P2P_DISABLE" && m[2] == "1" {
				f.P2PDisabledHint = true
			}
		}
	case strings.HasPrefix(s, "Check P2P Type intraNodeP2pSupport 0"):
		f.P2PDisabledHint = true
	case strings.Contains(s, " coll channels, "):
		r.channels(s)
	case strings.HasPrefix(s, "NVLS multicast support is "):
		if strings.Contains(s, "not available") {
			if f.NVLSSupport != 1 {
				f.NVLSSupport = 0
			}
		} else {
			f.NVLSSupport = 1
		}
	case strings.HasPrefix(s, "NVLS Head"):
		f.NVLSHeads++
	}
	return seen
}

func (r *Reader) channels(s string) {
	f := r.F
	if m := reChannels.FindStringSubmatch(s); m != nil {
		f.CollChannels = max(f.CollChannels, atoi(m[1]))
		if m[2] != "" {
			f.CollNetChannels = max(f.CollNetChannels, atoi(m[2]))
		}
		if m[3] != "" {
			f.NVLSChannels = max(f.NVLSChannels, atoi(m[3]))
		}
		f.P2PChannels = max(f.P2PChannels, atoi(m[4]))
	}
}

// comm reads a communicator line: "rank R nranks N", "Init COMPLETE",
// "nNodes K".
func (r *Reader) comm(s string, seen *Seen) {
	f := r.F
	if m := reCommRank.FindStringSubmatch(s); m != nil {
		seen.Rank, seen.NRanks = atoi(m[1]), atoi(m[2])
	}
	if strings.Contains(s, "Init COMPLETE") {
		f.InitComplete++
		if m := reNRanks.FindStringSubmatch(s); m != nil {
			f.InitRanks = max(f.InitRanks, atoi(m[1]))
		}
	}
	if m := reNodes.FindStringSubmatch(s); m != nil {
		f.Nodes = max(f.Nodes, atoi(m[1]))
	}
}

// netDevice records the devices of a "NET/IB : Using", "NET/Socket : Using"
// or "Bootstrap : Using" line.
func (r *Reader) netDevice(s string, seen *Seen) {
	i := strings.Index(s, "Using ")
	if i <= 0 || i >= 14 {
		if strings.Contains(s, "GPU Direct RDMA") {
			r.gdr(s)
		}
		return
	}
	dev := s[i+len("Using "):]
	if k := strings.Index(dev, "; OOB"); k >= 0 {
		dev, seen.OOB = dev[:k], dev[k:]
	}
	seen.Using = dev
	seen.Net = "IB"
	switch {
	case strings.HasPrefix(s, "NET/Socket"):
		seen.Net = "Socket"
	case strings.HasPrefix(s, "Bootstrap"):
		seen.Net = "Bootstrap"
	}
	seen.Device = seen.Net + ": " + strings.TrimSpace(dev)
	r.F.NetDevices = AddStr(r.F.NetDevices, seen.Device, MaxListed)
}

func (r *Reader) gdr(s string) {
	switch {
	case strings.Contains(s, "GPU Direct RDMA Enabled"):
		r.F.GDREnabled++
	case strings.Contains(s, "GPU Direct RDMA Disabled"):
		r.F.GDRDisabled++
	}
}

// AddTransport counts n connections over the named transport.
func (r *Reader) AddTransport(name string, n int) {
	if _, ok := r.tr[name]; ok || len(r.tr) < maxTransports {
		r.tr[name] += n
	}
}

// Finish writes the transports, sorted by name, and sorts the environment.
func (r *Reader) Finish() {
	f := r.F
	names := make([]string, 0, len(r.tr))
	for n := range r.tr {
		names = append(names, n)
	}
	sort.Strings(names)
	f.Transports = names
	f.TransportUse = nil
	for _, n := range names {
		f.TransportUse = append(f.TransportUse, model.NCCLTransport{Name: n, Conns: r.tr[n]})
	}
	sort.Strings(f.Env)
}

// SetVersion records the first version seen, up to its first space.
func SetVersion(f *model.NCCLFacts, v string) {
	if f.Version != "" {
		return
	}
	v = strings.TrimSpace(v)
	if i := strings.IndexByte(v, ' '); i > 0 {
		v = v[:i]
	}
	f.Version = v
}

// transportName drops what varies per connection from a "via" transport:
// the NIC index and PXN proxy of NET/IB/0(1)/GDRDMA, keeping GDRDMA.
// "NET/IB/1/GDRDMA" → "NET/IB/GDRDMA", "NET/Socket/0" → "NET/Socket",
// "direct shared memory" → "SHM/direct", "P2P/indirect/…" → "P2P/indirect".
func transportName(via string) string {
	via = strings.TrimSpace(via)
	switch {
	case strings.HasPrefix(via, "NET/") || strings.HasPrefix(via, "COLLNET/"):
		parts := strings.Split(via, "/")
		name := parts[0] + "/" + parts[1]
		for _, q := range parts[2:] {
			if strings.HasPrefix(q, "GDRDMA") {
				return name + "/GDRDMA"
			}
		}
		return name
	case via == "direct shared memory":
		return "SHM/direct"
	case strings.HasPrefix(via, "P2P/indirect"):
		return "P2P/indirect"
	}
	if len(via) > 64 {
		via = via[:64]
	}
	return via
}

// HostOf returns the host of a "host:pid:tid" token, the head of NCCL debug
// lines, without a launcher tag glued in front ("[rank0]:host",
// "[1,0]<stdout>:host"); ok is false when tok is no such token.
func HostOf(tok []byte) (host string, ok bool) {
	c2 := bytes.LastIndexByte(tok, ':')
	if c2 <= 0 || !isDigits(tok[c2+1:]) {
		return "", false
	}
	c1 := bytes.LastIndexByte(tok[:c2], ':')
	if c1 <= 0 || !isDigits(tok[c1+1:c2]) {
		return "", false
	}
	h := tok[:c1]
	if j := bytes.LastIndexAny(h, "]:"); j >= 0 {
		h = h[j+1:]
	}
	return string(h), true
}

// isDigits reports whether b is a non-empty run of decimal digits.
func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// AddStr appends s to list once, while list has fewer than limit entries.
func AddStr(list []string, s string, limit int) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	if len(list) >= limit {
		return list
	}
	return append(list, s)
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}
