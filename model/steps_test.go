package model_test

import (
	"testing"

	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

func TestFindStepsEngineLoop(t *testing.T) {
	decode := fixture.StepSpec{Name: "execute_4_context_0(sq0sk0sqsq0sqsk0)_generation_4(sq4sk400sqsq4sqsk400)",
		Kernels: []string{"gemm", "attn", "gemm"}, KernelUS: 20, Graph: true, GapAfterUS: 50}
	specs := append([]fixture.StepSpec{{Name: "execute_256_context_1(sq256sk256sqsq65536sqsk65536)_generation_0(sq0sk0sqsq0sqsk0)",
		Kernels: []string{"gemm", "attn"}, KernelUS: 100, GapAfterUS: 10}}, fixture.Repeat(3, decode)...)
	tr := fixture.Inference("loop.json", specs)
	// A ProfilerStep window around everything is not a step once engine steps exist.
	tr.Ranges = append(tr.Ranges, model.Range{Start: 0, End: fixture.US(1e6), Thread: tr.Ranges[0].Thread, Kind: model.RangeStep,
		Name: tr.Intern("ProfilerStep#3"), Track: tr.InternTrack(model.CPUTrack)})
	tr.Finalize()
	steps := model.FindSteps(tr, nil)
	if len(steps) != 4 {
		t.Fatalf("%d steps, want 4: %+v", len(steps), steps)
	}
	p := steps[0]
	if p.Phase != model.PhasePrefill || p.Tokens != 256 || p.Kernels != 2 || p.GraphLaunches != 0 || p.Busy != 200_000 || p.IdleBeforeNext != 10_000 {
		t.Errorf("prefill step: %+v", p)
	}
	d := steps[1]
	if d.Phase != model.PhaseDecode || d.BatchSize != 4 || d.KVLen != 400 || d.Kernels != 3 || d.GraphLaunches != 1 || d.Busy != 60_000 || d.IdleBeforeNext != 50_000 {
		t.Errorf("decode step: %+v", d)
	}
	if steps[3].IdleBeforeNext != -1 || steps[3].Index != 3 {
		t.Errorf("last step: %+v", steps[3])
	}
	ph := model.StepPhases(steps)
	if len(ph) != 2 || ph[0].Phase != model.PhasePrefill || ph[1].Phase != model.PhaseDecode || ph[1].Count != 3 || ph[1].GraphLaunches != 3 {
		t.Fatalf("phases: %+v", ph)
	}
	if ph[1].IdleBetween != 100_000 { // the last decode step has no next step
		t.Errorf("decode idle between: %v", ph[1].IdleBetween)
	}
}

func TestFindStepsNestedSGLang(t *testing.T) {
	b := fixture.New("sgl.json", model.FormatKineto)
	th := b.Thread(1, "scheduler")
	b.Range(th, model.RangeUser, "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk900sqsq32sqsk900)", 0, 100)
	b.Range(th, model.RangeUser, "step[DECODE bs=32]", 1, 99)
	b.Range(th, model.RangeUser, "ProfilerStep#7", 200, 300)
	steps := model.FindSteps(b.Build(), nil)
	if len(steps) != 1 || steps[0].Engine != "sglang" || steps[0].BatchSize != 32 || steps[0].KVLen != 900 || steps[0].Correlated {
		t.Fatalf("%+v", steps)
	}
}

func TestFindStepsProfilerOnly(t *testing.T) {
	b := fixture.New("train.json", model.FormatKineto)
	th := b.Thread(1, "main")
	b.Range(th, model.RangeStep, "ProfilerStep#1", 0, 100)
	b.Range(th, model.RangeStep, "ProfilerStep#2", 120, 200)
	b.Range(th, model.RangeUser, "forward", 0, 50)
	steps := model.FindSteps(b.Build(), nil)
	if len(steps) != 2 || steps[0].Index != 0 || steps[0].StepLabel.Index != 1 || steps[0].IdleBeforeNext != 20_000 || steps[0].Phase != model.PhaseUnknown {
		t.Fatalf("%+v", steps)
	}
	c, _ := model.CompileStepGrammar(`^(?P<phase>forward)$`)
	steps = model.FindSteps(b.T, c)
	if len(steps) != 1 || steps[0].Name != "forward" || steps[0].Engine != "custom" {
		t.Fatalf("custom: %+v", steps)
	}
}

func TestOpBreakdownByPhase(t *testing.T) {
	specs := []fixture.StepSpec{
		{Name: "step[EXTEND bs=1 toks=512]", Kernels: []string{"sm90_xmma_gemm_bf16", "flash_fwd_kernel"}, KernelUS: 100, GapAfterUS: 10},
		{Name: "step[DECODE bs=1]", Kernels: []string{"sm90_xmma_gemm_bf16", "rms_norm_kernel"}, KernelUS: 10, GapAfterUS: 10},
	}
	tr := fixture.Inference("ops.json", specs)
	ops := model.OpBreakdown(tr, model.FindSteps(tr, nil))
	if len(ops) != 1 {
		t.Fatalf("%+v", ops)
	}
	o := ops[0]
	if o.ByOp[model.OpGEMM] != 110_000 || o.ByOp[model.OpAttention] != 100_000 || o.ByOp[model.OpNorm] != 10_000 {
		t.Errorf("by op: %v", o.ByOp)
	}
	if p := o.ByPhase[model.PhasePrefill]; p == nil || p[model.OpAttention] != 100_000 || p[model.OpNorm] != 0 {
		t.Errorf("prefill: %v", p)
	}
	if d := o.ByPhase[model.PhaseDecode]; d == nil || d[model.OpGEMM] != 10_000 {
		t.Errorf("decode: %v", d)
	}
}

// BenchmarkFindSteps: an engine loop of 2,000 decode steps of 200 kernels
// each (400k kernels), eager launches.
func BenchmarkFindSteps(b *testing.B) {
	ks := make([]string, 200)
	for i := range ks {
		ks[i] = "sm90_xmma_gemm_bf16"
	}
	tr := fixture.Inference("bench.json", fixture.Repeat(2000, fixture.StepSpec{Name: "step[DECODE bs=64]", Kernels: ks, KernelUS: 5, GapAfterUS: 30}))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(model.FindSteps(tr, nil)) != 2000 {
			b.Fatal("steps")
		}
	}
}

// TestFindStepsNVTX: engines profiled under Nsight Systems annotate steps
// with NVTX ranges of the same names; a GPU-annotation twin is not a step.
func TestFindStepsNVTX(t *testing.T) {
	b := fixture.New("nsys.sqlite", model.FormatNsys)
	th := b.Thread(1, "engine")
	b.Range(th, model.RangeNVTX, "step[DECODE bs=4]", 0, 50)
	b.Range(th, model.RangeNVTX, "step[EXTEND bs=2 toks=300]", 60, 200)
	b.T.Ranges = append(b.T.Ranges, model.Range{Start: 0, End: fixture.US(50), Thread: model.NoThread, Kind: model.RangeGPUAnnotation,
		Name: b.T.Intern("step[DECODE bs=4]"), Track: b.T.InternTrack(model.RangeTrack{Device: 0, Stream: 7})})
	steps := model.FindSteps(b.Build(), nil)
	if len(steps) != 2 || steps[0].Phase != model.PhaseDecode || steps[1].Phase != model.PhasePrefill || steps[1].Tokens != 300 || steps[0].IdleBeforeNext != 10_000 {
		t.Fatalf("%+v", steps)
	}
}
