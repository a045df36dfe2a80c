package html_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/tracedx/tracedx/compare"
	"github.com/tracedx/tracedx/export"
	"github.com/tracedx/tracedx/export/html"
	"github.com/tracedx/tracedx/internal/corpus"
	"github.com/tracedx/tracedx/internal/pipeline"
)

// The browser test opens the reports of several corpus traces in a real
// headless Chromium (one browser, one tab per page) and checks what a reader
// gets: no console error (a blocked fetch or a CSP violation shows as one),
// no network request besides the page itself, every expected plot drawn with
// visible marks, the page loaded in under 2 s by its own navigation timing,
// and the dark theme applied when the reader prefers it. A screenshot of each
// page is written to the test's temp dir (and to $TRACEDX_SCREENSHOTS when
// set, to keep them).
//
// The browser is $TRACEDX_BROWSER or the first of browserNames on PATH; .ci/run
// installs Debian's chromium-headless-shell. Without one the test is skipped,
// and under CI=true it fails.

var browserNames = []string{"chromium-headless-shell", "headless_shell", "chromium", "chromium-browser", "google-chrome"}

func findBrowser(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TRACEDX_BROWSER"); p != "" {
		return p
	}
	for _, n := range browserNames {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("no headless browser found (%s; .ci/run installs chromium-headless-shell); CI=true requires one", strings.Join(browserNames, ", "))
	}
	t.Skipf("no headless browser found (%s); set TRACEDX_BROWSER or apt-get install chromium-headless-shell", strings.Join(browserNames, ", "))
	return ""
}

// browserPage is one report to open and the plots it must show (aria-label prefixes).
type browserPage struct {
	name  string
	html  []byte
	plots []string
}

func renderPage(t *testing.T, name string, files []string, plots ...string) browserPage {
	t.Helper()
	r, err := pipeline.Analyze(context.Background(), files, pipeline.Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b bytes.Buffer
	if err := export.RenderOpts(&b, r, "html", export.Options{}); err != nil {
		t.Fatal(err)
	}
	return browserPage{name: name, html: b.Bytes(), plots: plots}
}

func diffPage(t *testing.T, base, cand string, plots ...string) browserPage {
	t.Helper()
	side := func(p string) compare.Side {
		set, err := pipeline.Load(context.Background(), []string{p}, pipeline.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return compare.Side{Report: pipeline.AnalyzeSet(set, pipeline.Options{}), Set: set}
	}
	var b bytes.Buffer
	bs, cs := side(base), side(cand)
	if err := html.DiffReports(&b, compare.Compare(bs, cs, compare.Options{}), bs.Report, cs.Report); err != nil {
		t.Fatal(err)
	}
	return browserPage{name: "diff", html: b.Bytes(), plots: plots}
}

// browserPages builds the pages: the generated example and 4-rank job, and
// corpus traces of each kind.
func browserPages(t *testing.T) []browserPage {
	var ex bytes.Buffer
	if err := export.Render(&ex, exampleReport(), "html"); err != nil {
		t.Fatal(err)
	}
	var job bytes.Buffer
	if err := export.Render(&job, jobReport(), "html"); err != nil {
		t.Fatal(err)
	}
	pages := []browserPage{
		{name: "example", html: ex.Bytes(), plots: []string{"GPU time by class", "Busy/idle timeline", "Top kernels", "Step time", "Evidence windows"}},
		{name: "job", html: job.Bytes(), plots: []string{"GPU time by class", "Per-rank time", "Per-rank lateness", "Busy/idle timeline", "Top kernels", "Step time"}},
	}
	root := corpus.Dir(t, "corpus")
	c := func(p string) string { return filepath.Join(root, p) }
	var dlrm []string
	for i := 0; i < 8; i++ {
		dlrm = append(dlrm, c(fmt.Sprintf("kineto/param-dlrm-w8-rank%d.pt.trace.json.gz", i)))
	}
	pages = append(pages,
		renderPage(t, "kineto", []string{c("kineto/switchtransformers-a100-withstack-2threads-memory.json.gz")},
			"GPU time by class", "Busy/idle timeline", "Top kernels", "Allocator totals"),
		renderPage(t, "nsys", []string{c("nsys/cs336-ddp-nccl-2x3090-nsys2026.3.1.sqlite")},
			"GPU time by class", "Busy/idle timeline", "Top kernels", "Evidence windows"),
		renderPage(t, "nccl-tests", []string{c("nccl/a100x16-p4d-2node-efa-ofi-allreduce-info-mpitag-nccl2.9.9.log")},
			"all_reduce: bus bandwidth vs message size"),
		renderPage(t, "multi-rank", dlrm,
			"GPU time by class", "Per-rank time", "Busy/idle timeline", "Top kernels", "Step time", "Evidence windows"),
		diffPage(t, dlrm[0], dlrm[1], "Headline quantities", "Time per class", "Step time", "Kernel time by class", "Kernel time,"),
		// A vLLM V1 log with the KV cache at 94-96%, and a generated one
		// with preemptions and an OOM marked.
		renderPage(t, "vllm", []string{c("joblogs/gh-vllm21809-v1-kv94-96pct-8reqs-throughput-flat.log")}, servingPlots...),
		browserPage{name: "serving", html: servingPage(t, 2000, map[int]bool{1200: true, 1400: true, 1600: true}), plots: servingPlots},
	)
	// The EFA log's all-reduce is compared with the fabric's expected plateau.
	if nccl := pages[len(pages)-5]; !bytes.Contains(nccl.html, []byte("expected plateau")) {
		t.Errorf("%s page lacks the expected plateau line", nccl.name)
	}
	return pages
}

// extraPages reads every *.html of $TRACEDX_HTML_DIR (e.g. the reports/ of
// a batch run with --report-format html) to check them the same way, with
// no plot required by name.
func extraPages(t *testing.T) []browserPage {
	d := os.Getenv("TRACEDX_HTML_DIR")
	if d == "" {
		return nil
	}
	files, err := filepath.Glob(filepath.Join(d, "*.html"))
	if err != nil {
		t.Fatal(err)
	}
	var out []browserPage
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, browserPage{name: "dir-" + strings.TrimSuffix(filepath.Base(f), ".html"), html: b})
	}
	return out
}

// plotInfo is what the page says about one svg.plot.
type plotInfo struct {
	Label string  `json:"label"`
	Marks int     `json:"marks"`
	W     float64 `json:"w"`
	H     float64 `json:"h"`
}

const plotsJS = `Array.from(document.querySelectorAll('svg.plot')).map(s => {
  let n = 0;
  for (const m of s.querySelectorAll('.mark')) { const b = m.getBBox(); if (b.width > 0 || b.height > 0) n++; }
  const r = s.getBoundingClientRect();
  return {label: s.getAttribute('aria-label') || '', marks: n, w: r.width, h: r.height};
})`

// loadJS is the page's own load time: navigation start to the end of the
// load event, in ms (0 while the load event has not ended).
const loadJS = `(() => { const n = performance.getEntriesByType('navigation')[0]; return n ? n.loadEventEnd - n.startTime : 0; })()`

// pageEvents collects what the page did that a self-contained report must not.
type pageEvents struct {
	mu       sync.Mutex
	url      string
	problems []string
}

func (e *pageEvents) add(ev any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
			e.problems = append(e.problems, fmt.Sprintf("console %s", ev.Type))
		}
	case *runtime.EventExceptionThrown:
		e.problems = append(e.problems, "exception: "+ev.ExceptionDetails.Text)
	case *cdplog.EventEntryAdded:
		if ev.Entry.Level == cdplog.EntryLevelError || ev.Entry.Level == cdplog.EntryLevelWarning {
			e.problems = append(e.problems, fmt.Sprintf("log %s: %s", ev.Entry.Level, ev.Entry.Text))
		}
	case *network.EventRequestWillBeSent:
		if ev.Request.URL != e.url {
			e.problems = append(e.problems, "network request: "+ev.Request.URL)
		}
	}
}

func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	bin := findBrowser(t)
	pages := append(browserPages(t), extraPages(t)...)
	dir := t.TempDir()
	keep := os.Getenv("TRACEDX_SCREENSHOTS")

	// The profile lives outside t.TempDir: the browser's children may still
	// write there for a moment after it stops, which would fail the test's
	// own clean-up; it is removed with retries instead.
	profile, err := os.MkdirTemp("", "tracedx-browser-")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for i := 0; i < 50 && os.RemoveAll(profile) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	}()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.WindowSize(1100, 900), chromedp.UserDataDir(profile))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()
	if err := chromedp.Do(bctx); err != nil { // start the browser
		t.Fatalf("starting %s: %v", bin, err)
	}
	// The canary proves that the checks see a fetch: a page that loads an
	// image from the network must be caught.
	t.Run("canary", func(t *testing.T) {
		canary := []byte(`<!DOCTYPE html><html><head><title>canary</title></head><body><img src="http://127.0.0.1:9/x.png" alt="x"></body></html>`)
		res := openPage(t, bctx, filepath.Join(dir, "canary.html"), canary, false)
		if len(res.problems) == 0 {
			t.Error("a page fetching an image raised no problem: the checks are blind")
		}
	})
	for _, pg := range pages {
		t.Run(pg.name, func(t *testing.T) {
			res := openPage(t, bctx, filepath.Join(dir, pg.name+".html"), pg.html, pg.name == "multi-rank")
			for _, p := range res.problems {
				t.Error(p)
			}
			if res.loadMs <= 0 || res.loadMs >= 2000 {
				t.Errorf("page load took %.0f ms by its navigation timing, want under 2000", res.loadMs)
			}
			checkPlots(t, res.plots, pg.plots)
			if res.darkBg != "" && res.darkBg != "rgb(22, 22, 22)" {
				t.Errorf("dark theme: body background %s, want rgb(22, 22, 22)", res.darkBg)
			}
			for _, suffix := range []string{"", "-dark"} {
				png, ok := res.shots[suffix]
				if !ok {
					continue
				}
				name := pg.name + suffix + ".png"
				for _, d := range []string{dir, keep} {
					if d == "" {
						continue
					}
					if err := os.WriteFile(filepath.Join(d, name), png, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				t.Logf("screenshot %s: %d bytes", name, len(png))
			}
			t.Logf("%s: %d bytes, loaded in %.0f ms, %d plots", pg.name, len(pg.html), res.loadMs, len(res.plots))
		})
	}
}

// pageResult is what a tab saw of a page.
type pageResult struct {
	problems []string
	loadMs   float64
	plots    []plotInfo
	shots    map[string][]byte // "" (light), "-dark"
	darkBg   string            // body background under prefers-color-scheme: dark
}

// openPage writes the page to path, opens it in a new tab and reports what
// happened; with dark it also switches to the dark theme for a second shot.
func openPage(t *testing.T, bctx context.Context, path string, page []byte, dark bool) pageResult {
	t.Helper()
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	url := "file://" + path
	ev := &pageEvents{url: url}
	ctx, cancel := chromedp.NewContext(bctx, chromedp.WithListener(ev.add))
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	res := pageResult{shots: map[string][]byte{}}
	var err error
	for i := 0; i < 100 && res.loadMs <= 0; i++ {
		if res.loadMs, err = chromedp.Run(ctx, chromedp.Evaluate[float64](loadJS)); err != nil {
			t.Fatal(err)
		}
		if res.loadMs <= 0 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if res.plots, err = chromedp.Run(ctx, chromedp.Evaluate[[]plotInfo](plotsJS)); err != nil {
		t.Fatal(err)
	}
	if res.shots[""], err = chromedp.Run(ctx, topShot); err != nil {
		t.Fatal(err)
	}
	if dark {
		if err := chromedp.Do(ctx, darkTheme); err != nil {
			t.Fatal(err)
		}
		if res.darkBg, err = chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`)); err != nil {
			t.Fatal(err)
		}
		if res.shots["-dark"], err = chromedp.Run(ctx, topShot); err != nil {
			t.Fatal(err)
		}
	}
	// Screenshots and evaluations are round trips: every event the page
	// load caused has been delivered by now.
	ev.mu.Lock()
	res.problems = append(res.problems, ev.problems...)
	ev.mu.Unlock()
	return res
}

func checkPlots(t *testing.T, plots []plotInfo, want []string) {
	t.Helper()
	if len(plots) == 0 && len(want) > 0 {
		t.Fatal("no svg.plot on the page")
	}
	for _, p := range plots {
		if p.Marks == 0 || p.W < 100 || p.H < 10 {
			t.Errorf("plot %q: %d visible marks, %.0fx%.0f px", p.Label, p.Marks, p.W, p.H)
		}
	}
	for _, w := range want {
		found := false
		for _, p := range plots {
			found = found || strings.HasPrefix(p.Label, w)
		}
		if !found {
			t.Errorf("plot %q missing", w)
		}
	}
}

// maxShotHeight caps screenshots (CSS px): the plots are at the top; the
// tables below run to 20,000 px on multi-rank pages and only slow the test.
const maxShotHeight = 3200

// topShot is a PNG of the page's top, full width, at most maxShotHeight tall.
var topShot chromedp.Action[[]byte] = func(ctx context.Context, tg *chromedp.Target) ([]byte, error) {
	h, err := chromedp.Evaluate[float64](`document.documentElement.scrollHeight`)(ctx, tg)
	if err != nil {
		return nil, err
	}
	w, err := chromedp.Evaluate[float64](`document.documentElement.scrollWidth`)(ctx, tg)
	if err != nil {
		return nil, err
	}
	yes := true
	r, err := cdp.Call(ctx, tg, page.CaptureScreenshot, page.CaptureScreenshotParams{
		Format: page.CaptureScreenshotFormatPng, CaptureBeyondViewport: &yes, FromSurface: &yes,
		Clip: &page.Viewport{Width: w, Height: min(h, maxShotHeight), Scale: 1}})
	if err != nil {
		return nil, err
	}
	return r.Data, nil
}

// darkTheme emulates prefers-color-scheme: dark.
var darkTheme = chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
	_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
	return err
})
