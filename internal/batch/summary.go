package batch

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tracedx/tracedx/export/parquet"
)

// SummaryRows is how many inputs the summary lists one by one; beyond it
// only inputs that failed (unreadable, gate or fail-on) are listed.
const SummaryRows = 50

// WriteSummary writes the end-of-run table.
func WriteSummary(w io.Writer, s *Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "INPUT\tSTATUS\tFORMAT\tERR\tWARN\tINFO\tGATES\tNOTE")
	listAll := len(s.Results) <= SummaryRows
	hidden := 0
	for i := range s.Results {
		r := &s.Results[i]
		bad := r.Status != parquet.StatusOK || r.Failed()
		if !listAll && !bad {
			hidden++
			continue
		}
		status := r.Status
		switch {
		case r.Status == parquet.StatusOK && r.Failed():
			status = "failed"
		case r.Status == "":
			status = "not written"
		}
		gates := "-"
		if r.GatesTotal > 0 {
			gates = fmt.Sprintf("%d/%d", r.GatesTotal-r.GatesFailed, r.GatesTotal)
		}
		note := ""
		switch {
		case r.Error != "":
			note = truncate(firstLine(r.Error), 80)
		case r.Resumed:
			note = "done earlier"
		}
		format := r.Format
		if format == "" {
			format = "-"
		}
		if r.Status != parquet.StatusOK {
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\t-\t-\t%s\n", r.Item.Name, status, format, note)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", r.Item.Name, status, format, r.Errors, r.Warnings, r.Infos, gates, note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if hidden > 0 {
		fmt.Fprintf(w, "(%d passing inputs not listed)\n", hidden)
	}
	// Only inputs whose reports were written count as ok or failed: after
	// a full disk or an interrupt the rest are "not written".
	ok := s.Count(func(r *Result) bool { return r.Status == parquet.StatusOK && !r.Failed() })
	unreadable := s.Count(func(r *Result) bool { return r.Status == parquet.StatusError })
	failed := s.Count(func(r *Result) bool { return r.Status == parquet.StatusOK && r.Failed() })
	resumed := s.Count(func(r *Result) bool { return r.Resumed })
	shard := ""
	if s.Shards > 1 {
		shard = fmt.Sprintf(" (shard %d/%d of %d inputs)", s.Shard, s.Shards, s.Total)
	}
	notWritten := ""
	if n := len(s.Results) - ok - unreadable - failed; n > 0 {
		notWritten = fmt.Sprintf(", %d not written", n)
	}
	_, err := fmt.Fprintf(w, "%d inputs%s: %d ok, %d failed a gate, %d unreadable%s; %d done earlier\n",
		len(s.Results), shard, ok, failed, unreadable, notWritten, resumed)
	return err
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
