package export

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/tracedx/tracedx/model"
)

// Formats lists the report formats Render knows.
// "html" joins when package export/html is linked in.
var Formats = []string{"text", "md", "json"}

// Options tune the text, Markdown and HTML renderers.
type Options struct {
	// Full writes every row, finding and evidence window instead of the
	// ticket-sized default (--detail full).
	Full bool
	// Perfetto names the Perfetto export beside an HTML report (a path
	// relative to the page, see html.PerfettoBeside); findings then link to
	// it. "" = none.
	Perfetto string
	// MaxNameBytes caps the names written (kernels, ranges, files): a
	// longer one is cut and tagged with a hash (ShortenName). 0 means
	// DefaultMaxNameBytes; a negative value turns the cap off
	// (--max-name-bytes).
	MaxNameBytes int
}

// names returns the name cap of o.
func (o Options) names() names { return names(NameCap(o.MaxNameBytes)) }

// NameCap turns a MaxNameBytes option (0: DefaultMaxNameBytes, negative:
// none) into the maxBytes of ShortenName (0: none).
func NameCap(maxNameBytes int) int {
	switch {
	case maxNameBytes == 0:
		return DefaultMaxNameBytes
	case maxNameBytes < 0:
		return 0
	}
	return maxNameBytes
}

// htmlRenderer renders the HTML report; package export/html registers it
// (export cannot import it: html builds on this package's tables).
var htmlRenderer func(w io.Writer, r *model.Report, o Options) error

// RegisterHTML installs the HTML renderer and adds "html" to Formats.
func RegisterHTML(fn func(w io.Writer, r *model.Report, o Options) error) {
	if htmlRenderer == nil {
		Formats = append(Formats, "html")
	}
	htmlRenderer = fn
}

// Render writes r in the named format with default options.
func Render(w io.Writer, r *model.Report, format string) error {
	return RenderOpts(w, r, format, Options{})
}

// RenderOpts writes r in the named format.
func RenderOpts(w io.Writer, r *model.Report, format string, o Options) error {
	switch format {
	case "", "text":
		return textOpts(w, r, o)
	case "md", "markdown":
		return markdownOpts(w, r, o)
	case "json":
		return JSON(w, r)
	case "html":
		if htmlRenderer == nil {
			return fmt.Errorf("format html: the HTML renderer is not linked in (import export/html)")
		}
		return htmlRenderer(w, r, o)
	}
	return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(Formats, ", "))
}

// origins returns, per rank, the earliest GPU activity start: evidence times
// are shown as offsets from it.
func origins(r *model.Report) map[int]model.Time {
	o := map[int]model.Time{}
	for _, d := range r.Devices {
		if cur, ok := o[d.Rank]; !ok || d.Start < cur {
			o[d.Rank] = d.Start
		}
	}
	return o
}

func offset(orig map[int]model.Time, rank int, t model.Time) string {
	base, ok := orig[rank]
	if !ok {
		return fmt.Sprintf("t=%d ns", t)
	}
	return fmt.Sprintf("%+.3f ms", model.Duration(t-base).Millis())
}

func pct(num, den model.Duration) float64 {
	if den <= 0 {
		return 0
	}
	return 100 * float64(num) / float64(den)
}

func severityCounts(r *model.Report) (e, w, i int) {
	for _, f := range r.Findings {
		switch f.Severity {
		case model.SevError:
			e++
		case model.SevWarning:
			w++
		default:
			i++
		}
	}
	return
}

func rankLabel(rank int) string {
	if rank == model.NoRank {
		return "-"
	}
	return fmt.Sprint(rank)
}

func baseName(p string) string { return filepath.Base(p) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}
