package export

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/tracedx/tracedx/model"
)

// Formats lists the report formats Render knows.
var Formats = []string{"text", "md", "json"}

// Render writes r in the named format.
func Render(w io.Writer, r *model.Report, format string) error {
	switch format {
	case "", "text":
		return Text(w, r)
	case "md", "markdown":
		return Markdown(w, r)
	case "json":
		return JSON(w, r)
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
