package nccltests

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
)

// ncclMarker returns the index of "NCCL INFO|WARN|TRACE|CALL" in b, or -1.
func ncclMarker(b []byte) int {
	off := 0
	for {
		i := bytes.Index(b[off:], []byte("NCCL "))
		if i < 0 {
			return -1
		}
		i += off
		rest := b[i+5:]
		if (i == 0 || b[i-1] == ' ') && (bytes.HasPrefix(rest, []byte("INFO")) || bytes.HasPrefix(rest, []byte("WARN")) ||
			bytes.HasPrefix(rest, []byte("TRACE")) || bytes.HasPrefix(rest, []byte("CALL"))) {
			return i
		}
		off = i + 5
	}
}

// ncclLineStart finds where the NCCL log line whose marker is at i starts:
// at its "host:pid:tid" token (or the "[dev]" token when the user trimmed the
// host), after any row fragment glued in front of it.
func ncclLineStart(b []byte, i int) int {
	start := i
	j := i
	for steps := 0; steps < 8 && j > 0; steps++ {
		k := j
		for k > 0 && b[k-1] == ' ' {
			k--
		}
		if k == 0 {
			break
		}
		e := k
		for k > 0 && b[k-1] != ' ' {
			k--
		}
		tok := b[k:e]
		if isHostPidTid(tok) {
			start = k
			// "[2026-03-13 22:26:02] host:..." timestamps belong to the line.
			if pre := bytes.TrimRight(b[:start], " "); len(pre) > 0 && pre[len(pre)-1] == ']' {
				if o := bytes.LastIndexByte(pre, '['); o >= 0 && bytes.Count(pre[o:], []byte(":")) == 2 && bytes.IndexByte(pre[o:], '-') > 0 {
					start = o
				}
			}
			return start
		}
		if len(tok) > 2 && tok[0] == '[' && tok[len(tok)-1] == ']' && isInt(tok[1:len(tok)-1]) {
			start = k
		}
		j = k
	}
	return start
}

// lineHost returns the host of an NCCL line's "host:pid:tid" prefix ("" when none).
func lineHost(line, mark []byte) string {
	end := len(line) - len(mark)
	if end <= 0 || end > len(line) {
		return ""
	}
	for _, tok := range bytes.Fields(line[:end]) {
		if isHostPidTid(tok) {
			c2 := bytes.LastIndexByte(tok, ':')
			c1 := bytes.LastIndexByte(tok[:c2], ':')
			h := tok[:c1]
			if k := bytes.LastIndexByte(h, ':'); k >= 0 { // "[1,0]<stdout>:host"
				h = h[k+1:]
			}
			return string(h)
		}
	}
	return ""
}

// isHostPidTid reports "host:pid:tid".
func isHostPidTid(tok []byte) bool {
	c2 := bytes.LastIndexByte(tok, ':')
	if c2 <= 0 || !isInt(tok[c2+1:]) {
		return false
	}
	c1 := bytes.LastIndexByte(tok[:c2], ':')
	return c1 > 0 && isInt(tok[c1+1:c2])
}

var (
	reChannels = regexp.MustCompile(`^(\d+) coll channels, (?:(\d+) collnet channels, )?(?:(\d+) nvls channels, )?(\d+) p2p channels`)
	reRing     = regexp.MustCompile(`^Channel (\d+)/(\d+) :(?:\s+\d+)+\s*$`)
	reNRanks   = regexp.MustCompile(`\bnranks (\d+)`)
	reNNodes   = regexp.MustCompile(`\bnNodes (\d+)`)
	reEnv      = regexp.MustCompile(`^(\S+) set by environment to (.*?)\.?\s*$`)
	reOFI      = regexp.MustCompile(`^NET/OFI Selected [Pp]rovider is (\w+)`)
)

// ncclLine handles one NCCL_DEBUG line; mark starts at "NCCL ".
func (p *parser) ncclLine(n int, line, mark []byte) {
	f := &p.b.NCCL
	p.sawNCCL = true
	kind := mark[5:]
	sp := bytes.IndexByte(kind, ' ')
	var msg []byte
	if sp >= 0 {
		msg = bytes.TrimSpace(kind[sp+1:])
		kind = kind[:sp]
	} else {
		msg = nil
	}
	switch string(kind) {
	case "WARN":
		p.ncclWarn(string(msg))
	case "INFO":
		f.InfoLines++
		p.ncclInfo(line, mark, msg)
	}
}

// ncclWarn counts an NCCL WARN line and keeps its first 300 bytes once.
func (p *parser) ncclWarn(m string) {
	f := &p.b.NCCL
	f.WarnLines++
	if strings.Contains(m, "Failed to open libibverbs") {
		f.NoIBVerbs = true
	}
	if len(m) > 300 {
		m = m[:300]
	}
	if !p.warnSeen[m] && len(f.Warnings) < 200 {
		p.warnSeen[m] = true
		f.Warnings = append(f.Warnings, m)
	}
}

// ncclInfo reads what an NCCL INFO message says about the set-up:
// transports, version, network and its devices, GDR, NVLS, channels, ranks,
// nodes and environment settings.
func (p *parser) ncclInfo(line, mark, msg []byte) {
	f := &p.b.NCCL
	switch {
	case bytes.Contains(msg, []byte(" via ")):
		i := bytes.Index(msg, []byte(" via "))
		name := normTransport(string(msg[i+5:]))
		if len(p.transports) < 256 || p.transports[name] > 0 {
			p.transports[name]++
		}
	case bytes.HasPrefix(msg, []byte("NCCL version ")):
		p.setVersion(string(bytes.TrimSpace(msg[len("NCCL version "):])))
	case bytes.HasPrefix(msg, []byte("Using network ")):
		net := string(bytes.TrimSpace(msg[len("Using network "):]))
		if f.Network == "" {
			f.Network = net
		}
		if !slices.Contains(f.Networks, net) && len(f.Networks) < 32 {
			f.Networks = append(f.Networks, net)
		}
	case bytes.HasPrefix(msg, []byte("NET/IB")) || bytes.HasPrefix(msg, []byte("NET/Socket")) || bytes.HasPrefix(msg, []byte("Bootstrap : Using")):
		p.netDevice(line, mark, string(msg))
	case bytes.HasPrefix(msg, []byte("NET/OFI ")):
		if m := reOFI.FindSubmatch(msg); m != nil && f.OFIProvider == "" {
			f.OFIProvider = string(m[1])
		}
	case bytes.Contains(msg, []byte("GPU Direct RDMA ")):
		p.gdr(string(msg))
	case bytes.Contains(msg, []byte("Failed to open libibverbs")):
		f.NoIBVerbs = true
	case bytes.HasPrefix(msg, []byte("NVLS multicast support is ")):
		if bytes.Contains(msg, []byte("is not available")) {
			if f.NVLSSupport != 1 {
				f.NVLSSupport = 0
			}
		} else {
			f.NVLSSupport = 1
		}
	case bytes.HasPrefix(msg, []byte("NVLS Head")):
		f.NVLSHeads++
	case bytes.Contains(msg, []byte(" coll channels, ")):
		if m := reChannels.FindSubmatch(msg); m != nil {
			f.CollChannels = max(f.CollChannels, atoi(m[1]))
			if len(m[2]) > 0 {
				f.CollNetChannels = max(f.CollNetChannels, atoi(m[2]))
			}
			if len(m[3]) > 0 {
				f.NVLSChannels = max(f.NVLSChannels, atoi(m[3]))
			}
			f.P2PChannels = max(f.P2PChannels, atoi(m[4]))
		}
	case bytes.HasPrefix(msg, []byte("Channel ")):
		if m := reRing.FindSubmatch(msg); m != nil {
			f.RingChannels = max(f.RingChannels, atoi(m[2]))
		}
	case bytes.HasSuffix(msg, []byte("Init COMPLETE")):
		f.InitComplete++
		if m := reNRanks.FindSubmatch(msg); m != nil {
			f.InitRanks = max(f.InitRanks, atoi(m[1]))
		}
	case bytes.Contains(msg, []byte(" nNodes ")):
		if m := reNNodes.FindSubmatch(msg); m != nil {
			f.Nodes = max(f.Nodes, atoi(m[1]))
		}
	case bytes.Contains(msg, []byte(" set by environment to ")):
		if m := reEnv.FindSubmatch(msg); m != nil {
			e := string(m[1]) + "=" + string(m[2])
			if !slices.Contains(f.Env, e) && len(f.Env) < 128 {
				f.Env = append(f.Env, e)
			}
		}
	case bytes.HasPrefix(msg, []byte("Check P2P Type intraNodeP2pSupport 0")):
		f.P2PDisabledHint = true
	}
}

// netDevice records the device of a "NET/IB : Using", "NET/Socket : Using"
// or "Bootstrap : Using" line, per host when the line names one.
func (p *parser) netDevice(line, mark []byte, s string) {
	f := &p.b.NCCL
	i := strings.Index(s, "Using ")
	if i <= 0 || i >= 14 {
		if strings.Contains(s, "GPU Direct RDMA") {
			p.gdr(s)
		}
		return
	}
	dev := strings.TrimSpace(s[i+len("Using "):])
	if j := strings.Index(dev, "; OOB"); j >= 0 {
		dev = strings.TrimSpace(dev[:j])
	}
	tr := "IB"
	switch {
	case strings.HasPrefix(s, "NET/Socket"):
		tr = "Socket"
	case strings.HasPrefix(s, "Bootstrap"):
		tr = "Bootstrap"
	}
	d := tr + ": " + dev
	if !slices.Contains(f.NetDevices, d) && len(f.NetDevices) < 32 {
		f.NetDevices = append(f.NetDevices, d)
	}
	if h := lineHost(line, mark); h != "" && tr != "Bootstrap" {
		hd := h + " " + d
		if !slices.Contains(f.HostNetDevices, hd) && len(f.HostNetDevices) < 256 {
			f.HostNetDevices = append(f.HostNetDevices, hd)
		}
	}
}

func (p *parser) gdr(s string) {
	if strings.Contains(s, "GPU Direct RDMA Enabled") {
		p.b.NCCL.GDREnabled++
	} else if strings.Contains(s, "GPU Direct RDMA Disabled") {
		p.b.NCCL.GDRDisabled++
	}
}

// normTransport names a "via X" transport without its device index, PXN
// proxy rank and flags other than GDRDMA: "NET/IB/1/GDRDMA" → "NET/IB/GDRDMA",
// "NET/Socket/0" → "NET/Socket", "direct shared memory" → "SHM/direct".
func normTransport(s string) string {
	s = strings.TrimSpace(s)
	switch {
	case strings.HasPrefix(s, "NET/") || strings.HasPrefix(s, "COLLNET/"):
		parts := strings.Split(s, "/")
		out := parts[0]
		if len(parts) > 1 {
			out += "/" + parts[1]
		}
		for _, q := range parts[2:] {
			if strings.HasPrefix(q, "GDRDMA") {
				out += "/GDRDMA"
			}
		}
		return out
	case s == "direct shared memory":
		return "SHM/direct"
	case strings.HasPrefix(s, "P2P/indirect"):
		return "P2P/indirect"
	}
	if len(s) > 64 {
		s = s[:64]
	}
	return s
}
