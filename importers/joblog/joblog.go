package joblog

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/model"
)

// Caps that bound memory on huge logs.
const (
	maxStats  = 1 << 16 // stats / spec samples kept before halving
	maxEvents = 10000   // events and watchdog messages kept
	maxJoin   = 8       // physical lines joined into one logical line
)

type importer struct{}

// New returns the job-log importer.
func New() importers.Importer { return importer{} }

func (importer) Format() model.Format { return model.FormatJobLog }

// Markers that make a head a job / engine log, and nccl-tests markers that
// make it not one (an nccl-tests log with NCCL INFO lines stays nccl-tests).
var (
	strongMarks = []string{
		"Avg prompt throughput:", "Prefill batch", "Decode batch", "SpecDecoding metrics:", "Speculative metrics:",
		"Maximum concurrency for ", "GPU KV cache size:", "# GPU blocks:", "# cuda blocks:", "PreemptionMode.",
		"Watchdog caught collective operation timeout", "last enqueued NCCL work", "ProcessGroupNCCL",
		"CUDA out of memory", `"Active Request Count"`, `"kvCacheStats"`, "max_total_num_tokens=",
		"Available KV cache memory:", "Graph capturing finished", "text_generation_router",
	}
	ncclMarks      = []string{" NCCL INFO ", " NCCL WARN ", "] NCCL INFO", "] NCCL WARN"}
	benchTestMarks = []string{"nccl-tests version", "Collective test starting:", "rccl-tests: Version", "Avg bus bandwidth",
		"Out of bounds values", "# Using devices"}
)

func (importer) Sniff(head []byte) int {
	h := bytes.TrimLeft(head, " \t\r\n\ufeff")
	if len(h) == 0 || h[0] == '{' || h[0] == 0x1f || bytes.HasPrefix(h, []byte("SQLite format")) {
		return 0
	}
	if h[0] == '[' {
		rest := bytes.TrimLeft(h[1:], " \t\r\n")
		if len(rest) == 0 || rest[0] == '{' || rest[0] == '"' || rest[0] == ']' {
			return 0 // a JSON array (Kineto), not a "[rank0]:" prefix
		}
	}
	if bytes.Count(head, []byte("\t")) >= 3*bytes.Count(head, []byte("\n"))+3 {
		return 0 // a TSV table quoting log lines (a corpus manifest)
	}
	for _, m := range benchTestMarks {
		if bytes.Contains(head, []byte(m)) {
			return 0
		}
	}
	if bytes.Contains(head, []byte("nThread ")) && bytes.Contains(head, []byte("nGpus ")) ||
		bytes.Contains(head, []byte("out-of-place")) && bytes.Contains(head, []byte("busbw")) {
		return 0
	}
	for _, m := range strongMarks {
		if bytes.Contains(head, []byte(m)) {
			return 85
		}
	}
	if reJobDecor.Match(head) {
		return 80
	}
	for _, m := range ncclMarks {
		if bytes.Contains(head, []byte(m)) {
			// NCCL_DEBUG lines alone are a job's log (a training or
			// serving job prints them at init): 75 beats the nccl-tests
			// importer's 70 for bare INFO lines. Below 80, so the
			// registry looks at a longer head, where an nccl-tests
			// header or result table (above) gives the log back to it.
			if tableRows(head) >= 3 {
				return 0
			}
			return 75
		}
	}
	return 0
}

// tableRows counts lines that look like nccl-tests result rows (11 or more
// fields, the first two integers: size and count), printed without a header
// in an excerpt.
func tableRows(head []byte) int {
	rows := 0
	for _, ln := range bytes.Split(head, []byte("\n")) {
		f := bytes.Fields(ln)
		if len(f) >= 11 && isDigits(f[0]) && isDigits(f[1]) {
			rows++
		}
	}
	return rows
}

// reJobDecor matches line decorations nccl-tests never prints: torchrun
// rank tags, Ray / vLLM process tags and vLLM's logger prefix.
var reJobDecor = regexp.MustCompile(`(?m)^(?:\S+ )?(?:\[(?:rank|default)\d+\]:|\([A-Za-z_][\w.-]* pid=\d+|(?:INFO|WARNING|ERROR) \d\d-\d\d \d\d:\d\d:\d\d )`)

func (importer) Import(ctx context.Context, path string, opts importers.Options) (*model.Trace, error) {
	rc, _, err := importers.Open(path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return parse(ctx, rc, path, opts)
}

// Parse reads a job / engine log from r; name is used in positions and
// errors. The result is finalized.
func Parse(r io.Reader, name string, opts importers.Options) (*model.Trace, error) {
	return parse(context.Background(), r, name, opts)
}

// series is a list capped by decimation: when it reaches maxStats items,
// every other one is dropped and only every stride-th new item is kept.
type series[T any] struct {
	list   []T
	stride int
	seen   int
}

func (s *series[T]) add(v T) {
	if s.stride == 0 {
		s.stride = 1
	}
	s.seen++
	if (s.seen-1)%s.stride != 0 {
		return
	}
	s.list = append(s.list, v)
	if len(s.list) >= maxStats {
		k := 0
		for i := 0; i < len(s.list); i += 2 {
			s.list[k] = s.list[i]
			k++
		}
		clear(s.list[k:])
		s.list = s.list[:k]
		s.stride *= 2
	}
}

type parser struct {
	t        *model.Trace
	j        *model.JobLog
	w        *importers.Warner
	nccl     ncclState
	stats    series[model.EngineStat]
	spec     series[model.SpecDecodeStat]
	requests series[model.RequestStat]
	sources  map[string]bool
	ranks    map[int]bool
	join     []byte
}

func (p *parser) warn(n int, format string, args ...any) {
	p.w.Warn(fmt.Sprintf("line %d", n), format, args...)
}

func (p *parser) source(s string) { p.sources[s] = true }

func (p *parser) event(ev model.EngineEvent) {
	if len(p.j.Events) < maxEvents {
		p.j.Events = append(p.j.Events, ev)
	} else {
		p.j.Dropped++
	}
}

func parse(ctx context.Context, r io.Reader, name string, opts importers.Options) (*model.Trace, error) {
	t := model.NewTrace(name, model.FormatJobLog)
	j := &model.JobLog{}
	p := &parser{t: t, j: j, w: importers.NewWarner(t, opts), sources: map[string]bool{}, ranks: map[int]bool{}}
	p.nccl.hosts = map[string]*hostAcc{}
	p.nccl.all = newHostAcc("")
	ls := newLines(r)
	for {
		raw, ok := ls.read()
		if !ok {
			break
		}
		if ls.n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		n := ls.n
		if ls.cut {
			p.warn(n, "line longer than %d bytes: only its start was read", maxLine)
		}
		msg, d := strip(stripANSI(raw))
		j.Lines++
		res := p.dispatch(msg, d, n, false)
		if res == needMore {
			p.join = append(p.join[:0], msg...)
			for k := 0; k < maxJoin && res == needMore; k++ {
				next, ok := ls.peek()
				if !ok {
					break
				}
				next = stripANSI(next)
				if _, nd := strip(next); nd.any || len(bytes.TrimSpace(next)) == 0 || !continuation(next) {
					break
				}
				p.join = append(p.join, next...)
				ls.consume()
				res = p.dispatch(p.join, d, n, false)
			}
			if res == needMore {
				res = p.dispatch(p.join, d, n, true)
			}
		}
		if res != unknown {
			j.Known++
			if d.rank != model.NoRank && len(p.ranks) < maxRanksListed {
				p.ranks[d.rank] = true
			}
		}
	}
	if ls.err != nil {
		return nil, importers.Errorf(name, fmt.Sprintf("line %d", ls.n+1), "read: %v", ls.err)
	}
	p.finish()
	return t, nil
}

// continuation reports whether a physical line can be the rest of a wrapped
// line: it does not start like a line of its own.
func continuation(b []byte) bool {
	return !bytes.Contains(b, []byte("NCCL INFO")) && !bytes.Contains(b, []byte("NCCL WARN")) &&
		!bytes.HasPrefix(b, []byte("Traceback")) && !bytes.HasPrefix(b, []byte("frame #"))
}

// dispatch tries each grammar on one logical line.
func (p *parser) dispatch(msg []byte, d decor, n int, final bool) result {
	if p.nccl.line(msg, p.j) {
		p.source("nccl")
		return known
	}
	if bytes.HasPrefix(msg, []byte("NCCL version ")) {
		// NCCL_DEBUG=VERSION prints the version line bare.
		p.nccl.version(string(msg[len("NCCL version "):]))
		p.source("nccl")
		return known
	}
	s := string(msg)
	if c10dLine(msg, d, n, p.j, func(f string, a ...any) { p.warn(n, f, a...) }) {
		p.source("c10d")
		return known
	}
	if r := p.vllmStats(s, d, n, final); r != unknown {
		return r
	}
	if r := p.sglangBatch(s, d, n, final); r != unknown {
		return r
	}
	if r := p.specDecode(s, d, n); r != unknown {
		return r
	}
	if r := p.trtllmStats(s, d, n, final); r != unknown {
		return r
	}
	if r := p.oom(s, d, n); r != unknown {
		return r
	}
	if r := p.tgiRequest(s, d, n); r != unknown {
		return r
	}
	return p.startup(s, d, n)
}

func (p *parser) finish() {
	j, t := p.j, p.t
	for r := range p.ranks {
		j.Ranks = append(j.Ranks, r)
	}
	for _, w := range j.Watchdog {
		if w.Rank != model.NoRank && !p.ranks[w.Rank] {
			j.Ranks = append(j.Ranks, w.Rank)
			p.ranks[w.Rank] = true
		}
	}
	p.nccl.finish(j)
	j.Stats, j.StatsStride = p.stats.list, max(p.stats.stride, 1)
	j.Spec = p.spec.list
	j.Requests = p.requests.list
	for s := range p.sources {
		j.Sources = append(j.Sources, s)
	}
	sort.Strings(j.Sources)
	t.JobLog = j
	t.WorldSize = j.WorldSize
	if len(j.Ranks) == 1 {
		t.Rank = j.Ranks[0]
	}
	var prod []string
	if j.NCCL.Version != "" {
		prod = append(prod, "NCCL "+j.NCCL.Version)
	}
	prod = append(prod, j.Sources...)
	t.Producer = strings.Join(prod, ", ")
	if j.NCCL.InfoLines > 0 {
		t.Caps.Add(model.CapTopology)
	}
	// Say which series were thinned, each with its own stride.
	if p.stats.stride > 1 {
		t.Caps.Note(fmt.Sprintf("engine stats decimated: 1 line in %d kept", p.stats.stride))
	}
	if p.requests.stride > 1 {
		t.Caps.Note(fmt.Sprintf("request records decimated: 1 in %d kept", p.requests.stride))
	}
	if j.Dropped > 0 {
		t.Caps.Note(fmt.Sprintf("%d events beyond the first %d not kept", j.Dropped, maxEvents))
	}
	if j.Known == 0 {
		t.Caps.Note("no line of a known job-log grammar (NCCL, c10d, vLLM, SGLang, TensorRT-LLM, CUDA OOM)")
	}
	p.w.Flush()
	t.Finalize()
}
