// Package merge combines the results files of the shards of one probe
// (`probe --shard I/N`, one per machine) into one results file, exactly:
// histograms by HdrHistogram merge (decode, merge, re-encode and
// re-summarize with report.Summarize), counts by sum, run metadata
// combined. The percentiles of the merge are those of one run that
// recorded every call.
//
// Merge refuses inputs that are not shards of one probe: a different
// target, api, model, mode, simulation, max tokens or any clock (see
// report.ProbeDifferences); a shard that appears twice; shards of different
// N; and a mix of sharded and unsharded files. Inputs without shard labels
// (repeated runs of one probe) may be merged with each other. A set with
// shards missing merges; MissingShards says which.
//
// The merged file has no recommendation: recommendations are derived from
// the merged histograms (tollgate recommend MERGED.json), not combined.
//
// The package imports probe/shard, a leaf package without dependencies, to
// read shard labels the way the probe writes them.
package merge

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tollgate-dev/tollgate/histo"
	"github.com/tollgate-dev/tollgate/probe/shard"
	"github.com/tollgate-dev/tollgate/report"
)

// MismatchError is Merge's refusal: inputs I and J (0-based, in the order
// given) are not shards of one probe.
type MismatchError struct {
	I, J int
	// Field is the field that differs ("model", "clocks.gap", "shard").
	Field string
	// A and B are the values of inputs I and J.
	A, B string
	// Reason replaces the "A vs B" wording for refusals that are not a
	// plain difference (a duplicate shard).
	Reason string
}

// Error names both inputs by position; callers with file names use Format.
func (e *MismatchError) Error() string {
	return e.Format(fmt.Sprintf("input %d", e.I+1), fmt.Sprintf("input %d", e.J+1))
}

// Format words the refusal with the inputs' names (file names).
func (e *MismatchError) Format(nameI, nameJ string) string {
	if e.Reason != "" {
		return fmt.Sprintf("%s and %s: %s", nameI, nameJ, e.Reason)
	}
	return fmt.Sprintf("%s and %s are not shards of one probe: %s %q vs %q", nameI, nameJ, e.Field, e.A, e.B)
}

// Merge merges the results of the shards in into one results value. in is
// not modified. Errors: fewer than one input, a refusal (*MismatchError),
// or a metric that cannot be merged exactly (no histogram, or one that
// does not decode).
func Merge(in []*report.Results) (*report.Results, error) {
	if len(in) == 0 {
		return nil, errors.New("merge: no results to merge")
	}
	for i, r := range in {
		if r == nil {
			return nil, fmt.Errorf("merge: input %d is nil", i+1)
		}
		if err := r.Validate(); err != nil {
			return nil, fmt.Errorf("merge: input %d: %w", i+1, err)
		}
		if d := report.ProbeDifferences(in[0].Run, r.Run); len(d) > 0 {
			return nil, &MismatchError{I: 0, J: i, Field: d[0].Field, A: d[0].A, B: d[0].B}
		}
	}
	shards, err := shardsOf(in)
	if err != nil {
		return nil, err
	}
	out := &report.Results{
		Schema: report.Schema,
		Tool:   in[0].Tool,
		Run:    mergeRun(in, shards),
		Paths:  map[string]*report.Path{},
	}
	if err := mergeSchedulerLag(out, in); err != nil {
		return nil, err
	}
	hists := map[string]*histo.Set{}
	for i, r := range in {
		for name, p := range r.Paths {
			if hists[name] == nil {
				hists[name] = histo.NewSet()
			}
			if err := addPath(out, hists[name], name, p); err != nil {
				return nil, fmt.Errorf("merge: input %d: %w", i+1, err)
			}
		}
	}
	for name, set := range hists {
		for _, metric := range set.Names() {
			m, err := report.Summarize(metric, set.Lookup(metric))
			if err != nil {
				return nil, fmt.Errorf("merge: paths.%s.metrics.%s: %w", name, metric, err)
			}
			out.Paths[name].Metrics[metric] = m
		}
	}
	return out, nil
}

// labelsOf is the shards an input covers: its own --shard label, or the
// list of an already merged file.
func labelsOf(r *report.Results) []string {
	if len(r.Run.Shards) > 0 {
		return r.Run.Shards
	}
	if r.Run.Load.Shard != "" {
		return []string{r.Run.Load.Shard}
	}
	return nil
}

// shardsOf checks the inputs' shard labels and returns them parsed, sorted
// by index; nil when no input is sharded.
func shardsOf(in []*report.Results) ([]shard.Shard, error) {
	firstSharded := len(labelsOf(in[0])) > 0
	seen := map[shard.Shard]int{} // shard -> input
	var out []shard.Shard
	for i, r := range in {
		labels := labelsOf(r)
		if (len(labels) > 0) != firstSharded {
			a, b := strings.Join(labelsOf(in[0]), ","), strings.Join(labels, ",")
			return nil, &MismatchError{I: 0, J: i, Field: "shard", A: orNone(a), B: orNone(b),
				Reason: fmt.Sprintf("shard %s vs a run without --shard: merge only the shards of one probe", a+b)}
		}
		for _, label := range labels {
			s, err := shard.ParseShard(label)
			if err != nil {
				return nil, fmt.Errorf("merge: input %d: run.load.shard: %w", i+1, err)
			}
			if j, dup := seen[s]; dup {
				return nil, &MismatchError{I: j, J: i, Field: "shard", A: s.String(), B: s.String(),
					Reason: fmt.Sprintf("shard %s appears twice: its calls would count twice", s)}
			}
			if len(out) > 0 && out[0].Count != s.Count {
				return nil, &MismatchError{I: seen[out[0]], J: i, Field: "shard", A: out[0].String(), B: s.String()}
			}
			seen[s] = i
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b shard.Shard) int { return a.Index - b.Index })
	return out, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// MissingShards lists the shards of r's probe that r does not hold
// ("2/4"), from r.Run.Shards; nil when r is complete or not sharded.
func MissingShards(r *report.Results) []string {
	if len(r.Run.Shards) == 0 {
		return nil
	}
	first, err := shard.ParseShard(r.Run.Shards[0])
	if err != nil {
		return nil
	}
	have := map[string]bool{}
	for _, s := range r.Run.Shards {
		have[s] = true
	}
	var missing []string
	for i := 1; i <= first.Count; i++ {
		s := shard.Shard{Index: i, Count: first.Count}.String()
		if !have[s] {
			missing = append(missing, s)
		}
	}
	return missing
}

// mergeRun combines the run metadata: the probe's set-up from the first
// input (all agree), the earliest start, the latest end, interrupted if
// any was. A shard's load is the probe's command line as every shard was
// given it (-n and --rate of the whole probe, which the engine splits;
// -c per shard), so the merged load is the first shard's, with the longest
// duration and no shard label. Unsharded runs ran one after another: their
// load is the first's, with requests summed.
func mergeRun(in []*report.Results, shards []shard.Shard) report.Run {
	run := in[0].Run
	run.Shards = nil
	run.SchedulerLag = nil
	run.Load.Shard = ""
	for _, s := range shards {
		run.Shards = append(run.Shards, s.String())
	}
	for i, r := range in {
		if r.Run.Started.Before(run.Started) {
			run.Started = r.Run.Started
		}
		if r.Run.Ended.After(run.Ended) {
			run.Ended = r.Run.Ended
		}
		run.Interrupted = run.Interrupted || r.Run.Interrupted
		run.Load.Duration = max(run.Load.Duration, r.Run.Load.Duration)
		if i > 0 && len(shards) == 0 {
			run.Load.Requests += r.Run.Load.Requests
		}
	}
	return run
}

// mergeSchedulerLag merges the pacer-lag histograms of the inputs that
// have one.
func mergeSchedulerLag(out *report.Results, in []*report.Results) error {
	var h *histo.Histogram
	for i, r := range in {
		if r.Run.SchedulerLag == nil {
			continue
		}
		d, err := decode(r.Run.SchedulerLag)
		if err != nil {
			return fmt.Errorf("merge: input %d: run.scheduler_lag: %w", i+1, err)
		}
		if h == nil {
			h = d
		} else {
			h.Merge(d)
		}
	}
	if h == nil {
		return nil
	}
	m, err := report.Summarize(histo.MetricSchedulerLag, h)
	if err != nil {
		return fmt.Errorf("merge: run.scheduler_lag: %w", err)
	}
	out.Run.SchedulerLag = m
	return nil
}

// decode reads a metric's histogram; a metric without one cannot be merged
// exactly and is refused rather than approximated from its summary.
func decode(m *report.Metric) (*histo.Histogram, error) {
	if m.HDR == "" {
		if m.Count == 0 {
			return histo.New(), nil
		}
		return nil, errors.New("no histogram (hdr is empty): it cannot be merged exactly")
	}
	return histo.Decode(m.HDR)
}

// addPath adds one input's path to out (counts) and to set (histograms).
func addPath(out *report.Results, set *histo.Set, name string, p *report.Path) error {
	dst := out.Paths[name]
	if dst == nil {
		dst = &report.Path{Outcomes: map[string]int64{}, Metrics: map[string]*report.Metric{}}
		out.Paths[name] = dst
	}
	dst.Calls += p.Calls
	addCounts(&dst.Outcomes, p.Outcomes)
	for class, phases := range p.Phases {
		if dst.Phases == nil {
			dst.Phases = map[string]map[string]int64{}
		}
		m := dst.Phases[class]
		addCounts(&m, phases)
		dst.Phases[class] = m
	}
	if p.Items != nil {
		if dst.Items == nil {
			dst.Items = &report.Items{}
		}
		dst.Items.Total += p.Items.Total
		dst.Items.Done += p.Items.Done
		dst.Items.Failed += p.Items.Failed
		dst.Items.Unprocessed += p.Items.Unprocessed
		addCounts(&dst.Items.Outcomes, p.Items.Outcomes)
	}
	for metric, m := range p.Metrics {
		h, err := decode(m)
		if err != nil {
			return fmt.Errorf("paths.%s.metrics.%s: %w", name, metric, err)
		}
		set.Get(metric).Merge(h)
	}
	return nil
}

// addCounts adds src into *dst, creating it when needed.
func addCounts(dst *map[string]int64, src map[string]int64) {
	if len(src) == 0 {
		return
	}
	if *dst == nil {
		*dst = make(map[string]int64, len(src))
	}
	for k, v := range src {
		(*dst)[k] += v
	}
}
