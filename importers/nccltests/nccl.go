package nccltests

import (
	"bytes"

	"github.com/tracedx/tracedx/importers/internal/ncclinfo"
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
		if h, ok := ncclinfo.HostOf(tok); ok {
			return h
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

// ncclLine handles one NCCL_DEBUG line; mark starts at "NCCL ". The shared
// reader takes the message; the host's NET devices are this importer's own.
func (p *parser) ncclLine(n int, line, mark []byte) {
	p.sawNCCL = true
	kind := mark[5:]
	var msg []byte
	if sp := bytes.IndexByte(kind, ' '); sp >= 0 {
		msg = bytes.TrimSpace(kind[sp+1:])
		kind = kind[:sp]
	}
	seen := p.nccl.Apply(string(kind), string(msg))
	if seen.Device == "" || seen.Net == "Bootstrap" {
		return
	}
	if h := lineHost(line, mark); h != "" {
		f := &p.b.NCCL
		f.HostNetDevices = ncclinfo.AddStr(f.HostNetDevices, h+" "+seen.Device, maxHostNetDevices)
	}
}

// maxHostNetDevices caps the per-host NET device list.
const maxHostNetDevices = 256
