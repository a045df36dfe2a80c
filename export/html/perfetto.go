package html

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/tracedx/tracedx/export/timeline"
	"github.com/tracedx/tracedx/model"
)

// PerfettoBeside returns the Perfetto export written beside the HTML report
// at path, as a name relative to the report's folder: for DIR/NAME.html,
// DIR/NAME.perfetto.json.gz, else DIR/NAME.perfetto.json, when it is a
// regular file; "" otherwise (stdout, no such file). This naming is the
// convention `tracedx export --to perfetto` users follow (docs/export.md).
func PerfettoBeside(path string) string {
	if path == "" || path == "-" {
		return ""
	}
	stem := strings.TrimSuffix(path, filepath.Ext(path))
	for _, ext := range []string{".perfetto.json.gz", ".perfetto.json"} {
		if st, err := os.Stat(stem + ext); err == nil && st.Mode().IsRegular() {
			return filepath.Base(stem + ext)
		}
	}
	return ""
}

// findingRefs names each finding RULE#N, the ref that export --around
// takes and that leads the name of its slices in the Perfetto export.
func findingRefs(r *model.Report) map[*model.Finding]string {
	refs := map[*model.Finding]string{}
	for i, ref := range timeline.FindingRefs(r.Findings) {
		refs[&r.Findings[i]] = ref
	}
	return refs
}

// perfettoLink says where a finding's slices are in the Perfetto file.
func perfettoLink(file, ref string) string {
	return "<p class=\"perfetto\">In Perfetto: <a href=\"" + esc((&url.URL{Path: file}).EscapedPath()) + "\">" + esc(file) +
		"</a> (open it in ui.perfetto.dev), search " + code(ref) + ": its slices on the <em>tracedx findings</em> track are these evidence windows.</p>\n"
}
