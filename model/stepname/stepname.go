package stepname

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Phase is what an engine step did.
type Phase string

// Step phases. Capture steps record CUDA graphs and are no steady-state work.
const (
	Prefill Phase = "prefill"
	Decode  Phase = "decode"
	Mixed   Phase = "mixed"
	Capture Phase = "capture"
	Idle    Phase = "idle"
	Unknown Phase = "unknown"
)

// Phases lists the phases in report order.
var Phases = []Phase{Prefill, Decode, Mixed, Capture, Idle, Unknown}

// Label is what a step name says. Numeric fields are -1 when the name does
// not give them.
type Label struct {
	// Engine is "vllm", "sglang", "pytorch" or "custom".
	Engine string
	Phase  Phase
	// Index is the step number the name carries (ProfilerStep#N), -1 otherwise.
	Index int64
	// BatchSize is the number of requests (sequences) in the step.
	BatchSize int64
	// Tokens is the number of tokens the step computed.
	Tokens int64
	// Prefills and Decodes count the requests of each kind (vLLM).
	Prefills, Decodes int64
	// KVLen is the summed KV-cache (context) length over the requests.
	KVLen int64
	// Extra keeps the fields the parser does not interpret, as text.
	Extra string
}

func unknownLabel(engine string) Label {
	return Label{Engine: engine, Phase: Unknown, Index: -1, BatchSize: -1, Tokens: -1, Prefills: -1, Decodes: -1, KVLen: -1}
}

var (
	vllmV1  = regexp.MustCompile(`^execute_(\d+)_context_(\d+)\(([^)]*)\)_generation_(\d+)\(([^)]*)\)(.*)$`)
	vllmOld = regexp.MustCompile(`^execute_context_(\d+)\(([^)]*)\)_generation_(\d+)\(([^)]*)\)(.*)$`)
	vllmSum = regexp.MustCompile(`^sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)$`)
	sglStep = regexp.MustCompile(`^step\[([A-Za-z_]+)((?:\s+[^\]]*)?)\]$`)
	capture = regexp.MustCompile(`^capture_(\d+)_([A-Za-z_]+)$`)
	profStp = regexp.MustCompile(`^ProfilerStep#(\d+)$`)
)

// Parse reads a step annotation name. ok is false when the name is no step
// marker of a known grammar.
func Parse(name string) (Label, bool) {
	switch {
	case strings.HasPrefix(name, "execute_"):
		return parseVLLM(name)
	case strings.HasPrefix(name, "step["):
		return parseSGLang(name)
	case strings.HasPrefix(name, "capture_"):
		m := capture.FindStringSubmatch(name)
		if m == nil {
			return Label{}, false
		}
		l := unknownLabel("")
		l.Phase, l.BatchSize, l.Extra = Capture, atoi(m[1]), "mode="+m[2]
		return l, true
	case strings.HasPrefix(name, "ProfilerStep#"):
		m := profStp.FindStringSubmatch(name)
		if m == nil {
			return Label{}, false
		}
		l := unknownLabel("pytorch")
		l.Index = atoi(m[1])
		return l, true
	}
	return Label{}, false
}

// IsProfilerStep reports whether l comes from a ProfilerStep#N name (an
// outer training-loop window rather than an engine step).
func (l Label) IsProfilerStep() bool { return l.Engine == "pytorch" }

func parseVLLM(name string) (Label, bool) {
	l := unknownLabel("vllm")
	if name == "execute_model" {
		return l, true
	}
	if m := vllmV1.FindStringSubmatch(name); m != nil {
		l.Tokens, l.Prefills, l.Decodes = atoi(m[1]), atoi(m[2]), atoi(m[4])
		var extra []string
		kvc, okc := vllmKV(m[3])
		kvg, okg := vllmKV(m[5])
		if okc && okg {
			l.KVLen = kvc + kvg
		} else {
			extra = append(extra, "context="+m[3], "generation="+m[5])
		}
		if m[6] != "" {
			extra = append(extra, strings.TrimPrefix(m[6], "_"))
		}
		l.Extra = strings.Join(extra, " ")
		return l.vllmPhase(), true
	}
	if m := vllmOld.FindStringSubmatch(name); m != nil {
		l.Prefills, l.Decodes = atoi(m[1]), atoi(m[3])
		ct, okc := firstNum(m[2])
		gt, okg := firstNum(m[4])
		if okc && okg {
			l.Tokens = ct + gt
		}
		l.Extra = strings.TrimSpace("context=" + m[2] + " generation=" + m[4] + " " + strings.TrimPrefix(m[5], "_"))
		return l.vllmPhase(), true
	}
	return Label{}, false
}

func (l Label) vllmPhase() Label {
	l.BatchSize = l.Prefills + l.Decodes
	switch {
	case l.Prefills > 0 && l.Decodes > 0:
		l.Phase = Mixed
	case l.Prefills > 0:
		l.Phase = Prefill
	case l.Decodes > 0:
		l.Phase = Decode
	default:
		l.Phase = Idle
	}
	return l
}

// vllmKV reads Σkv from "sq<n>sk<n>sqsq<n>sqsk<n>".
func vllmKV(s string) (int64, bool) {
	m := vllmSum.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	return atoi(m[2]), true
}

func firstNum(s string) (int64, bool) {
	f := strings.FieldsFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if len(f) == 0 {
		return 0, false
	}
	return atoi(f[0]), true
}

// sglangModes maps SGLang ForwardMode names to phases.
var sglangModes = map[string]Phase{
	"EXTEND": Prefill, "PREFILL": Prefill, "SPLIT_PREFILL": Prefill, "DRAFT_EXTEND": Prefill,
	"DECODE": Decode, "TARGET_VERIFY": Decode,
	"MIXED": Mixed,
	"IDLE":  Idle, "DUMMY_FIRST": Idle,
}

func parseSGLang(name string) (Label, bool) {
	m := sglStep.FindStringSubmatch(name)
	if m == nil {
		return Label{}, false
	}
	l := unknownLabel("sglang")
	mode := strings.ToUpper(m[1])
	if ph, ok := sglangModes[mode]; ok {
		l.Phase = ph
	}
	var extra []string
	if mode != "EXTEND" && mode != "DECODE" && mode != "MIXED" && mode != "IDLE" {
		extra = append(extra, "mode="+m[1])
	}
	for _, kv := range strings.Fields(m[2]) {
		k, v, ok := strings.Cut(kv, "=")
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case ok && err == nil && k == "bs":
			l.BatchSize = n
		case ok && err == nil && (k == "toks" || k == "tokens"):
			l.Tokens = n
		default:
			extra = append(extra, kv)
		}
	}
	l.Extra = strings.Join(extra, " ")
	return l, true
}

func atoi(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// Custom is a user grammar: a regular expression whose named groups phase,
// bs and tokens fill the label.
type Custom struct {
	re                *regexp.Regexp
	phase, bs, tokens int
}

// Compile compiles a --steps expression. It must name at least one of the
// groups phase, bs, tokens or match whole step names on its own.
func Compile(expr string) (*Custom, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("--steps: %v", err)
	}
	return &Custom{re: re, phase: re.SubexpIndex("phase"), bs: re.SubexpIndex("bs"), tokens: re.SubexpIndex("tokens")}, nil
}

// String returns the expression.
func (c *Custom) String() string { return c.re.String() }

// Parse matches name; ok is false when it does not match.
func (c *Custom) Parse(name string) (Label, bool) {
	m := c.re.FindStringSubmatch(name)
	if m == nil {
		return Label{}, false
	}
	l := unknownLabel("custom")
	if c.phase > 0 {
		l.Phase = PhaseOf(m[c.phase])
	}
	if c.bs > 0 {
		l.BatchSize = atoi(m[c.bs])
	}
	if c.tokens > 0 {
		l.Tokens = atoi(m[c.tokens])
	}
	return l, true
}

// PhaseOf maps a phase word of any engine (prefill, extend, context,
// decode, generation, generate, mixed, capture, idle) to a Phase.
func PhaseOf(word string) Phase {
	w := strings.ToLower(word)
	switch {
	case strings.Contains(w, "prefill") || strings.Contains(w, "extend") || strings.Contains(w, "context") || w == "prompt":
		return Prefill
	case strings.Contains(w, "decode") || strings.Contains(w, "generat") || strings.Contains(w, "verify"):
		return Decode
	case strings.Contains(w, "mix"):
		return Mixed
	case strings.Contains(w, "capture"):
		return Capture
	case strings.Contains(w, "idle"):
		return Idle
	}
	return Unknown
}
