package cmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/report"
	"github.com/tollgate-dev/tollgate/report/merge"
)

func init() { subcommands = append(subcommands, newCmdMerge) }

// MergeOptions are the options of `tollgate merge`.
type MergeOptions struct {
	IO IOStreams
	// Out is the merged results file to write.
	Out string
	// Inputs are the shards' results files.
	Inputs []string
}

func newCmdMerge(io IOStreams) *cobra.Command { return newCmdMergeWith(io, runMerge) }

// newCmdMergeWith builds the merge command with runF doing the work, so
// tests can check flag parsing without merging.
func newCmdMergeWith(io IOStreams, runF func(*MergeOptions) error) *cobra.Command {
	o := &MergeOptions{IO: io}
	c := &cobra.Command{
		Use:   "merge -o OUT.json IN.json...",
		Short: "Merge the results of the shards of one probe, exactly",
		Long: `Merge the results files of 'tollgate probe --shard I/N' runs (one per machine, or
one per pod of a Kubernetes Indexed Job) into one results file. Histograms merge
by HdrHistogram merge, so the merged percentiles are exactly those of one run that
made every call; counts add up; the run covers the earliest start to the latest
end, and lists the shards it holds.

Runs that are not shards of one probe are refused (exit 2): a different target,
api, model, mode, simulation, max tokens or clock, a shard given twice, shards
of different N, or shards mixed with unsharded runs. Missing shards are merged
with a warning. The merged file has no recommendation: run
'tollgate recommend OUT.json' to derive one from the merged histograms.`,
		Example: `  tollgate merge -o merged.json shard-0.json shard-1.json shard-2.json shard-3.json
  tollgate merge -o merged.json /out/shard-*.json && tollgate report merged.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if o.Out == "" {
				return usageErrorf("-o/--out is required: the merged results file to write (see 'tollgate merge --help')")
			}
			o.Inputs = args
			return runF(o)
		},
	}
	c.Flags().StringVarP(&o.Out, "out", "o", "", "write the merged results to `FILE` (required)")
	return c
}

// runMerge loads every input, merges them and writes the result. An
// unreadable input or a refused merge exits 2 naming the file(s).
func runMerge(o *MergeOptions) error {
	in := make([]*report.Results, len(o.Inputs))
	for i, path := range o.Inputs {
		r, err := report.LoadFile(path)
		if err != nil {
			return usageErr(err)
		}
		in[i] = r
	}
	merged, err := merge.Merge(in)
	if err != nil {
		var mm *merge.MismatchError
		if errors.As(err, &mm) {
			return usageErrorf("merge refused: %s", mm.Format(o.Inputs[mm.I], o.Inputs[mm.J]))
		}
		return usageErr(err)
	}
	if err := report.SaveFile(o.Out, merged); err != nil {
		return usageErr(err)
	}
	var b strings.Builder
	files := "files"
	if len(in) == 1 {
		files = "file"
	}
	fmt.Fprintf(&b, "merged %d %s", len(in), files)
	if len(merged.Run.Shards) > 0 {
		fmt.Fprintf(&b, " (shards %s)", strings.Join(merged.Run.Shards, " "))
	}
	for _, name := range []string{report.PathStream, report.PathBatch} {
		if p := merged.Paths[name]; p != nil {
			fmt.Fprintf(&b, ", %s: %d calls", name, p.Calls)
		}
	}
	fmt.Fprintf(&b, " -> %s\n", o.Out)
	if _, err := fmt.Fprint(o.IO.Out, b.String()); err != nil {
		return fmt.Errorf("write merge summary: %w", err)
	}
	if missing := merge.MissingShards(merged); len(missing) > 0 {
		if _, err := fmt.Fprintf(o.IO.ErrOut, "warning: shards missing from the merge: %s (the merged file covers part of the probe)\n", strings.Join(missing, " ")); err != nil {
			return fmt.Errorf("write merge warning: %w", err)
		}
	}
	return nil
}
