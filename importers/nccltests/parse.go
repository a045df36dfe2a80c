package nccltests

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"

	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/importers/internal/ncclinfo"
	"github.com/tracedx/tracedx/model"
)

// parser is the line state machine. Runs are built in p.b.Runs; cur indexes
// the open run (-1 = none).
type parser struct {
	t   *model.Trace
	w   *importers.Warner
	b   *model.Bench
	cur int

	// Header facts seen before the run they belong to.
	pendVersion  string
	pendHeaders  int
	pendLibrary  int
	pendProgram  string // "Collective test starting: X"
	cmdProgram   string // last "*_perf" seen on a command line
	cleanHead    bool   // only header/rank/NCCL lines since the open run's params
	halfSpec     []bool // from the "out-of-place in-place" line: true = in-place
	lay          *layout
	pend         []byte // an incomplete row waiting for its rest
	pendLine     int
	toks         [][]byte
	intern       map[string]string
	recognized   int
	binary       bool
	firstBinary  int
	nccl         *ncclinfo.Reader
	sawNCCL      bool
	producerTool string
	m            merger
}

func newParser(t *model.Trace, opts importers.Options) *parser {
	b := &model.Bench{}
	t.Bench = b
	return &parser{t: t, w: importers.NewWarner(t, opts), b: b, cur: -1,
		intern: map[string]string{}, nccl: ncclinfo.New(&b.NCCL)}
}

func (p *parser) str(b []byte) string {
	if s, ok := p.intern[string(b)]; ok {
		return s
	}
	if len(p.intern) > 4096 {
		return string(b)
	}
	s := string(b)
	p.intern[s] = s
	return s
}

func (p *parser) run() *model.BenchRun {
	if p.cur < 0 {
		return nil
	}
	return &p.b.Runs[p.cur]
}

// newRun closes the open run and starts another at line n.
func (p *parser) newRun(n int) *model.BenchRun {
	p.closeRun()
	p.b.Runs = append(p.b.Runs, model.BenchRun{
		ReportedAvgBusBW: -1, OOBValues: -1, Line: n, Processes: 0,
		Params: model.BenchParams{NThread: -1, NGpus: -1, MinBytes: -1, MaxBytes: -1, StepFactor: -1, StepBytes: -1,
			WarmupIters: -1, Iters: -1, AggIters: -1, Validation: -1, Graph: -1, NRanks: -1},
	})
	p.cur = len(p.b.Runs) - 1
	r := &p.b.Runs[p.cur]
	r.TestsVersion, r.NCCLHeaders, r.NCCLLibrary = p.pendVersion, p.pendHeaders, p.pendLibrary
	p.pendVersion, p.pendHeaders, p.pendLibrary = "", 0, 0
	if p.pendProgram != "" {
		r.Program = p.pendProgram
	} else if p.cmdProgram != "" {
		r.Program = p.cmdProgram
	}
	p.pendProgram, p.cmdProgram = "", ""
	p.lay = nil
	p.halfSpec = nil
	p.cleanHead = true
	p.m.failed = false
	return r
}

// closeRun marks the open run truncated when it never printed its footer.
func (p *parser) closeRun() {
	p.flushPending()
	if r := p.run(); r != nil {
		if !r.Footer {
			r.Truncated = true
		}
		deriveRun(r, p.lay)
		p.m.closed(p.b, p.cur)
	}
	p.cur = -1
	p.lay = nil
}

// line handles one physical line n.
func (p *parser) line(n int, raw []byte) {
	if bytes.IndexByte(raw, 0) >= 0 {
		if !p.binary {
			p.binary, p.firstBinary = true, n
		}
		p.w.Warn(pos(n), "line holds NUL bytes; skipped")
		return
	}
	b := stripPrefixes(raw)
	// An NCCL_DEBUG line, possibly glued to a row fragment printed by
	// another thread of the same process.
	if i := ncclMarker(b); i >= 0 {
		start := ncclLineStart(b, i)
		start = p.unglue(b, start)
		head := bytes.TrimSpace(b[:start])
		if l := len(head); l > 3 && head[l-1] == ']' {
			// A launcher prefix ("[0]") printed in front of the NCCL line.
			if o := bytes.LastIndexByte(head, '['); o >= 0 && isInt(head[o+1:l-1]) {
				head = bytes.TrimSpace(head[:o])
			}
		}
		p.ncclLine(n, b[start:], b[i:])
		p.recognized++
		if len(head) > 0 {
			p.fragment(n, head)
		}
		return
	}
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return
	}
	if t[0] == '#' || startsHeaderWord(t) {
		if p.header(n, t) {
			p.recognized++
			return
		}
		if t[0] == '#' {
			return
		}
	}
	if c := t[0]; c >= '0' && c <= '9' || c == '-' {
		if p.rowLine(n, t) {
			p.recognized++
			return
		}
	}
	if bytes.HasPrefix(t, []byte("NCCL version ")) {
		p.flushPending()
		ncclinfo.SetVersion(&p.b.NCCL, string(t[len("NCCL version "):]))
		p.recognized++
		p.sawNCCL = true
		return
	}
	if p.failure(n, t) {
		p.recognized++
		return
	}
	if bytes.HasPrefix(t, []byte("rccl-tests: Version ")) {
		v := "rccl-tests " + string(bytes.TrimSpace(t[len("rccl-tests: Version "):]))
		if r := p.run(); r != nil && !r.TableHeader {
			r.TestsVersion = v
		} else {
			p.pendVersion = v
		}
		p.producerTool = "rccl-tests"
		p.recognized++
		return
	}
	// Anything else: shell prompts, command lines, banners.
	p.flushPending()
	p.cleanHead = false
	if prog := perfName.Find(t); prog != nil {
		p.cmdProgram = string(prog)
	}
}

// unglue handles an NCCL line printed right after a row's out-of-place half:
// the half's last field ("0", "N/A") is glued to the host name
// ("0node-a:1:2 [0] NCCL INFO"). When the row so far lacks exactly one field
// to complete its first half, the leading field is given back to the row.
func (p *parser) unglue(b []byte, start int) int {
	if p.lay == nil || start >= len(b) || p.lay.half1 == 0 {
		return start
	}
	have := len(p.fields(b[:start]))
	if len(p.pend) > 0 {
		have += len(p.fields(p.pend))
	}
	if have != p.lay.half1-1 {
		return start
	}
	tok := b[start:]
	if bytes.HasPrefix(tok, []byte("N/A")) {
		return start + 3
	}
	j := 0
	for j < len(tok) && (tok[j] >= '0' && tok[j] <= '9' || tok[j] == '.' || tok[j] == 'e' || tok[j] == '+') {
		j++
	}
	if j > 0 && j < len(tok) && tok[j] != ':' && tok[j] != '-' {
		return start + j
	}
	return start
}

var perfName = regexp.MustCompile(`\b[a-z][a-z0-9_]*_perf(?:_mpi)?\b`)

// startsHeaderWord reports a header line that lost its "#" (markdown
// mangling, forks): nThread, Using devices, Rank, the table header lines and
// the footers.
func startsHeaderWord(t []byte) bool {
	for _, w := range headerWords {
		if bytes.HasPrefix(t, w) {
			return true
		}
	}
	return false
}

var headerWords = [][]byte{[]byte("nThread"), []byte("Using devices"), []byte("Rank "), []byte("out-of-place"), []byte("in-place"),
	[]byte("size "), []byte("bytes "), []byte("(B)"), []byte("Out of bounds"), []byte("Avg bus bandwidth")}

var (
	reVersion  = regexp.MustCompile(`^nccl-tests version (\S+)(?: \(([0-9a-fA-F]+)\))?(?: nccl-headers=(\d+))?(?: nccl-library=(\d+))?`)
	reStart    = regexp.MustCompile(`^Collective test (starting|concluded): (\S+)`)
	reRCCL     = regexp.MustCompile(`^nThreads:\s*(\d+)\s+nGpus:\s*(\d+)\s+nRanks:\s*(\d+)\s+minBytes:\s*(\d+)\s+maxBytes:\s*(\d+)\s+step:\s*(\d+)\((factor|bytes)\)\s+warmupIters:\s*(\d+)\s+iters:\s*(\d+)\s+validation:\s*(\d+)`)
	reOOB      = regexp.MustCompile(`^Out of bounds values\s*:\s*(\d+)\s*(OK|FAILED)?`)
	reAvg      = regexp.MustCompile(`^Avg bus bandwidth\s*:\s*(\S+)\s*(OK|FAILED)?`)
	reNCCL1    = regexp.MustCompile(`^NCCL Tests compiled with NCCL (\d+)\.(\d+)`)
	reErrFoot  = regexp.MustCompile(`^error:\s*(.*)$`)
	reHdrHalf  = regexp.MustCompile(`^(?:out-of-place(?: \(\+ per-iteration\))?\s+)?in-place(?: \(\+ per-iteration\))?$|^out-of-place(?: \(\+ per-iteration\))?$`)
	reReducing = regexp.MustCompile(`^Reducing maxBytes to (\d+)`)
	reCaptured = regexp.MustCompile(`^(Using devices|Reducing maxBytes|Blocking Enabled|Per-Iteration Report|Parallel Init Enabled|GPU memory usage|Errors with asterisks|Testing \d+ cycle|Writing JSON output|skipping json output)`)
)

// params parses "nThread 1 nGpus 1 minBytes 8 maxBytes 128 step: 2(factor)
// warmup iters: 5 iters: 20 [agg iters: 1] validation: 1 [graph: 0] ...";
// unknown trailing "key: value" pairs (forks, newer versions) are ignored.
func (p *parser) params(s []byte) (model.BenchParams, bool) {
	pr := model.BenchParams{NThread: -1, NGpus: -1, MinBytes: -1, MaxBytes: -1, StepFactor: -1, StepBytes: -1,
		WarmupIters: -1, Iters: -1, AggIters: -1, Validation: -1, Graph: -1, NRanks: -1}
	f := p.fields(s)
	num := func(i int) (int64, bool) {
		if i >= len(f) {
			return 0, false
		}
		return parseUint(f[i])
	}
	seen := 0
	for i := 0; i < len(f); i++ {
		key := string(f[i])
		if (key == "warmup" || key == "agg") && i+1 < len(f) && string(f[i+1]) == "iters:" {
			i++
			key += " iters:"
		}
		var dst *int64
		var idst *int
		switch key {
		case "nThread":
			idst = &pr.NThread
		case "nGpus":
			idst = &pr.NGpus
		case "minBytes":
			dst = &pr.MinBytes
		case "maxBytes":
			dst = &pr.MaxBytes
		case "warmup iters:":
			idst = &pr.WarmupIters
		case "iters:":
			idst = &pr.Iters
		case "agg iters:":
			idst = &pr.AggIters
		case "validation:":
			idst = &pr.Validation
		case "graph:":
			idst = &pr.Graph
		case "step:":
			if i+1 >= len(f) {
				return pr, false
			}
			v := f[i+1]
			o := bytes.IndexByte(v, '(')
			if o <= 0 {
				return pr, false
			}
			x, ok := parseUint(v[:o])
			if !ok {
				return pr, false
			}
			if bytes.HasPrefix(v[o:], []byte("(factor")) {
				pr.StepFactor = x
			} else {
				pr.StepBytes = x
			}
			i++
			seen++
			continue
		default:
			continue
		}
		x, ok := num(i + 1)
		if !ok {
			return pr, false
		}
		if dst != nil {
			*dst = x
		} else {
			*idst = int(x)
		}
		i++
		seen++
	}
	return pr, seen >= 4 && pr.NThread >= 0 && pr.NGpus >= 0 && pr.MinBytes >= 0 && pr.MaxBytes >= 0
}

// expectedRows estimates a run's row count from its sweep (capped), to size
// the row slice once.
func expectedRows(pr model.BenchParams) int {
	n := 1
	switch {
	case pr.StepFactor > 1 && pr.MinBytes > 0:
		for v := pr.MinBytes; v < pr.MaxBytes && n < 64; v *= pr.StepFactor {
			n++
		}
	case pr.StepBytes > 0 && pr.MaxBytes > pr.MinBytes:
		n += int(min((pr.MaxBytes-pr.MinBytes)/pr.StepBytes, 256))
	}
	return n
}

// rankLine parses "Rank N [Group G] [Pid P] on HOST device D [BUS] GPU"
// (the host is right-aligned and may hold spaces).
func (p *parser) rankLine(s []byte) (model.BenchDevice, bool) {
	d := model.BenchDevice{Group: -1}
	on := bytes.Index(s, []byte(" on "))
	dev := bytes.LastIndex(s, []byte(" device "))
	if on < 0 || dev < on+4 {
		return d, false
	}
	f := p.fields(s[:on])
	if len(f) < 2 || len(f)%2 != 0 || string(f[0]) != "Rank" {
		return d, false
	}
	for i := 0; i < len(f); i += 2 {
		v, ok := parseUint(f[i+1])
		if !ok {
			return d, false
		}
		switch string(f[i]) {
		case "Rank":
			d.Rank = int(v)
		case "Group":
			d.Group = int(v)
		case "Pid":
			d.PID = v
		default:
			return d, false
		}
	}
	d.Host = p.str(bytes.TrimSpace(s[on+4 : dev]))
	rest := bytes.TrimSpace(s[dev+8:])
	sp := bytes.IndexByte(rest, ' ')
	if sp < 0 {
		sp = len(rest)
	}
	v, ok := parseUint(rest[:sp])
	if !ok {
		return d, false
	}
	d.Device = int(v)
	rest = bytes.TrimSpace(rest[sp:])
	if len(rest) < 2 || rest[0] != '[' {
		return d, false
	}
	cl := bytes.IndexByte(rest, ']')
	if cl < 0 {
		return d, false
	}
	d.BusID = p.str(rest[1:cl])
	d.GPU = p.str(bytes.TrimSpace(rest[cl+1:]))
	return d, true
}

// paramsRun returns the run a parameter header line belongs to: a new one,
// or the open one when independent processes each print their own header
// (several parameter lines before any table).
func (p *parser) paramsRun(n int) *model.BenchRun {
	p.flushPending()
	r := p.run()
	if r != nil && !r.TableHeader && len(r.Rows) == 0 && !r.Footer && p.cleanHead && p.pendProgram == "" && p.cmdProgram == "" && p.pendVersion == "" {
		if r.Processes == 0 {
			// The run was opened by rank lines before its header.
			r.Processes = 1
			return r
		}
		r.Processes++
		return r
	}
	r = p.newRun(n)
	r.Processes = 1
	return r
}

// footerRun is the run a footer line belongs to (a new empty one for an
// excerpt that starts at its footer).
func (p *parser) footerRun(n int) *model.BenchRun {
	if r := p.run(); r != nil {
		return r
	}
	if len(p.b.Runs) > 0 && !p.m.gone {
		// A second footer of a finished run: duplicated processes.
		last := &p.b.Runs[len(p.b.Runs)-1]
		if last.Footer {
			p.cur = len(p.b.Runs) - 1
			return last
		}
	}
	return p.newRun(n)
}

var (
	reTestFail  = regexp.MustCompile(`^(\S+): Test (CUDA|NCCL) failure (\S+?:\d+) '(.*?)'?\s*$`)
	reBacktrace = regexp.MustCompile(`^\.\. (\S+)(?: pid (\d+))?: Test failure (\S+?:\d+)`)
	reTimeout   = regexp.MustCompile(`^(\S+): Test timeout \((\d+)s\) (\S+?:\d+)`)
	reOldFail   = regexp.MustCompile(`^(NCCL|Cuda) failure (\S+?:\d+) '(.*?)'?\s*$`)
	reLaunch    = regexp.MustCompile(`^(?:start|launch) failed on (\S+?): (.*)$`)
	reMPIAbort  = regexp.MustCompile(`^(?:mpirun (?:detected|noticed) that .*|Primary job\s+terminated normally, but \d+ process(?:es)? returned|srun: error: .*|.*PMIx? .*(?:error|failed).*|Invalid number of GPUs: .*)$`)
)

// failure recognises failure lines; the TESTCHECK back-trace lines start
// with " .. " (leading space trimmed).
func (p *parser) failure(n int, t []byte) bool {
	s := string(t)
	if m := reTestFail.FindStringSubmatch(s); m != nil {
		kind := "nccl"
		if m[2] == "CUDA" {
			kind = "cuda"
		}
		p.addFailure(n, kind, m[1], m[3], m[4])
		return true
	}
	if m := reBacktrace.FindStringSubmatch(s); m != nil {
		p.addFailure(n, "test", m[1], m[3], "Test failure")
		return true
	}
	if m := reTimeout.FindStringSubmatch(s); m != nil {
		p.addFailure(n, "timeout", m[1], m[3], "Test timeout ("+m[2]+"s)")
		return true
	}
	if m := reOldFail.FindStringSubmatch(s); m != nil {
		kind := "nccl"
		if m[1] == "Cuda" {
			kind = "cuda"
		}
		p.addFailure(n, kind, "", m[2], m[3])
		return true
	}
	if m := reLaunch.FindStringSubmatch(s); m != nil {
		p.addFailure(n, "launcher", m[1], "", m[2])
		return true
	}
	if reMPIAbort.MatchString(s) {
		p.addFailure(n, "launcher", "", "", strings.TrimSpace(s))
		return true
	}
	return false
}

func (p *parser) addFailure(n int, kind, host, src, msg string) {
	p.flushPending()
	if len(p.b.Failures) >= 10000 {
		return
	}
	if len(msg) > 512 {
		msg = msg[:512]
	}
	p.b.Failures = append(p.b.Failures, model.BenchFailure{Kind: kind, Host: host, Source: src, Message: msg, Line: n, Run: p.cur})
	p.m.failed = p.m.failed || p.cur >= 0
	p.cleanHead = false
}

// finish closes the last run and fills what is derived: ranks, nodes, GPU,
// collective, the NCCL transport summary, capabilities and notes.
func (p *parser) finish(lines int) {
	p.closeRun()
	p.m.warn(p)
	if f := &p.b.NCCL; f.NVLSChannels > 0 || f.NVLSHeads > 0 {
		// NVLS has no "via" lines: it counts as a transport when set up.
		n := f.NVLSChannels
		if n <= 0 {
			n = f.NVLSHeads
		}
		p.nccl.AddTransport("NVLS", n)
	}
	p.nccl.Finish()
	for i := range p.b.Runs {
		r := &p.b.Runs[i]
		if r.Ranks == 0 && p.b.NCCL.InitRanks > 0 && len(p.b.Runs) == 1 {
			r.Ranks, r.RanksInferred = p.b.NCCL.InitRanks, true
		}
		if r.Nodes == 0 && p.b.NCCL.Nodes > 0 && len(p.b.Runs) == 1 {
			r.Nodes = p.b.NCCL.Nodes
		}
	}
	t := p.t
	if p.producerTool != "" {
		t.Producer = p.producerTool
		for _, r := range p.b.Runs {
			if r.TestsVersion != "" && !strings.HasPrefix(r.TestsVersion, "rccl-tests") && !strings.HasPrefix(r.TestsVersion, "NCCL ") {
				t.Producer += " " + r.TestsVersion
				break
			}
		}
	}
	if t.Producer == "" && len(p.b.Runs) > 0 {
		t.Producer = "nccl-tests"
	}
	if p.b.NCCL.Version != "" {
		t.Meta["nccl_version"] = p.b.NCCL.Version
	}
	if p.b.NCCL.InfoLines+p.b.NCCL.WarnLines > 0 {
		t.Caps.Add(model.CapTopology)
	} else {
		t.Caps.Note("no NCCL_DEBUG=INFO lines: transports, network and channels unknown")
	}
	rows := 0
	for _, r := range p.b.Runs {
		rows += len(r.Rows)
		if r.Ranks > t.WorldSize {
			t.WorldSize = r.Ranks
			delete(t.Meta, "world_size_inferred")
			if r.RanksInferred {
				// Not printed by the log: from busbw/algbw or NCCL init lines.
				t.Meta["world_size_inferred"] = "rank count inferred"
			}
		}
	}
	if rows == 0 {
		t.Caps.Note("no nccl-tests result rows in the log")
		p.w.Warn(pos(lines), "no nccl-tests result rows found (%d runs, %d failure lines)", len(p.b.Runs), len(p.b.Failures))
	}
}

// deriveRun fills ranks, nodes, GPU and (when the log never names it) the
// collective of a finished run.
func deriveRun(r *model.BenchRun, lay *layout) {
	ranks := map[int]bool{}
	var hosts []string
	seenHost := map[string]bool{}
	gpus := map[string]int{}
	for _, d := range r.Devices {
		ranks[d.Rank] = true
		if !seenHost[d.Host] {
			seenHost[d.Host] = true
			hosts = append(hosts, d.Host)
		}
		gpus[d.GPU]++
	}
	r.Hosts = hosts
	r.Ranks = len(ranks)
	r.Nodes = len(hosts)
	best := 0
	for _, d := range r.Devices { // first most frequent, deterministic
		if gpus[d.GPU] > best {
			best, r.GPU = gpus[d.GPU], d.GPU
		}
	}
	if r.Processes == 0 {
		r.Processes = 1
	}
	if r.Program != "" {
		c := strings.TrimSuffix(r.Program, "_mpi")
		c = strings.TrimSuffix(c, "_perf")
		r.Collective = c
	}
	if r.Ranks == 0 && r.Params.NThread > 0 && r.Params.NRanks > 0 {
		r.Ranks = r.Params.NThread * r.Params.NGpus * r.Params.NRanks
	}
	if r.Collective == "" {
		r.Collective = inferCollective(r, lay)
	}
	if r.Ranks == 0 {
		if n := inferRanks(r); n > 0 {
			r.Ranks, r.RanksInferred = n, true
		}
	}
}

func atoi(b []byte) int { return int(atoi64(b)) }

func atoi64(b []byte) int64 {
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0
	}
	return v
}
