package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/report"
	"github.com/tollgate-dev/tollgate/report/recommend"
	"github.com/tollgate-dev/tollgate/report/render"
	"github.com/tollgate-dev/tollgate/report/routes"
)

func init() { subcommands = append(subcommands, newCmdRecommend) }

// Output formats of `tollgate recommend`.
const (
	recommendTable = "table"
	recommendJSON  = "json"
	recommendYAML  = "yaml"
)

// RecommendOptions are the options of `tollgate recommend`.
type RecommendOptions struct {
	IO IOStreams
	// Results is the results file to recommend from.
	Results string
	// Policy is a policy file (YAML); "" is the default policy.
	Policy string
	// Out is where to write the route config; "" writes none.
	Out string
	// Route names the route in the written config.
	Route string
	// Format is table, json or yaml.
	Format string
}

func newCmdRecommend(io IOStreams) *cobra.Command { return newCmdRecommendWith(io, runRecommend) }

// newCmdRecommendWith builds the recommend command with runF doing the
// work, so tests can check flag parsing alone.
func newCmdRecommendWith(io IOStreams, runF func(*RecommendOptions) error) *cobra.Command {
	o := &RecommendOptions{IO: io}
	c := &cobra.Command{
		Use:   "recommend RESULTS.json",
		Short: "Recommend route timeouts from saved results, with the evidence, and write route config",
		Long: `Derive the route timeouts a gateway should run with from a results file: ADR 0016's
four (connect, first_token, idle, total), the content-level stream deadlines (ttft,
gap), ADR-0036's non-streaming head wait, and the batch path's item ceiling, attempts,
retry budget and (with a window in the policy) job deadline.

Each value comes with its basis (percentile and multiple), how many of the N healthy
calls measured it would have killed, a 95% upper bound on its false-kill rate, and how
long a stall goes unnoticed under it; warnings diagnose ping masking, intermediaries
that cut silent calls, mixed-mode routes, censored tails and thin data.

  table  the recommendation for a person (default)
  json   the recommendation object as the results file holds it
  yaml   the route config (SPEC §6), as -o writes it

--policy FILE overrides any multiple, percentile or floor (see 'go doc
github.com/tollgate-dev/tollgate/report/recommend.Policy'), for example:

  ttft: {multiple: 3}
  window: {start: "01:00", due: "07:00", margin: 30m, items: 50000, workers: 40}`,
		Example: `  tollgate recommend results.json
  tollgate recommend results.json -o routes.yaml && tollgate check-config routes.yaml
  tollgate recommend results.json --policy policy.yaml --format json`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			o.Results = args[0]
			switch o.Format {
			case recommendTable, recommendJSON, recommendYAML:
			default:
				return usageErrorf("--format %q: want table, json or yaml", o.Format)
			}
			if o.Route == "" {
				return usageErrorf("--route: want a route name")
			}
			return runF(o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.Policy, "policy", "", "recommendation policy `FILE` (YAML; keys not given keep their defaults)")
	f.StringVarP(&o.Out, "out", "o", "", "write the route config to `ROUTES.yaml`")
	f.StringVar(&o.Route, "route", "default", "route `NAME` in the written config")
	f.StringVar(&o.Format, "format", recommendTable, "output format: table|json|yaml")
	return c
}

// runRecommend loads the results and the policy, recommends, prints, and
// writes the route config. Unreadable or invalid input is a usage error
// (exit 2); results in which no call reached the target exit 3.
func runRecommend(o *RecommendOptions) error {
	r, err := report.LoadFile(o.Results)
	if err != nil {
		return usageErr(err)
	}
	p := recommend.DefaultPolicy()
	if o.Policy != "" {
		if p, err = recommend.LoadPolicy(o.Policy); err != nil {
			return usageErr(err)
		}
	}
	rec, err := recommend.Recommend(r, p)
	if err != nil {
		return &ExitError{Code: ExitNoMeasure, Err: fmt.Errorf("%s: %w", o.Results, err)}
	}
	var cfg bytes.Buffer
	if err := routes.Write(&cfg, recommend.ToRoutes(rec, o.Route)); err != nil {
		return err
	}
	switch o.Format {
	case recommendTable:
		err = render.WriteRecommendation(o.IO.Out, rec, render.FormatTable)
	case recommendJSON:
		enc := json.NewEncoder(o.IO.Out)
		enc.SetIndent("", "  ")
		if err = enc.Encode(rec); err != nil {
			err = fmt.Errorf("write recommendation: %w", err)
		}
	case recommendYAML:
		if _, err = o.IO.Out.Write(cfg.Bytes()); err != nil {
			err = fmt.Errorf("write route config: %w", err)
		}
	}
	if err != nil {
		return err
	}
	if o.Out == "" {
		return nil
	}
	if err := os.WriteFile(o.Out, cfg.Bytes(), 0o644); err != nil {
		return usageErr(fmt.Errorf("write route config: %w", err))
	}
	fmt.Fprintf(o.IO.ErrOut, "wrote route %q to %s (check it: tollgate check-config %s)\n", o.Route, o.Out, shellQuote(o.Out))
	return nil
}

// shellQuote quotes s for a shell when it holds anything but safe characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
