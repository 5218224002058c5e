package report

import (
	"cmp"
	"fmt"
	"slices"
)

// Difference is one field in which two runs' set-ups differ.
type Difference struct {
	// Field is the results-file name of the field: "model", "clocks.gap",
	// "load.concurrency".
	Field string
	// A and B are the two values, formatted.
	A, B string
}

// String formats d as "model: a vs b".
func (d Difference) String() string { return fmt.Sprintf("%s: %s vs %s", d.Field, d.A, d.B) }

// ProbeDifferences lists the fields in which a and b were not measured by
// the same probe: target, api, model, mode, simulation and each clock.
// Shards of one probe agree on all of them (their load differs by design).
func ProbeDifferences(a, b Run) []Difference {
	var d differences
	add := d.add
	add("target", a.Target, b.Target)
	add("api", a.API, b.API)
	add("model", a.Model, b.Model)
	add("mode", a.Mode, b.Mode)
	add("simulated", a.Simulated, b.Simulated)
	add("sim_profile", a.SimProfile, b.SimProfile)
	add("clocks.connect", a.Clocks.Connect, b.Clocks.Connect)
	add("clocks.head", a.Clocks.Head, b.Clocks.Head)
	add("clocks.head_batch", a.Clocks.HeadBatch, b.Clocks.HeadBatch)
	add("clocks.first_token", a.Clocks.FirstToken, b.Clocks.FirstToken)
	add("clocks.idle", a.Clocks.Idle, b.Clocks.Idle)
	add("clocks.total", a.Clocks.Total, b.Clocks.Total)
	add("clocks.ttft", a.Clocks.TTFT, b.Clocks.TTFT)
	add("clocks.gap", a.Clocks.Gap, b.Clocks.Gap)
	add("clocks.item_ceiling", a.Clocks.ItemCeiling, b.Clocks.ItemCeiling)
	add("load.max_tokens", a.Load.MaxTokens, b.Load.MaxTokens)
	return d
}

// LoadDifferences lists the fields in which a's and b's load differ:
// concurrency, rate and arrival, which move latency without any change in
// the target.
func LoadDifferences(a, b Run) []Difference {
	var d differences
	add := d.add
	add("load.concurrency", a.Load.Concurrency, b.Load.Concurrency)
	add("load.rate", a.Load.Rate, b.Load.Rate)
	add("load.arrival", a.Load.Arrival, b.Load.Arrival)
	return d
}

// differences collects Differences.
type differences []Difference

// add records field when x and y print differently.
func (d *differences) add(field string, x, y any) {
	xs, ys := fmt.Sprint(x), fmt.Sprint(y)
	if xs != ys {
		*d = append(*d, Difference{Field: field, A: xs, B: ys})
	}
}

// SortPaths orders path names as tables show them: stream, batch, then any
// other name alphabetically. It sorts names in place and returns it.
func SortPaths(names []string) []string {
	rank := func(s string) int {
		switch s {
		case PathStream:
			return 0
		case PathBatch:
			return 1
		}
		return 2
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a, b))
	})
	return names
}
