package batch

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/tracedx/tracedx/export/parquet"
)

// progress reports on stderr: a bar redrawn with \r on a terminal, plain
// log lines otherwise.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	total    int
	n        int
	started  time.Time
	now      func() time.Time
	current  string
	lastDraw time.Time
	width    int
}

func newProgress(w io.Writer, tty bool, total int, now func() time.Time) *progress {
	return &progress{w: w, tty: tty, total: total, started: now(), now: now, width: 100}
}

func (p *progress) start(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.current = name
	if p.tty {
		p.draw(false)
	}
}

func (p *progress) done(r *Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if p.tty {
		if r.Error != "" && !r.Resumed {
			// Keep failures on screen: a line above the bar.
			fmt.Fprintf(p.w, "\r\x1b[Kbatch: error %s: %s\n", r.Item.Name, firstLine(r.Error))
			p.lastDraw = time.Time{}
		}
		p.draw(p.n == p.total)
		return
	}
	status := r.Status
	switch {
	case r.Resumed:
		status = "done earlier"
	case r.Status == parquet.StatusOK && r.Failed():
		status = "gate failed"
	}
	line := fmt.Sprintf("batch: [%d/%d] %s %s", p.n, p.total, status, r.Item.Name)
	if r.Error != "" {
		line += ": " + firstLine(r.Error)
	}
	fmt.Fprintln(p.w, line)
}

// draw redraws the bar; at most 10 times a second unless force.
func (p *progress) draw(force bool) {
	now := p.now()
	if !force && now.Sub(p.lastDraw) < 100*time.Millisecond {
		return
	}
	p.lastDraw = now
	elapsed := now.Sub(p.started).Seconds()
	rate := 0.0
	if elapsed > 0 {
		rate = float64(p.n) / elapsed
	}
	eta := "ETA --:--"
	switch {
	case p.n == p.total:
		eta = "in " + fmtDuration(now.Sub(p.started))
	case rate > 0:
		eta = "ETA " + fmtDuration(time.Duration(float64(p.total-p.n)/rate*float64(time.Second)))
	}
	const barW = 24
	fill := 0
	if p.total > 0 {
		fill = barW * p.n / p.total
	}
	bar := strings.Repeat("=", fill) + strings.Repeat(" ", barW-fill)
	// Keep the line within the terminal: the bar and counters take about
	// 55 columns; the current file gets the rest, cut from the left.
	cur := p.current
	if room := p.width - 56; len(cur) > room {
		if room < 8 {
			cur = ""
		} else {
			cur = "…" + cur[len(cur)-room+1:]
		}
	}
	fmt.Fprintf(p.w, "\r[%s] %d/%d %.1f/s %s %s\x1b[K", bar, p.n, p.total, rate, eta, cur)
}

func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.total > 0 {
		p.current = ""
		p.draw(true)
		fmt.Fprintln(p.w)
	}
}

func fmtDuration(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
