package cmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/report/routes"
)

func init() { subcommands = append(subcommands, newCmdCheckConfig) }

// CheckConfigOptions are the options of `tollgate check-config`.
type CheckConfigOptions struct {
	IO IOStreams
	// Path is the route config to check.
	Path string
}

func newCmdCheckConfig(io IOStreams) *cobra.Command {
	return newCmdCheckConfigWith(io, runCheckConfig)
}

// newCmdCheckConfigWith builds the check-config command with runF doing
// the work, so tests can check argument parsing alone.
func newCmdCheckConfigWith(io IOStreams, runF func(*CheckConfigOptions) error) *cobra.Command {
	o := &CheckConfigOptions{IO: io}
	return &cobra.Command{
		Use:   "check-config ROUTES.yaml",
		Short: "Validate a route config; refuse what cannot be right",
		Long: `Check a route config (SPEC §6 YAML) the way 'probe --route-config' loads it, and
refuse, before anything is sent, every configuration that cannot be right:

  - an unknown key (the nearest known key is suggested: frist_token -> first_token)
  - a value that is not a duration, or a duration that is not positive
    (a written 0 is refused; leave an optional key out to turn its clock off)
  - connect, first_token or idle missing (ADR 0016 gives every route all three)
  - a bound spent inside a cap that does not clear it by a whole margin:
    connect + first_token, stream.ttft and connect + non_streaming.head inside
    timeouts.total (and the head wait inside batch.item_ceiling); the margin is
    the bound itself, at most 30 s (ADR-0036)
  - a non_streaming.head shorter than first_token (ADR-0036 D3)
  - a duplicate route name

Exit 0 with a summary when the file passes (warnings are printed but do not
fail it), exit 2 with every refusal listed when it does not.`,
		Example: `  tollgate check-config routes.yaml
  tollgate recommend results.json -o routes.yaml && tollgate check-config routes.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			o.Path = args[0]
			return runF(o)
		},
	}
}

// runCheckConfig loads the file through the same loader as probe and
// prints one line a route; a refusal is a usage error (exit 2).
func runCheckConfig(o *CheckConfigOptions) error {
	cfg, err := routes.Load(o.Path)
	if err != nil {
		return usageErr(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ok, %d route%s\n", o.Path, len(cfg.Routes), pluralS(len(cfg.Routes)))
	for _, r := range cfg.Routes {
		fmt.Fprintf(&b, "  %s: %s\n", r.Name, routeSummary(r))
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	if _, err := fmt.Fprint(o.IO.Out, b.String()); err != nil {
		return fmt.Errorf("write check-config summary: %w", err)
	}
	return nil
}

// routeSummary lists the keys a route sets, in the order Write writes them.
func routeSummary(r routes.Route) string {
	var parts []string
	t, s, ns, b := r.Timeouts, r.Stream, r.NonStreaming, r.Batch
	for _, k := range []struct {
		key string
		d   time.Duration
	}{
		{"connect", t.Connect}, {"first_token", t.FirstToken}, {"idle", t.Idle}, {"total", t.Total},
		{"stream.ttft", s.TTFT}, {"stream.gap", s.Gap}, {"non_streaming.head", ns.Head},
		{"batch.item_ceiling", b.ItemCeiling}, {"batch.retry_budget", b.RetryBudget}, {"batch.job_deadline", b.JobDeadline},
	} {
		if k.d != 0 {
			parts = append(parts, k.key+" "+routes.FormatDuration(k.d))
		}
	}
	if b.Attempts != 0 {
		parts = append(parts, fmt.Sprintf("batch.attempts %d", b.Attempts))
	}
	return strings.Join(parts, ", ")
}

func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
