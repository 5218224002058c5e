package cmd

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/report"
	"github.com/tollgate-dev/tollgate/report/render"
)

func init() { subcommands = append(subcommands, newCmdReport) }

// ReportOptions are the options of `tollgate report`.
type ReportOptions struct {
	IO IOStreams
	// Results is the results file to render.
	Results string
	// Format is one of render.Formats.
	Format string
	// Out is the file to write; "" writes to IO.Out.
	Out string
}

func newCmdReport(io IOStreams) *cobra.Command { return newCmdReportWith(io, runReport) }

// newCmdReportWith builds the report command with runF doing the work, so
// tests can check flag parsing without rendering.
func newCmdReportWith(io IOStreams, runF func(*ReportOptions) error) *cobra.Command {
	o := &ReportOptions{IO: io}
	c := &cobra.Command{
		Use:   "report RESULTS.json",
		Short: "Render saved results as a table, markdown, JSON or a self-contained HTML report",
		Long: `Render a results file written by 'tollgate probe -o' (or 'tollgate merge').

  table     per-path metrics, outcomes, gap histograms and the recommendation (terminal)
  markdown  the same as GitHub-flavoured markdown, for a CI step summary
  json      the results file itself, indented
  html      one self-contained HTML file with SVG charts (needs -o or a redirect)`,
		Example: `  tollgate report results.json
  tollgate report results.json --format markdown >> "$GITHUB_STEP_SUMMARY"
  tollgate report results.json --format html -o report.html`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			o.Results = args[0]
			if !render.ValidFormat(o.Format) {
				return usageErrorf("--format %q: want one of %s", o.Format, strings.Join(render.Formats, ", "))
			}
			return runF(o)
		},
	}
	c.Flags().StringVar(&o.Format, "format", render.FormatTable, "output format: "+strings.Join(render.Formats, "|"))
	c.Flags().StringVarP(&o.Out, "out", "o", "", "write to `FILE` instead of stdout")
	return c
}

// runReport loads the results file, renders it and writes it out. A file
// that cannot be read or is not a results file is a usage error (exit 2).
func runReport(o *ReportOptions) error {
	r, err := report.LoadFile(o.Results)
	if err != nil {
		return usageErr(err)
	}
	opt := render.Options{}
	if o.Out == "" {
		if isTerminal(o.IO.Out) {
			if o.Format == render.FormatHTML {
				return usageErrorf("--format html writes a whole HTML file: give -o FILE or redirect stdout")
			}
			opt.Color = os.Getenv("NO_COLOR") == ""
			opt.Width = terminalWidth(o.IO.Out)
		}
		return render.Write(o.IO.Out, r, o.Format, opt)
	}
	var buf bytes.Buffer
	if err := render.Write(&buf, r, o.Format, opt); err != nil {
		return err
	}
	if err := os.WriteFile(o.Out, buf.Bytes(), 0o644); err != nil {
		return usageErr(fmt.Errorf("write report: %w", err))
	}
	return nil
}
