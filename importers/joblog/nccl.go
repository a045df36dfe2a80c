package joblog

import (
	"bytes"
	"regexp"
	"sort"
	"strconv"

	"github.com/tracedx/tracedx/importers/internal/ncclinfo"
	"github.com/tracedx/tracedx/model"
)

// Caps on what NCCL lines may add, so that huge logs stay in bounded memory.
const (
	maxHosts       = 4096
	maxListed      = ncclinfo.MaxListed // interfaces per list
	maxRanksListed = 1 << 16
)

var (
	reIfAddr = regexp.MustCompile(`(?:\[\d+\])?([\w.:-]+?):([0-9a-fA-F.:%]+)<\d+>`)
	reHCA    = regexp.MustCompile(`\[\d+\]([\w.-]+:\d+)/(\w+)`)
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
		host, _ = ncclinfo.HostOf(toks[n-1])
	}
	return host, dev, kind, body, true
}

// hostAcc accumulates one host's NCCL facts: the shared reader's and the
// host's own (devices, ranks, HCAs, interfaces).
type hostAcc struct {
	h     model.JobHost
	r     *ncclinfo.Reader
	devs  map[int]bool
	ranks map[int]bool
}

// ncclState accumulates the NCCL facts of the whole log and per host.
type ncclState struct {
	all   *hostAcc
	hosts map[string]*hostAcc
}

func newHostAcc(name string) *hostAcc {
	a := &hostAcc{h: model.JobHost{Host: name}, devs: map[int]bool{}, ranks: map[int]bool{}}
	a.r = ncclinfo.New(&a.h.Facts)
	a.r.Ranks = true
	return a
}

// ncclLine parses a line holding "NCCL INFO" / "NCCL WARN"; it returns false
// when there is no such marker.
func (s *ncclState) line(msg []byte, j *model.JobLog) bool {
	host, dev, kind, body, ok := ncclHead(msg)
	if !ok {
		return false
	}
	text := string(bytes.TrimSpace(body)) // once for every accumulator
	accs := []*hostAcc{s.all}
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
		a.apply(kind, text, j)
	}
	return true
}

// apply records one NCCL WARN or INFO message in the host's facts and
// keeps what is the job log's own: ranks, world size, HCAs, interfaces.
func (a *hostAcc) apply(kind, msg string, j *model.JobLog) {
	seen := a.r.Apply(kind, msg)
	a.addRank(seen.Rank)
	if n := seen.NRanks; n > j.WorldSize && n < maxRanksListed {
		j.WorldSize = n
	}
	switch seen.Net {
	case "Bootstrap":
		for _, m := range reIfAddr.FindAllStringSubmatch(seen.Using, -1) {
			a.h.Bootstrap = addStr(a.h.Bootstrap, m[1]+":"+m[2])
		}
	case "Socket":
		for _, m := range reIfAddr.FindAllStringSubmatch(seen.Using, -1) {
			a.h.SocketIfs = addStr(a.h.SocketIfs, m[1])
		}
	case "IB":
		for _, m := range reHCA.FindAllStringSubmatch(seen.Using, -1) {
			a.h.HCAs = addStr(a.h.HCAs, m[1])
		}
		for _, m := range reIfAddr.FindAllStringSubmatch(seen.OOB, -1) {
			a.h.Bootstrap = addStr(a.h.Bootstrap, m[1]+":"+m[2])
		}
	}
}

// version records a bare "NCCL version X" line (no host) for the whole log.
func (s *ncclState) version(v string) { ncclinfo.SetVersion(&s.all.h.Facts, v) }

func (a *hostAcc) addRank(r int) {
	if r >= 0 && r < maxRanksListed && len(a.ranks) < maxListed*16 {
		a.ranks[r] = true
	}
}

func addStr(list []string, s string) []string { return ncclinfo.AddStr(list, s, maxListed) }

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
	a.r.Finish()
	return a.h.Facts
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
