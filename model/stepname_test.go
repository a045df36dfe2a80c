package model

import "testing"

func TestParseStepName(t *testing.T) {
	cases := []struct {
		name            string
		engine          string
		phase           StepPhase
		bs, tokens, kv  int64
		pre, dec, index int64
		extra           string
	}{
		// vLLM V1 decode (corpus: vLLM and SGLang MI300X traces).
		{"execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)", "vllm", PhaseDecode, 32, 32, 55086, 0, 32, -1, ""},
		// vLLM V1 mixed step (the example shape).
		{"execute_8192_context_9(sq8155sk8155sqsq7390433sqsk7390433)_generation_37(sq37sk20000sqsq37sqsk20000)", "vllm", PhaseMixed, 46, 8192, 28155, 9, 37, -1, ""},
		{"execute_4096_context_2(sq4096sk4096sqsq8388608sqsk8388608)_generation_0(sq0sk0sqsq0sqsk0)", "vllm", PhasePrefill, 2, 4096, 4096, 2, 0, -1, ""},
		// older vLLM (corpus: B200 trace): 888 prompt tokens of one request.
		{"execute_context_1(888_788544)_generation_0(0)", "vllm", PhasePrefill, 1, 888, -1, 1, 0, -1, "context=888_788544 generation=0"},
		{"execute_context_0(0)_generation_16(16)", "vllm", PhaseDecode, 16, 16, -1, 0, 16, -1, "context=0 generation=16"},
		{"execute_model", "vllm", PhaseUnknown, -1, -1, -1, -1, -1, -1, ""},
		// SGLang.
		{"step[DECODE bs=32]", "sglang", PhaseDecode, 32, -1, -1, -1, -1, -1, ""},
		{"step[EXTEND bs=15 toks=15360]", "sglang", PhasePrefill, 15, 15360, -1, -1, -1, -1, ""},
		{"step[MIXED bs=8 toks=700 chunk=1]", "sglang", PhaseMixed, 8, 700, -1, -1, -1, -1, "chunk=1"},
		{"step[IDLE]", "sglang", PhaseIdle, -1, -1, -1, -1, -1, -1, ""},
		{"step[TARGET_VERIFY bs=4]", "sglang", PhaseDecode, 4, -1, -1, -1, -1, -1, "mode=TARGET_VERIFY"},
		{"step[WEIRD bs=x]", "sglang", PhaseUnknown, -1, -1, -1, -1, -1, -1, "mode=WEIRD bs=x"},
		// Graph capture (vLLM FULL, SGLang DECODE).
		{"capture_32_FULL", "", PhaseCapture, 32, -1, -1, -1, -1, -1, "mode=FULL"},
		{"capture_32_DECODE", "", PhaseCapture, 32, -1, -1, -1, -1, -1, "mode=DECODE"},
		{"ProfilerStep#134", "pytorch", PhaseUnknown, -1, -1, -1, -1, -1, 134, ""},
	}
	for _, c := range cases {
		l, ok := ParseStepName(c.name)
		if !ok {
			t.Errorf("%s: not parsed", c.name)
			continue
		}
		want := StepLabel{Engine: c.engine, Phase: c.phase, Index: c.index, BatchSize: c.bs, Tokens: c.tokens, Prefills: c.pre, Decodes: c.dec, KVLen: c.kv, Extra: c.extra}
		if l != want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, l, want)
		}
	}
	for _, n := range []string{"execute", "execute_foo", "step", "step[", "capture_x_FULL", "ProfilerStep#", "aten::mm", "capture_graph", "stepper[DECODE]"} {
		if l, ok := ParseStepName(n); ok {
			t.Errorf("%s: parsed as %+v", n, l)
		}
	}
}

func TestStepGrammar(t *testing.T) {
	c, err := CompileStepGrammar(`^(?P<phase>prefill|decode)_bs(?P<bs>\d+)_t(?P<tokens>\d+)$`)
	if err != nil {
		t.Fatal(err)
	}
	l, ok := c.Parse("decode_bs64_t64")
	if !ok || l.Phase != PhaseDecode || l.BatchSize != 64 || l.Tokens != 64 || l.Engine != "custom" {
		t.Errorf("got %+v %v", l, ok)
	}
	if _, ok := c.Parse("forward"); ok {
		t.Error("matched forward")
	}
	if _, err := CompileStepGrammar("("); err == nil {
		t.Error("bad expression compiled")
	}
}

func TestStepPhaseOf(t *testing.T) {
	for w, p := range map[string]StepPhase{"Prefill": PhasePrefill, "EXTEND": PhasePrefill, "context": PhasePrefill, "generation": PhaseDecode, "decode": PhaseDecode, "MIXED": PhaseMixed, "cuda_graph_capture": PhaseCapture, "idle": PhaseIdle, "forward": PhaseUnknown} {
		if got := StepPhaseOf(w); got != p {
			t.Errorf("%s: %s, want %s", w, got, p)
		}
	}
}

func FuzzParseStepName(f *testing.F) {
	for _, s := range []string{"execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk1sqsq32sqsk1)", "step[EXTEND bs=1 toks=2]", "capture_1_FULL", "ProfilerStep#1", "execute_context_1(1_1)_generation_0(0)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, ok := ParseStepName(s)
		if ok && l.Phase == "" {
			t.Fatalf("%q: empty phase", s)
		}
	})
}
