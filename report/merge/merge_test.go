package merge

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/histo"
	"github.com/tollgate-dev/tollgate/probe/shard"
	"github.com/tollgate-dev/tollgate/report"
)

// call is one synthetic recording: what the probe measures of one call.
type call struct {
	path     string
	outcome  string
	phase    string
	ttft     time.Duration
	gaps     []time.Duration
	total    time.Duration
	tokens   int64
	attempts int64
}

// recordings makes n deterministic calls with a long tail: lognormal TTFT
// and gaps, a few structural pauses, some timeouts, a batch path.
func recordings(n int) []call {
	rng := rand.New(rand.NewPCG(7, 11))
	out := make([]call, n)
	for i := range out {
		c := call{path: report.PathStream, outcome: "ok", phase: "done"}
		if i%3 == 0 {
			c.path = report.PathBatch
			c.attempts = 1 + int64(rng.IntN(3))
		}
		c.ttft = time.Duration(300e3*expNorm(rng, 0.8)) * time.Microsecond
		for range 5 + rng.IntN(40) {
			g := time.Duration(40e3*expNorm(rng, 0.5)) * time.Microsecond
			if rng.IntN(200) == 0 {
				g += 3 * time.Second // a structural pause
			}
			c.gaps = append(c.gaps, g)
		}
		c.total = c.ttft
		for _, g := range c.gaps {
			c.total += g
		}
		c.tokens = int64(len(c.gaps) * 4)
		switch rng.IntN(50) {
		case 0:
			c.outcome, c.phase = "timeout.gap", "mid_stream"
		case 1:
			c.outcome, c.phase = "http.429", "before_head"
		}
		out[i] = c
	}
	return out
}

func expNorm(rng *rand.Rand, sigma float64) float64 {
	x := rng.NormFloat64() * sigma
	return 1 + x*x + x // positive, skewed; exact shape does not matter
}

// buildFrom turns the calls it owns into a results value, as the probe
// does: histograms per path and metric, summarized by report.Summarize.
func buildFrom(t testing.TB, calls []call, s shard.Shard) *report.Results {
	t.Helper()
	sets := map[string]*histo.Set{}
	r := &report.Results{
		Schema: report.Schema,
		Tool:   report.Tool{Name: "tollgate", Version: "test"},
		Run: report.Run{
			Started: time.Date(2026, 12, 1, 3, 0, s.Index, 0, time.UTC), Ended: time.Date(2026, 12, 1, 3, 10, 10-s.Index, 0, time.UTC),
			Target: "http://127.0.0.1:9", API: "anthropic", Model: "claude-test", Mode: "both",
			// As the probe writes it: the probe's -n and --rate, -c per shard.
			Load:   report.Load{Requests: len(calls), Concurrency: 4, Rate: 20, Seed: 1, Shard: s.String()},
			Clocks: report.Clocks{Gap: report.Duration(10 * time.Second), Total: report.Duration(5 * time.Minute)},
		},
		Paths: map[string]*report.Path{},
	}
	for i, c := range calls {
		if !s.Owns(i) {
			continue
		}
		p := r.Paths[c.path]
		if p == nil {
			p = &report.Path{Outcomes: map[string]int64{}, Phases: map[string]map[string]int64{}, Metrics: map[string]*report.Metric{}}
			if c.path == report.PathBatch {
				p.Items = &report.Items{Outcomes: map[string]int64{}}
			}
			r.Paths[c.path] = p
			sets[c.path] = histo.NewSet()
		}
		p.Calls++
		p.Outcomes[c.outcome]++
		if p.Phases[c.outcome] == nil {
			p.Phases[c.outcome] = map[string]int64{}
		}
		p.Phases[c.outcome][c.phase]++
		set := sets[c.path]
		set.Record("ttft", c.ttft)
		set.Record("total", c.total)
		set.RecordValue("output_tokens", c.tokens)
		maxGap := time.Duration(0)
		for _, g := range c.gaps {
			set.Record("gap", g)
			maxGap = max(maxGap, g)
		}
		set.Record("max_gap", maxGap)
		if p.Items != nil {
			p.Items.Total++
			p.Items.Outcomes[c.outcome]++
			if c.outcome == "ok" {
				p.Items.Done++
			} else {
				p.Items.Failed++
			}
			set.RecordValue("attempts", c.attempts)
			set.Record("item", c.total*time.Duration(c.attempts))
		}
	}
	for name, set := range sets {
		for _, metric := range set.Names() {
			m, err := report.Summarize(metric, set.Lookup(metric))
			if err != nil {
				t.Fatal(err)
			}
			r.Paths[name].Metrics[metric] = m
		}
	}
	return r
}

// Split one set of recordings into N shards, merge them, and get exactly
// the numbers of the unsplit set.
func TestMergeOfShardsEqualsUnsplit(t *testing.T) {
	calls := recordings(3001)
	whole := buildFrom(t, calls, shard.Shard{})
	for _, n := range []int{1, 2, 3, 7} {
		var parts []*report.Results
		for i := 1; i <= n; i++ {
			parts = append(parts, buildFrom(t, calls, shard.Shard{Index: i, Count: n}))
		}
		// Give them in a scrambled order: the merge does not depend on it.
		rand.New(rand.NewPCG(uint64(n), 1)).Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		got, err := Merge(parts)
		if err != nil {
			t.Fatalf("N=%d: Merge: %v", n, err)
		}
		for name, want := range whole.Paths {
			p := got.Paths[name]
			if p == nil {
				t.Fatalf("N=%d: merged results lack path %s", n, name)
			}
			if p.Calls != want.Calls || !reflect.DeepEqual(p.Outcomes, want.Outcomes) ||
				!reflect.DeepEqual(p.Phases, want.Phases) || !reflect.DeepEqual(p.Items, want.Items) {
				t.Errorf("N=%d %s: counts differ:\n got %d %v %v %+v\nwant %d %v %v %+v", n, name,
					p.Calls, p.Outcomes, p.Phases, p.Items, want.Calls, want.Outcomes, want.Phases, want.Items)
			}
			if len(p.Metrics) != len(want.Metrics) {
				t.Errorf("N=%d %s: %d metrics, want %d", n, name, len(p.Metrics), len(want.Metrics))
			}
			for metric, wm := range want.Metrics {
				gm := p.Metrics[metric]
				if gm == nil {
					t.Errorf("N=%d: %s.%s missing", n, name, metric)
					continue
				}
				// Every summary number, the mean included, is exactly the
				// unsplit one, and so is the encoded histogram.
				if *gm != *wm {
					t.Errorf("N=%d %s.%s:\n got %+v\nwant %+v", n, name, metric, *gm, *wm)
				}
			}
		}
		if got.Run.Load.Rate != 20 || got.Run.Load.Requests != 3001 || got.Run.Load.Concurrency != 4 {
			t.Errorf("N=%d: merged load %+v, want the probe's: rate 20, 3001 requests, concurrency 4 per shard", n, got.Run.Load)
		}
		wantShards := []string{}
		for i := 1; i <= n; i++ {
			wantShards = append(wantShards, shard.Shard{Index: i, Count: n}.String())
		}
		if !reflect.DeepEqual(got.Run.Shards, wantShards) || MissingShards(got) != nil {
			t.Errorf("N=%d: shards %v (missing %v), want %v", n, got.Run.Shards, MissingShards(got), wantShards)
		}
		if got.Run.Load.Shard != "" {
			t.Errorf("N=%d: merged load still names shard %q", n, got.Run.Load.Shard)
		}
		if !got.Run.Started.Equal(time.Date(2026, 12, 1, 3, 0, 1, 0, time.UTC)) || !got.Run.Ended.Equal(time.Date(2026, 12, 1, 3, 10, 9, 0, time.UTC)) {
			t.Errorf("N=%d: run %v .. %v, want the earliest start and latest end", n, got.Run.Started, got.Run.Ended)
		}
	}
}

func TestMergeCombinesRunMetadata(t *testing.T) {
	calls := recordings(30)
	a := buildFrom(t, calls, shard.Shard{Index: 1, Count: 3})
	b := buildFrom(t, calls, shard.Shard{Index: 3, Count: 3})
	b.Run.Interrupted = true
	lag := histo.New()
	lag.Record(5 * time.Millisecond)
	m, err := report.Summarize(histo.MetricSchedulerLag, lag)
	if err != nil {
		t.Fatal(err)
	}
	a.Run.SchedulerLag, b.Run.SchedulerLag = m, m
	a.Recommendation = &report.Recommendation{Warnings: []string{"shard-level advice"}}
	got, err := Merge([]*report.Results{b, a})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Run.Interrupted {
		t.Error("a merge of an interrupted shard is not marked interrupted")
	}
	if got.Run.SchedulerLag == nil || got.Run.SchedulerLag.Count != 2 {
		t.Errorf("scheduler lag %+v, want both shards' samples", got.Run.SchedulerLag)
	}
	if got.Recommendation != nil {
		t.Error("a merged file kept one shard's recommendation")
	}
	if want := []string{"2/3"}; !reflect.DeepEqual(MissingShards(got), want) {
		t.Errorf("MissingShards = %v, want %v", MissingShards(got), want)
	}
	// A merged file merges again with the missing shard.
	c := buildFrom(t, calls, shard.Shard{Index: 2, Count: 3})
	all, err := Merge([]*report.Results{got, c})
	if err != nil {
		t.Fatal(err)
	}
	if MissingShards(all) != nil || all.Paths[report.PathStream].Calls != buildFrom(t, calls, shard.Shard{}).Paths[report.PathStream].Calls {
		t.Errorf("re-merge: shards %v, stream calls %d", all.Run.Shards, all.Paths[report.PathStream].Calls)
	}
	// Inputs are not modified.
	if a.Run.Load.Shard != "1/3" || len(a.Run.Shards) != 0 {
		t.Errorf("Merge changed an input's run: %+v", a.Run)
	}
}

func TestMergeRefusesOtherProbes(t *testing.T) {
	calls := recordings(20)
	mk := func(i, n int) *report.Results { return buildFrom(t, calls, shard.Shard{Index: i, Count: n}) }
	cases := []struct {
		name   string
		change func(a, b *report.Results)
		want   string
	}{
		{"target", func(_, b *report.Results) { b.Run.Target = "https://api.anthropic.com" },
			`input 1 and input 2 are not shards of one probe: target "http://127.0.0.1:9" vs "https://api.anthropic.com"`},
		{"api", func(_, b *report.Results) { b.Run.API = "openai" }, `api "anthropic" vs "openai"`},
		{"model", func(_, b *report.Results) { b.Run.Model = "other" }, `model "claude-test" vs "other"`},
		{"mode", func(_, b *report.Results) { b.Run.Mode = "stream" }, `mode "both" vs "stream"`},
		{"clock", func(_, b *report.Results) { b.Run.Clocks.Gap = report.Duration(time.Second) }, `clocks.gap "10s" vs "1s"`},
		{"duplicate shard", func(_, b *report.Results) { b.Run.Load.Shard = "1/2" }, "shard 1/2 appears twice"},
		{"shard count", func(_, b *report.Results) { b.Run.Load.Shard = "2/3" }, `shard "1/2" vs "2/3"`},
		{"unsharded", func(_, b *report.Results) { b.Run.Load.Shard = "" }, "shard 1/2 vs a run without --shard"},
		{"bad label", func(_, b *report.Results) { b.Run.Load.Shard = "9/2" }, "input 2: run.load.shard"},
		{"no histogram", func(_, b *report.Results) { b.Paths[report.PathStream].Metrics["ttft"].HDR = "" },
			"input 2: paths.stream.metrics.ttft: no histogram"},
	}
	for _, tc := range cases {
		a, b := mk(1, 2), mk(2, 2)
		tc.change(a, b)
		_, err := Merge([]*report.Results{a, b})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	// The refusal carries both values for a caller that names files.
	a, b := mk(1, 2), mk(2, 2)
	b.Run.Model = "other"
	_, err := Merge([]*report.Results{a, b})
	var mm *MismatchError
	if !errors.As(err, &mm) || mm.Format("a.json", "b.json") != `a.json and b.json are not shards of one probe: model "claude-test" vs "other"` {
		t.Errorf("MismatchError: %v", err)
	}
	if _, err := Merge(nil); err == nil {
		t.Error("Merge of nothing succeeded")
	}
}

// Runs without --shard are repeated runs of one probe and may merge.
func TestMergeUnshardedRuns(t *testing.T) {
	calls := recordings(40)
	a, b := buildFrom(t, calls, shard.Shard{}), buildFrom(t, calls, shard.Shard{})
	got, err := Merge([]*report.Results{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if got.Paths[report.PathStream].Calls != 2*a.Paths[report.PathStream].Calls || got.Run.Shards != nil {
		t.Errorf("two runs merged into %d stream calls, shards %v", got.Paths[report.PathStream].Calls, got.Run.Shards)
	}
	if got.Run.Load.Rate != a.Run.Load.Rate || got.Run.Load.Requests != 80 {
		t.Errorf("repeated runs: load %+v, want the first's rate and summed requests", got.Run.Load)
	}
}
