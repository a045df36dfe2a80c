package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/tracedx/tracedx/internal/version"
)

// buildInfo is what `tracedx version` prints.
type buildInfo struct {
	Version   string `json:"version"`
	Module    string `json:"module,omitempty"`
	Commit    string `json:"commit,omitempty"`
	Date      string `json:"date,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
}

// readBuildInfo combines the release version (set with -ldflags -X) with
// what the Go toolchain recorded: the module version of a `go install
// …@vX.Y.Z` build, and the commit and its date of a build from a checkout.
func readBuildInfo() buildInfo {
	bi, _ := debug.ReadBuildInfo()
	return fromBuildInfo(bi)
}

func fromBuildInfo(bi *debug.BuildInfo) buildInfo {
	b := buildInfo{Version: version.Version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		return b
	}
	b.Module = bi.Main.Path
	if v := bi.Main.Version; v != "" && v != "(devel)" && version.Version == "0.1.0-dev" {
		b.Version = v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.Date = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

func newVersionCmd(g *globalOpts) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date",
		Long: `Print the version, the commit and its date (when built from a git checkout),
the Go version and the platform; -o json prints them as a JSON object.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			b := readBuildInfo()
			switch format {
			case "json":
				enc := json.NewEncoder(g.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(b)
			case "", "text":
				fmt.Fprintf(g.Stdout, "%s %s\n", version.Name, b.Version)
				if b.Commit != "" {
					dirty := ""
					if b.Modified {
						dirty = " (modified)"
					}
					fmt.Fprintf(g.Stdout, "commit:  %s%s\n", b.Commit, dirty)
				}
				if b.Date != "" {
					fmt.Fprintf(g.Stdout, "date:    %s\n", b.Date)
				}
				fmt.Fprintf(g.Stdout, "go:      %s %s\n", b.GoVersion, b.Platform)
				return nil
			}
			return usageError("-o %q: want text or json", format)
		},
	}
	cmd.Flags().StringVarP(&format, "output", "o", "text", "output format: text or json")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}
