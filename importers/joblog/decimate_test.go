package joblog

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/importers"
)

// TestRequestDecimationNote: a log of more request records than are kept
// says the requests were thinned, and not that engine stats were (it has
// none), which is what the note said before.
func TestRequestDecimationNote(t *testing.T) {
	var b strings.Builder
	for i := range maxStats + maxStats/2 {
		ts := fmt.Sprintf("2024-06-05T08:%02d:%02d.%06dZ", i/60000%60, i/1000%60, i%1000*1000)
		b.WriteString(tgiLine(ts, "generate", "1.1s", "2ms", "100ms", "998ms", "10ms"))
		b.WriteByte('\n')
	}
	tr, err := Parse(strings.NewReader(b.String()), "tgi-big.log", importers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	want := "request records decimated: 1 in 2 kept"
	if !slices.Contains(tr.Caps.Notes, want) {
		t.Errorf("notes %q, want %q", tr.Caps.Notes, want)
	}
	for _, n := range tr.Caps.Notes {
		if strings.Contains(n, "engine stats") {
			t.Errorf("note %q: no engine stats were decimated", n)
		}
	}
	if len(tr.JobLog.Requests) == 0 || len(tr.JobLog.Requests) > maxStats {
		t.Errorf("%d requests kept", len(tr.JobLog.Requests))
	}
}
