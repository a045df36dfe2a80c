package html_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/export"
	"github.com/tracedx/tracedx/internal/pipeline"
)

// servingLog writes a vLLM V1 log (loggers.py stats lines every 10 s, the
// 0.11 "Preemptions: N" field) of n stats lines: the KV cache fills to
// 99%, the queue grows, preemptions at the lines of preemptAt (3 each),
// and a CUDA OOM traceback line without a time near the end.
func servingLog(n int, preemptAt map[int]bool) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		sec := 6*3600 + 10*i
		kv := min(30+float64(i)*70/float64(n/2), 99)
		wait, pre := 0, ""
		if kv >= 99 {
			wait = (i - n/2) / 10
		}
		if preemptAt[i] {
			pre = "Preemptions: 3, "
		}
		fmt.Fprintf(&b, "INFO 07-28 %02d:%02d:%02d [loggers.py:123] Engine 000: Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, Running: %d reqs, Waiting: %d reqs, %sGPU KV cache usage: %.1f%%, Prefix cache hit rate: 12.0%%\n",
			sec/3600, sec/60%60, sec%60, 800+float64(i%7)*50, 2400-float64(i%5)*40, 48+i%3, wait, pre, kv)
		if i == n-3 {
			b.WriteString("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 GiB is free. Of the allocated memory 75.00 GiB is allocated by PyTorch, and 1.50 GiB is reserved by PyTorch but unallocated.\n")
		}
	}
	return b.String()
}

func servingPage(t testing.TB, n int, preemptAt map[int]bool) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "serve.log")
	if err := os.WriteFile(path, []byte(servingLog(n, preemptAt)), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := pipeline.Analyze(context.Background(), []string{path}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.ToolVersion = "test"
	var b bytes.Buffer
	if err := export.Render(&b, r, "html"); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

var servingPlots = []string{"Engine throughput (tokens/s)", "Engine requests running and waiting", "KV cache usage (%)"}

// TestServingPlots: an engine log of 2,000 stats lines gives the three
// plots, each with the 5 preemption lines (15 preemptions) and the OOM
// marked, every series downsampled to at most 600 points, the same bytes
// on each render.
func TestServingPlots(t *testing.T) {
	at := map[int]bool{1200: true, 1400: true, 1600: true, 1800: true, 1900: true}
	page := servingPage(t, 2000, at)
	if !bytes.Equal(page, servingPage(t, 2000, at)) {
		t.Fatal("two renders differ")
	}
	s := string(page)
	checkSelfContained(t, s)
	svgs := regexp.MustCompile(`(?s)<svg [^>]*aria-label="([^"]*)".*?</svg>`).FindAllStringSubmatch(s, -1)
	found := 0
	for _, m := range svgs {
		title := m[1]
		if !strings.Contains(title, "vllm-v1 Engine 000, serve.log") {
			continue
		}
		found++
		if n := strings.Count(m[0], `class="mark event c-sync"`); n != 5 {
			t.Errorf("%s: %d preemption lines, want 5", title, n)
		}
		if !strings.Contains(m[0], ">preemptions (15)<") || !strings.Contains(m[0], ">OOMs (1)<") {
			t.Errorf("%s: legend lacks the preemption and OOM counts", title)
		}
		if n := strings.Count(m[0], `class="mark event c-ref"`); n != 1 {
			t.Errorf("%s: %d OOM lines, want 1", title, n)
		}
		for _, pts := range regexp.MustCompile(`<polyline [^>]*points="([^"]*)"`).FindAllStringSubmatch(m[0], -1) {
			if n := len(strings.Fields(pts[1])); n > 600 || n < 300 {
				t.Errorf("%s: a series of %d points, want 300..600 after downsampling", title, n)
			}
		}
	}
	if found != 3 {
		t.Fatalf("%d serving plots, want 3", found)
	}
	for _, p := range servingPlots {
		if !strings.Contains(s, `aria-label="`+p) {
			t.Errorf("plot %q missing", p)
		}
	}
	if !strings.Contains(s, ">h from the first stats line<") {
		t.Error("the x axis is not hours although every stats line has a time and they span 5.5 h")
	}
}

// TestServingPlotsShortLog: a log of 3 stats lines gets a marker per point
// and no preemption legend.
func TestServingPlotsShortLog(t *testing.T) {
	s := string(servingPage(t, 3, nil))
	if n := strings.Count(s, `<circle class="mark`); n != 5*3 {
		t.Errorf("%d point markers, want 15 (5 series of 3 points)", n)
	}
	if strings.Contains(s, ">preemptions (") {
		t.Error("a preemption legend without preemptions")
	}
}

// BenchmarkServingRender renders the page of a 20,000-line engine log (the
// serving plots downsample each series to 600 points).
func BenchmarkServingRender(b *testing.B) {
	path := filepath.Join(b.TempDir(), "serve.log")
	if err := os.WriteFile(path, []byte(servingLog(20000, map[int]bool{12000: true, 15000: true})), 0o644); err != nil {
		b.Fatal(err)
	}
	r, err := pipeline.Analyze(context.Background(), []string{path}, pipeline.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var out bytes.Buffer
		if err := export.Render(&out, r, "html"); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(out.Len()))
	}
}
