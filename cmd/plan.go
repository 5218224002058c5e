package cmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/report"
	"github.com/tollgate-dev/tollgate/report/plan"
)

func init() { subcommands = append(subcommands, newCmdPlan) }

// Formats of `tollgate plan`.
const (
	planFormatTable = "table"
	planFormatJSON  = "json"
)

// PlanOptions are the options of `tollgate plan`.
type PlanOptions struct {
	IO IOStreams
	// Input is the plan's input from the flags; Input.Measured is filled
	// from From when the command runs.
	Input plan.Input
	// From is a results file whose batch item histogram gives the item
	// time; "" for none.
	From string
	// Format is planFormatTable or planFormatJSON.
	Format string
}

// planFlags are the raw flag values, turned into PlanOptions in one place
// (planOptions).
type planFlags struct {
	items          int64
	mean           time.Duration
	workers        int
	start, due     string
	margin         time.Duration
	retryAllowance time.Duration
	from           string
	rpm            int
	format         string
}

func newCmdPlan(io IOStreams) *cobra.Command { return newCmdPlanWith(io, runPlan) }

// newCmdPlanWith builds the plan command with runF doing the work, so
// tests can check flag parsing without computing.
func newCmdPlanWith(io IOStreams, runF func(*PlanOptions) error) *cobra.Command {
	f := &planFlags{}
	c := &cobra.Command{
		Use:   "plan",
		Short: "The batch job-deadline arithmetic: work, wall clock, window, slack, job deadline, worst case",
		Long: `Work out whether a batch job fits the window its results are needed in, and the
job deadline to give it, showing every step:

  work          items x mean item time
  wall clock    work / workers (and, with --rpm, items / rpm: whichever is longer binds)
  window        --start to --due (a --due before --start is the next day)
  slack         window - wall clock
  job deadline  window - margin: when the job gives up, reports what is unprocessed and
                leaves a cursor
  worst case    items x retry allowance: what the job could spend with no job deadline

With --from, the item time comes from a batch run's item histogram (its mean, and its
p99 to show what a bad night costs).`,
		Example: `  tollgate plan --items 50000 --mean 8s --workers 40 --start 01:00 --due 07:00 \
      --margin 30m --retry-allowance 10m
  tollgate plan --items 50000 --from batch.json --workers 40 --start 22:00 --due 06:00 \
      --margin 30m --retry-allowance 10m --rpm 4000 --format json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o, err := planOptions(c, io, f)
			if err != nil {
				return err
			}
			return runF(o)
		},
	}
	fl := c.Flags()
	fl.Int64Var(&f.items, "items", 0, "number of items in the job (required)")
	fl.DurationVar(&f.mean, "mean", 0, "mean time per item, retries included (required unless --from)")
	fl.IntVar(&f.workers, "workers", 0, "items processed at once (required)")
	fl.StringVar(&f.start, "start", "", "time of day the job starts, `HH:MM` (required)")
	fl.StringVar(&f.due, "due", "", "time of day the results are needed, `HH:MM` (required)")
	fl.DurationVar(&f.margin, "margin", 0, "how long before --due the job must stop")
	fl.DurationVar(&f.retryAllowance, "retry-allowance", 0, "the most one item may spend retrying")
	fl.StringVar(&f.from, "from", "", "take the item time from a batch run's results `FILE`")
	fl.IntVar(&f.rpm, "rpm", 0, "the provider's requests-per-minute limit (0: none)")
	fl.StringVar(&f.format, "format", planFormatTable, "output format: table|json")
	return c
}

// planOptions turns the flags into options: the one place they are read.
// Every error is a usage error naming its flag.
func planOptions(c *cobra.Command, io IOStreams, f *planFlags) (*PlanOptions, error) {
	for _, name := range []string{"items", "workers", "start", "due"} {
		if !c.Flags().Changed(name) {
			return nil, usageErrorf("--%s is required (see 'tollgate plan --help')", name)
		}
	}
	switch {
	case f.from == "" && !c.Flags().Changed("mean"):
		return nil, usageErrorf("--mean or --from is required: the plan needs an item time")
	case f.from != "" && c.Flags().Changed("mean"):
		return nil, usageErrorf("--mean and --from both give the item time; use one")
	case f.format != planFormatTable && f.format != planFormatJSON:
		return nil, usageErrorf("--format %q: want one of %s", f.format, strings.Join([]string{planFormatTable, planFormatJSON}, ", "))
	}
	start, err := plan.ParseClock(f.start)
	if err != nil {
		return nil, usageErrorf("--start: %w", err)
	}
	due, err := plan.ParseClock(f.due)
	if err != nil {
		return nil, usageErrorf("--due: %w", err)
	}
	return &PlanOptions{
		IO: io,
		Input: plan.Input{
			Items:          f.items,
			Mean:           f.mean,
			Workers:        f.workers,
			Start:          start,
			Due:            due,
			Margin:         f.margin,
			RetryAllowance: f.retryAllowance,
			RPM:            f.rpm,
		},
		From:   f.from,
		Format: f.format,
	}, nil
}

// runPlan reads the measured item time when asked, computes the plan and
// writes it. Bad input (including an unreadable --from file) exits 2; a
// plan that does not fit its window is not an error: it prints warnings.
func runPlan(o *PlanOptions) error {
	in := o.Input
	if o.From != "" {
		r, err := report.LoadFile(o.From)
		if err != nil {
			return usageErr(fmt.Errorf("--from: %w", err))
		}
		m, err := plan.MeasuredFrom(r, o.From)
		if err != nil {
			return usageErr(fmt.Errorf("--from: %w", err))
		}
		in.Measured = m
	}
	p, err := plan.Compute(in)
	if err != nil {
		return usageErr(err)
	}
	if o.Format == planFormatJSON {
		return plan.WriteJSON(o.IO.Out, p)
	}
	return plan.WriteTable(o.IO.Out, p)
}
