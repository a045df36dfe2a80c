package timeline

import (
	"fmt"
	"strings"
)

// SchemaMarkdown renders every table's columns as Markdown; docs/timeline.md
// embeds it between schema markers (a test keeps the two in step).
func SchemaMarkdown() string {
	var sb strings.Builder
	for _, tab := range tables {
		fmt.Fprintf(&sb, "### `%s`\n\n%s\n\n", tab.name, tab.doc)
		sb.WriteString("| column | type | nullable | meaning |\n|---|---|---|---|\n")
		for i := range tab.cols {
			c := &tab.cols[i]
			null := "no"
			if c.nullable() {
				null = "yes"
			}
			doc := strings.ReplaceAll(c.doc, "|", "\\|")
			if c.kind == kEnum {
				doc += " (dictionary: " + strings.Join(c.enumNames, ", ") + ")"
			}
			fmt.Fprintf(&sb, "| `%s` | %s | %s | %s |\n", c.name, c.typeName(), null, doc)
		}
		sb.WriteString("\n")
	}
	return sb.String()
}
