package pipeline

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/export"
	"github.com/tracedx/tracedx/internal/corpus"
)

// TestMarkdownSizeDLRM8Ranks: the Markdown report of the 8-rank PARAM DLRM
// job (1,314 lines and 88,852 characters before) fits a GitHub comment.
func TestMarkdownSizeDLRM8Ranks(t *testing.T) {
	var files []string
	for _, f := range corpus.Files(t, "corpus/kineto", ".json.gz") {
		if strings.HasPrefix(filepath.Base(f), "param-dlrm-w8-rank") {
			files = append(files, f)
		}
	}
	if len(files) != 8 {
		t.Skipf("want the 8 param-dlrm-w8-rank* files, found %d", len(files))
	}
	r, err := Analyze(context.Background(), files, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var md, full bytes.Buffer
	if err := export.Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := export.RenderOpts(&full, r, "md", export.Options{Full: true}); err != nil {
		t.Fatal(err)
	}
	t.Logf("8 ranks: %d findings; Markdown %d bytes, %d lines (full %d bytes)", len(r.Findings), md.Len(), strings.Count(md.String(), "\n"), full.Len())
	if md.Len() > export.MaxMarkdownBytes {
		t.Errorf("Markdown is %d bytes, over %d", md.Len(), export.MaxMarkdownBytes)
	}
}
