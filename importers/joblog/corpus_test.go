package joblog

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/internal/corpus"
	"github.com/tracedx/tracedx/model"
)

// summary condenses what a log produced into one comparable line.
func summary(j *model.JobLog) string {
	var b strings.Builder
	fmt.Fprintf(&b, "src=%s ranks=%v", strings.Join(j.Sources, ","), j.Ranks)
	for _, h := range j.Hosts {
		fmt.Fprintf(&b, " host=%s%v%v", h.Host, h.Ranks, h.Facts.TransportUse)
	}
	if j.NCCL.RingChannels > 0 {
		fmt.Fprintf(&b, " rings=%d", j.NCCL.RingChannels)
	}
	for _, w := range j.Watchdog {
		fmt.Fprintf(&b, " %s(r%d", w.Kind, w.Rank)
		if w.SeqNum >= 0 {
			fmt.Fprintf(&b, " seq=%d %s n=%d to=%d", w.SeqNum, w.Op, w.NumelIn, w.TimeoutMs)
		}
		if w.LastEnqueued >= 0 {
			fmt.Fprintf(&b, " at=%d enq=%d done=%d", w.AtWork, w.LastEnqueued, w.LastCompleted)
		}
		b.WriteString(")")
	}
	if len(j.Stats) > 0 {
		var gen, kv, run, wait []string
		for _, s := range j.Stats {
			gen = append(gen, fmt.Sprint(s.GenTPS))
			kv = append(kv, fmt.Sprintf("%.3g", s.KVUsage))
			run = append(run, fmt.Sprint(s.Running))
			wait = append(wait, fmt.Sprint(s.Waiting))
		}
		fmt.Fprintf(&b, " stats=%d %s/%s gen=%s kv=%s run=%s wait=%s", len(j.Stats), j.Stats[0].Engine, j.Stats[0].Kind,
			strings.Join(gen, ","), strings.Join(kv, ","), strings.Join(run, ","), strings.Join(wait, ","))
	}
	for _, s := range j.Spec {
		fmt.Fprintf(&b, " spec(%.3g len=%.3g k=%d)", s.AcceptRate, s.MeanAcceptLen, s.NumSpecTokens)
	}
	for _, e := range j.Events {
		fmt.Fprintf(&b, " %s(%s %.3g %d)", e.Kind, e.Mode, e.Seconds, e.Bytes)
	}
	for _, c := range j.Capacity {
		fmt.Fprintf(&b, " cap(%s blocks=%d/%d kvtok=%d conc=%.4gx@%d kvB=%d seqs=%d util=%.3g init=%.3g)", c.Engine, c.GPUBlocks, c.CPUBlocks,
			c.KVTokens, c.MaxConcurrency, c.MaxConcurrencyTokens, c.KVMemoryBytes, c.MaxNumSeqs, c.GPUMemUtil, c.InitSeconds)
	}
	return b.String()
}

// corpusWant is what each real excerpt of ../shared/corpus/joblogs yields,
// checked by reading the logs (see their MANIFEST.tsv).
var corpusWant = map[string]string{
	"gh-blazux9-vllm-v1-specdecode-accept42-54pct-kv70pct-3reqs.log": "src=vllm-v1 ranks=[] stats=2 vllm-v1/stats gen=34.1,38.6 kv=0.701,0.701 run=3,3 wait=0,0" +
		" spec(0.542 len=2.08 k=2) spec(0.424 len=1.85 k=2)",
	"gh-llamafactory7396-train-w8-watchdog-timeout-allreduce-seq1580-multirank-excerpt.log": "src=c10d ranks=[0 3 4]" +
		" timeout(r0 seq=1580 ALLREDUCE n=466119168 to=600000) timeout(r4 seq=1580 ALLREDUCE n=466119168 to=600000)" +
		" last-work(r0 at=1580 enq=1582 done=1579) last-work(r3 at=1580 enq=1582 done=1579)",
	"gh-mellea416-vllm-v0-startup-profiling-cudablocks-maxconc70x-graph2s.log": "src=vllm ranks=[] graph-capture( 2 139586437)" +
		" cap(vllm blocks=36184/2340 kvtok=-1 conc=70.67x@8192 kvB=66400194396 seqs=-1 util=0.8 init=5.13)",
	"gh-sglang10053-prefill-decode-cudagraph-1req-cached-tokens.log": "src=sglang ranks=[] stats=7 sglang/prefill gen=-1,1.06,84.2,-1,3.17,81.97,-1" +
		" kv=0,0,0,0,0,0,0 run=0,1,1,0,1,1,0 wait=0,0,0,0,0,0,0",
	"gh-sglang14972-decode-usage0.94-queue5-6reqs-cudagraph.log": "src=sglang ranks=[] stats=5 sglang/decode gen=446.45,445.85,443.41,440.85,445.73" +
		" kv=0.94,0.94,0.94,0.94,0.94 run=6,6,6,6,6 wait=5,5,5,5,5",
	"gh-sglang1612-prefill-batches-queue38-to-18-usage0-to-0.77.log": "src=sglang ranks=[] stats=7 sglang/prefill gen=-1,-1,-1,-1,-1,-1,-1" +
		" kv=0,0.04,0.18,0.33,0.48,0.62,0.77 run=0,1,4,9,13,17,21 wait=0,38,34,30,26,22,18",
	"gh-sglang3909-decode-8reqs-usage0.13-throughput-187-184.log": "src=sglang ranks=[] stats=9 sglang/decode" +
		" gen=186.64,185.93,186.99,185.91,184.27,184.96,185.33,185.12,184.38 kv=0.12,0.13,0.13,0.13,0.13,0.13,0.13,0.13,0.13" +
		" run=8,8,8,8,8,8,8,8,8 wait=0,0,0,0,0,0,0,0,0",
	"gh-trtllmbackend217-ifb-iteration-stats-json.log": "src=trtllm ranks=[] stats=1 trtllm/iteration gen=-1 kv=0.00195 run=1 wait=-1" +
		" cap(trtllm blocks=513/-1 kvtok=32832 conc=-1x@-1 kvB=-1 seqs=64 util=-1 init=-1)",
	"gh-vllm21809-v1-kv94-96pct-8reqs-throughput-flat.log": "src=vllm-v1 ranks=[] stats=6 vllm-v1/stats gen=240.8,241.6,241.6,240.8,240.8,240" +
		" kv=0.939,0.943,0.947,0.95,0.954,0.958 run=8,8,8,8,8,8 wait=0,0,0,0,0,0",
	"gh-vllm27073-v1-docker-ts-wrapped-lines-kv88-93pct-38reqs.log": "src=vllm-v1 ranks=[] stats=3 vllm-v1/stats gen=843.6,852.1,794.7" +
		" kv=0.885,0.898,0.932 run=38,38,39 wait=0,0,0",
	"gh-vllm28228-v1-startup-kvmem2.30GiB-kvsize75840-maxconc2.48x.log": "src=vllm ranks=[]" +
		" cap(vllm blocks=-1/-1 kvtok=75840 conc=2.48x@120000 kvB=2469606195 seqs=-1 util=-1 init=-1)",
	"gh-vllm37307-v1-waiting90-to-66-prefill-24ktps.log": "src=vllm-v1 ranks=[] stats=5 vllm-v1/stats gen=18.1,35.4,52.6,69.6,83.7" +
		" kv=0.193,0.309,0.425,0.542,0.654 run=10,16,22,28,34 wait=90,84,78,72,66",
	"gh-vllm5458-aws-gpu4-tp4-trees-p2p-cumem-excerpt.log":        "src=nccl ranks=[0 1 2 3] host=ip-172-31-13-247[0 1 2 3][{P2P/CUMEM 5}] rings=4",
	"gh-vllm5458-tp4-watchdog-timeout-allreduce-seq1-excerpt.log": "src=c10d ranks=[0] timeout(r0 seq=1 ALLREDUCE n=1 to=600000) last-work(r0 at=1 enq=1 done=0) failed(r0)",
	"gh-vllm6102-v0-recompute-preempt-then-traceback.log":         "src=vllm-v0 ranks=[] preemption(RECOMPUTE -1 -1)",
	"gh-vllm6201-mixtral-tp2-trees-p2p-ipc-read-excerpt.log":      "src=nccl ranks=[0 1] host=set-zw04-wmannengine-text2vec-st01[0 1][{P2P/IPC/read 6}]",
	"gh-vllm6636-a100x4-tp4-hang-p2p-ipc-read-rings-excerpt.log":  "src=nccl ranks=[0 1 2 3] host=8a100-5[0 1 2 3][{P2P/IPC/read 13}]",
}

// TestCorpus imports every real excerpt: no error, no warning, Validate
// passes and the model holds what the log says.
func TestCorpus(t *testing.T) {
	files := corpus.Files(t, "corpus/joblogs", ".log")
	seen := map[string]bool{}
	for _, path := range files {
		name := filepath.Base(path)
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			tr, err := Parse(f, name, importers.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Validate(); err != nil {
				t.Fatal(err)
			}
			for _, w := range tr.Warnings {
				t.Errorf("warning %s: %s", w.Position, w.Message)
			}
			want, ok := corpusWant[name]
			if !ok {
				t.Fatalf("no expectation for %s; it produced:\n%s", name, summary(tr.JobLog))
			}
			if got := summary(tr.JobLog); got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
	var missing []string
	for n := range corpusWant {
		if !seen[n] {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 && len(files) > 0 {
		t.Errorf("expected corpus files not found: %v", missing)
	}
}

// TestSniffCorpus: every job and engine log is claimed with at least 70,
// the NCCL-only excerpts included (a job prints NCCL_DEBUG lines at init);
// an nccl-tests log with its header or result table never is.
func TestSniffCorpus(t *testing.T) {
	imp := New()
	for _, path := range corpus.Files(t, "corpus/joblogs", ".log") {
		head, err := importers.Head(path)
		if err != nil {
			t.Fatal(err)
		}
		if s := imp.Sniff(head); s < 70 {
			t.Errorf("%s: sniff %d", filepath.Base(path), s)
		}
	}
	for _, path := range corpus.Files(t, "corpus/nccl", ".log") {
		head, err := importers.Head(path)
		if err != nil {
			t.Fatal(err)
		}
		if s := imp.Sniff(head); s >= 80 {
			t.Errorf("%s: nccl-tests log sniffed as joblog (%d)", filepath.Base(path), s)
		}
	}
}
