package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/report"
	"github.com/tollgate-dev/tollgate/report/gate"
)

func init() { subcommands = append(subcommands, newCmdCompare) }

// Formats of `tollgate compare`.
const (
	compareFormatTable    = "table"
	compareFormatMarkdown = "markdown"
	compareFormatJSON     = "json"
)

var compareFormats = []string{compareFormatTable, compareFormatMarkdown, compareFormatJSON}

// CompareOptions are the options of `tollgate compare`.
type CompareOptions struct {
	IO IOStreams
	// Base and New are the results files compared.
	Base, New string
	// Gate holds the comparison's thresholds and the --fail-on gates;
	// its labels are the file names.
	Gate gate.CompareOptions
	// Format is one of compareFormats.
	Format string
}

// compareFlags are the raw flag values, turned into CompareOptions in one
// place (compareOptions).
type compareFlags struct {
	maxRegression string
	failOn        []string
	minTail       int
	format        string
}

func newCmdCompare(io IOStreams) *cobra.Command { return newCmdCompareWith(io, runCompare) }

// newCmdCompareWith builds the compare command with runF doing the work,
// so tests can check flag parsing without comparing.
func newCmdCompareWith(io IOStreams, runF func(*CompareOptions) error) *cobra.Command {
	f := &compareFlags{}
	c := &cobra.Command{
		Use:   "compare BASE.json NEW.json",
		Short: "Regression gate between two runs: each metric and percentile, both values, the change, the breaches",
		Long: `Compare a new run with a base run, path by path, metric by metric, at p50, p90,
p99 and p999 (recomputed from the HdrHistograms), and the error rate.

A percentile is a regression when it is worse than the base by more than
--max-regression percent, by at least 1 ms, and by more than noise: the 95%
confidence intervals of the two values do not overlap. Only what is comparable
is judged: percentile q of n samples needs n*(1-q) >= --min-tail samples beyond
it in both runs (with the default 10: p99 needs 1,000 samples, p999 10,000);
otherwise, or when the change is within noise, the row says "too few samples"
and neither passes nor fails. The error
rate may rise by 1 percentage point, and a larger rise fails only when it is
significant (one-sided two-proportion z-test, 95%).

--fail-on gates (SPEC grammar, as for probe) are judged on NEW.json.

Exit codes: 0 nothing regressed and every gate held; 1 a regression, a metric
missing from NEW.json, or a failed gate; 2 bad flags or an unreadable file.`,
		Example: `  tollgate compare base.json new.json
  tollgate compare base.json new.json --max-regression 15% --fail-on 'stream.ttft.p99>2s'
  tollgate compare base.json new.json --format markdown >> "$GITHUB_STEP_SUMMARY"`,
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			o, err := compareOptions(io, f, args)
			if err != nil {
				return err
			}
			return runF(o)
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.maxRegression, "max-regression", fmt.Sprint(gate.DefaultMaxRegression), "`PCT` a percentile may worsen before it is a regression (10 or 10%)")
	fl.StringArrayVar(&f.failOn, "fail-on", nil, "gate `EXPR` judged on NEW.json, e.g. 'stream.ttft.p99>2s' (repeatable)")
	fl.IntVar(&f.minTail, "min-tail", gate.DefaultMinTail, "samples that must lie beyond a percentile for it to be judged")
	fl.StringVar(&f.format, "format", compareFormatTable, "output format: "+strings.Join(compareFormats, "|"))
	return c
}

// compareOptions turns the flags into options: the one place they are
// read. Every error is a usage error naming its flag.
func compareOptions(io IOStreams, f *compareFlags, args []string) (*CompareOptions, error) {
	o := &CompareOptions{IO: io, Base: args[0], New: args[1], Format: f.format}
	if !slices.Contains(compareFormats, f.format) {
		return nil, usageErrorf("--format %q: want one of %s", f.format, strings.Join(compareFormats, ", "))
	}
	pct, err := gate.ParsePercent(f.maxRegression)
	if err != nil {
		return nil, usageErrorf("--max-regression: %w", err)
	}
	if f.minTail < 1 {
		return nil, usageErrorf("--min-tail %d: want at least 1", f.minTail)
	}
	o.Gate = gate.CompareOptions{MaxRegression: pct, MinTail: f.minTail, BaseLabel: o.Base, NewLabel: o.New}
	for _, s := range f.failOn {
		e, err := gate.ParseExpr(s)
		if err != nil {
			return nil, usageErr(err)
		}
		o.Gate.FailOn = append(o.Gate.FailOn, e)
	}
	return o, nil
}

// runCompare loads both files, compares them and writes the comparison.
// A file that cannot be read, is not a results file or holds a histogram
// that does not decode exits 2; a breach exits 1, with the headline on
// stderr so that a CI log shows it when stdout goes to a step summary.
func runCompare(o *CompareOptions) error {
	base, err := report.LoadFile(o.Base)
	if err != nil {
		return usageErr(err)
	}
	cur, err := report.LoadFile(o.New)
	if err != nil {
		return usageErr(err)
	}
	c, err := gate.Compare(base, cur, o.Gate)
	if err != nil {
		return usageErr(err)
	}
	switch o.Format {
	case compareFormatMarkdown:
		err = gate.WriteCompareMarkdown(o.IO.Out, c)
	case compareFormatJSON:
		err = writeCompareJSON(o.IO, c)
	default:
		err = gate.WriteCompareTable(o.IO.Out, c)
	}
	if err != nil {
		return err
	}
	if c.Breached {
		return &ExitError{Code: ExitGateFailed, Err: errors.New(c.Headline())}
	}
	return nil
}

// writeCompareJSON writes v as indented JSON to the command's output.
func writeCompareJSON(io IOStreams, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	if _, err := io.Out.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}
