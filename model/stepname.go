package model

// Step-name grammars: the names inference engines and training loops give
// their step annotations, read into a StepLabel (phase, batch size, tokens,
// KV length). Unknown fields are kept as text in StepLabel.Extra.
//
//   - vLLM V1: execute_<tokens>_context_<nctx>(<info>)_generation_<ngen>(<info>)
//     where <info> is sq<Σq>sk<Σkv>sqsq<Σq²>sqsk<Σq·kv> over the requests of
//     that kind. Phase from the request counts: both > 0 mixed, only context
//     prefill, only generation decode, neither idle. Tokens is the leading
//     number, KV length Σkv of both.
//   - vLLM (older): execute_context_<nctx>(<tok>_<...>)_generation_<ngen>(<...>):
//     the first number in each parenthesis is the tokens of those requests.
//   - vLLM V0: execute_model (phase unknown).
//   - SGLang: step[<MODE> bs=<n> toks=<n> ...] with ForwardMode names
//     (EXTEND/PREFILL → prefill, DECODE/TARGET_VERIFY → decode, MIXED, IDLE);
//     capture_<bs>_<MODE> (CUDA-graph capture, vLLM and SGLang).
//   - PyTorch: ProfilerStep#<n> (phase unknown, index n).
//   - Anything else through --steps (StepGrammar).

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// StepPhase is what an engine step did.
type StepPhase string

// Step phases. Capture steps record CUDA graphs and are no steady-state work.
const (
	PhasePrefill StepPhase = "prefill"
	PhaseDecode  StepPhase = "decode"
	PhaseMixed   StepPhase = "mixed"
	PhaseCapture StepPhase = "capture"
	PhaseIdle    StepPhase = "idle"
	PhaseUnknown StepPhase = "unknown"
)

// AllStepPhases lists the phases in report order.
var AllStepPhases = []StepPhase{PhasePrefill, PhaseDecode, PhaseMixed, PhaseCapture, PhaseIdle, PhaseUnknown}

// StepLabel is what a step name says. Numeric fields are -1 when the name does
// not give them.
type StepLabel struct {
	// Engine is "vllm", "sglang", "pytorch" or "custom".
	Engine string
	Phase  StepPhase
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

func unknownStepLabel(engine string) StepLabel {
	return StepLabel{Engine: engine, Phase: PhaseUnknown, Index: -1, BatchSize: -1, Tokens: -1, Prefills: -1, Decodes: -1, KVLen: -1}
}

var (
	vllmV1      = regexp.MustCompile(`^execute_(\d+)_context_(\d+)\(([^)]*)\)_generation_(\d+)\(([^)]*)\)(.*)$`)
	vllmOld     = regexp.MustCompile(`^execute_context_(\d+)\(([^)]*)\)_generation_(\d+)\(([^)]*)\)(.*)$`)
	vllmSum     = regexp.MustCompile(`^sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)$`)
	sglStep     = regexp.MustCompile(`^step\[([A-Za-z_]+)((?:\s+[^\]]*)?)\]$`)
	captureName = regexp.MustCompile(`^capture_(\d+)_([A-Za-z_]+)$`)
	profStep    = regexp.MustCompile(`^ProfilerStep#(\d+)$`)
)

// ParseStepName reads a step annotation name. ok is false when the name is no step
// marker of a known grammar.
func ParseStepName(name string) (StepLabel, bool) {
	switch {
	case strings.HasPrefix(name, "execute_"):
		return parseVLLM(name)
	case strings.HasPrefix(name, "step["):
		return parseSGLang(name)
	case strings.HasPrefix(name, "capture_"):
		m := captureName.FindStringSubmatch(name)
		if m == nil {
			return StepLabel{}, false
		}
		l := unknownStepLabel("")
		l.Phase, l.BatchSize, l.Extra = PhaseCapture, stepAtoi(m[1]), "mode="+m[2]
		return l, true
	case strings.HasPrefix(name, "ProfilerStep#"):
		m := profStep.FindStringSubmatch(name)
		if m == nil {
			return StepLabel{}, false
		}
		l := unknownStepLabel("pytorch")
		l.Index = stepAtoi(m[1])
		return l, true
	}
	return StepLabel{}, false
}

// IsProfilerStep reports whether l comes from a ProfilerStep#N name (an
// outer training-loop window rather than an engine step).
func (l StepLabel) IsProfilerStep() bool { return l.Engine == "pytorch" }

func parseVLLM(name string) (StepLabel, bool) {
	l := unknownStepLabel("vllm")
	if name == "execute_model" {
		return l, true
	}
	if m := vllmV1.FindStringSubmatch(name); m != nil {
		l.Tokens, l.Prefills, l.Decodes = stepAtoi(m[1]), stepAtoi(m[2]), stepAtoi(m[4])
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
		l.Prefills, l.Decodes = stepAtoi(m[1]), stepAtoi(m[3])
		ct, okc := stepFirstNum(m[2])
		gt, okg := stepFirstNum(m[4])
		if okc && okg {
			l.Tokens = ct + gt
		}
		l.Extra = strings.TrimSpace("context=" + m[2] + " generation=" + m[4] + " " + strings.TrimPrefix(m[5], "_"))
		return l.vllmPhase(), true
	}
	return StepLabel{}, false
}

func (l StepLabel) vllmPhase() StepLabel {
	l.BatchSize = l.Prefills + l.Decodes
	switch {
	case l.Prefills > 0 && l.Decodes > 0:
		l.Phase = PhaseMixed
	case l.Prefills > 0:
		l.Phase = PhasePrefill
	case l.Decodes > 0:
		l.Phase = PhaseDecode
	default:
		l.Phase = PhaseIdle
	}
	return l
}

// vllmKV reads Σkv from "sq<n>sk<n>sqsq<n>sqsk<n>".
func vllmKV(s string) (int64, bool) {
	m := vllmSum.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	return stepAtoi(m[2]), true
}

func stepFirstNum(s string) (int64, bool) {
	f := strings.FieldsFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if len(f) == 0 {
		return 0, false
	}
	return stepAtoi(f[0]), true
}

// sglangModes maps SGLang ForwardMode names to phases.
var sglangModes = map[string]StepPhase{
	"EXTEND": PhasePrefill, "PREFILL": PhasePrefill, "SPLIT_PREFILL": PhasePrefill, "DRAFT_EXTEND": PhasePrefill,
	"DECODE": PhaseDecode, "TARGET_VERIFY": PhaseDecode,
	"MIXED": PhaseMixed,
	"IDLE":  PhaseIdle, "DUMMY_FIRST": PhaseIdle,
}

func parseSGLang(name string) (StepLabel, bool) {
	m := sglStep.FindStringSubmatch(name)
	if m == nil {
		return StepLabel{}, false
	}
	l := unknownStepLabel("sglang")
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

func stepAtoi(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// StepGrammar is a user grammar: a regular expression whose named groups phase,
// bs and tokens fill the label.
type StepGrammar struct {
	re                *regexp.Regexp
	phase, bs, tokens int
}

// CompileStepGrammar compiles a --steps expression. It must name at least one of the
// groups phase, bs, tokens or match whole step names on its own.
func CompileStepGrammar(expr string) (*StepGrammar, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("--steps: %v", err)
	}
	return &StepGrammar{re: re, phase: re.SubexpIndex("phase"), bs: re.SubexpIndex("bs"), tokens: re.SubexpIndex("tokens")}, nil
}

// String returns the expression.
func (c *StepGrammar) String() string { return c.re.String() }

// Parse matches name; ok is false when it does not match.
func (c *StepGrammar) Parse(name string) (StepLabel, bool) {
	m := c.re.FindStringSubmatch(name)
	if m == nil {
		return StepLabel{}, false
	}
	l := unknownStepLabel("custom")
	if c.phase > 0 {
		l.Phase = StepPhaseOf(m[c.phase])
	}
	if c.bs > 0 {
		l.BatchSize = stepAtoi(m[c.bs])
	}
	if c.tokens > 0 {
		l.Tokens = stepAtoi(m[c.tokens])
	}
	return l, true
}

// StepPhaseOf maps a phase word of any engine (prefill, extend, context,
// decode, generation, generate, mixed, capture, idle) to a StepPhase.
func StepPhaseOf(word string) StepPhase {
	w := strings.ToLower(word)
	switch {
	case strings.Contains(w, "prefill") || strings.Contains(w, "extend") || strings.Contains(w, "context") || w == "prompt":
		return PhasePrefill
	case strings.Contains(w, "decode") || strings.Contains(w, "generat") || strings.Contains(w, "verify"):
		return PhaseDecode
	case strings.Contains(w, "mix"):
		return PhaseMixed
	case strings.Contains(w, "capture"):
		return PhaseCapture
	case strings.Contains(w, "idle"):
		return PhaseIdle
	}
	return PhaseUnknown
}
