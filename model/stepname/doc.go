// Package stepname parses the names that inference engines and training
// loops give their step annotations into a Label: phase (prefill, decode,
// mixed, capture, idle), batch size, tokens and KV length. Unknown fields
// are kept as text in Label.Extra, never dropped.
//
// Grammars recognised (as emitted by the engines' profiler annotations):
//
//   - vLLM V1: execute_<tokens>_context_<nctx>(<info>)_generation_<ngen>(<info>)
//     where <info> is sq<Σq>sk<Σkv>sqsq<Σq²>sqsk<Σq·kv> over the requests of
//     that kind (Σq query tokens, Σkv KV lengths). Phase from the request
//     counts: both > 0 mixed, only context prefill, only generation decode,
//     neither idle. Tokens is the leading number, KV length Σkv of both.
//   - vLLM (older): execute_context_<nctx>(<tok>_<...>)_generation_<ngen>(<...>):
//     the first number in each parenthesis is the tokens of those requests.
//   - vLLM V0: execute_model (phase unknown).
//   - SGLang: step[<MODE> bs=<n> toks=<n> ...] with ForwardMode names
//     (EXTEND/PREFILL → prefill, DECODE/TARGET_VERIFY → decode, MIXED,
//     IDLE); capture_<bs>_<MODE> (CUDA-graph capture, vLLM and SGLang).
//   - PyTorch: ProfilerStep#<n> (phase unknown, index n).
//   - Anything else through a user regular expression with the named
//     groups phase, bs and tokens (Custom).
//
// Place: model/stepname is imported by model (steps.go) and by the CLI for
// the --steps flag; it imports nothing of tracedx.
package stepname
