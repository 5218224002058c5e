package gate

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/report"
)

// row finds the row of path, metric and stat, failing the test if absent.
func row(t *testing.T, c *Comparison, path, metric, stat string) Row {
	t.Helper()
	for _, r := range c.Rows {
		if r.Path == path && r.Metric == metric && r.Stat == stat {
			return r
		}
	}
	t.Fatalf("no row %s.%s.%s in %+v", path, metric, stat, c.Rows)
	return Row{}
}

func compare(t *testing.T, base, cur *report.Results, opt CompareOptions) *Comparison {
	t.Helper()
	c, err := Compare(base, cur, opt)
	if err != nil {
		t.Fatalf("Compare: %v", err)
	}
	return c
}

func TestCompareRegressionAndImprovement(t *testing.T) {
	ttft := spread(2000, ms(100), ms(1000))
	gap := spread(20000, ms(20), ms(200))
	base := buildResults(t, map[string]pathSpec{"stream": {calls: 2000, outcomes: map[string]int64{"ok": 2000},
		metrics: map[string][]int64{"ttft": ttft, "gap": gap}}})
	cur := buildResults(t, map[string]pathSpec{"stream": {calls: 2000, outcomes: map[string]int64{"ok": 2000},
		metrics: map[string][]int64{"ttft": scaled(ttft, 1.3), "gap": scaled(gap, 0.7)}}})
	c := compare(t, base, cur, CompareOptions{MaxRegression: 10})

	// ttft got 30% slower: p50, p90 and p99 (20 samples beyond it) are
	// regressions; p999 has 2 samples beyond it and is not judged.
	for _, stat := range []string{"p50", "p90", "p99"} {
		r := row(t, c, "stream", "ttft", stat)
		if r.Status != StatusRegression {
			t.Errorf("ttft %s: status %s (%+v), want regression", stat, r.Status, r)
		}
		if r.ChangePct < 29 || r.ChangePct > 31 {
			t.Errorf("ttft %s: change %.2f%%, want about +30%%", stat, r.ChangePct)
		}
	}
	if r := row(t, c, "stream", "ttft", "p999"); r.Status != StatusTooFew || !strings.Contains(r.Note, "needs 10000") {
		t.Errorf("ttft p999 on 2000 samples: %+v, want too few samples (needs 10000)", r)
	}
	// gap got 30% faster: improved, never a breach; p999 has 20 beyond it.
	for _, stat := range []string{"p50", "p90", "p99", "p999"} {
		if r := row(t, c, "stream", "gap", stat); r.Status != StatusImproved {
			t.Errorf("gap %s: status %s, want improved", stat, r.Status)
		}
	}
	if !c.Breached || !strings.HasPrefix(c.Headline(), "REGRESSION: 3 of ") {
		t.Errorf("breached %v, headline %q", c.Breached, c.Headline())
	}

	// The same improvement alone does not fail.
	c = compare(t, cur, cur, CompareOptions{MaxRegression: 10})
	c2 := compare(t, base, buildResults(t, map[string]pathSpec{"stream": {calls: 2000, outcomes: map[string]int64{"ok": 2000},
		metrics: map[string][]int64{"ttft": ttft, "gap": scaled(gap, 0.5)}}}), CompareOptions{MaxRegression: 10})
	for _, cc := range []*Comparison{c, c2} {
		if cc.Breached {
			t.Errorf("no regression, but breached: %s", cc.Headline())
		}
		if !strings.HasPrefix(cc.Headline(), "OK: ") {
			t.Errorf("headline %q", cc.Headline())
		}
	}
}

func TestCompareThreshold(t *testing.T) {
	ttft := spread(5000, ms(100), ms(1000))
	base := buildResults(t, map[string]pathSpec{"stream": {calls: 5000, outcomes: map[string]int64{"ok": 5000}, metrics: map[string][]int64{"ttft": ttft}}})
	cur := buildResults(t, map[string]pathSpec{"stream": {calls: 5000, outcomes: map[string]int64{"ok": 5000}, metrics: map[string][]int64{"ttft": scaled(ttft, 1.05)}}})
	// +5% is within 10%.
	if c := compare(t, base, cur, CompareOptions{MaxRegression: 10}); c.Breached {
		t.Errorf("+5%% against a 10%% allowance breached: %s", c.Headline())
	}
	// and beyond 3%.
	c := compare(t, base, cur, CompareOptions{MaxRegression: 3})
	if r := row(t, c, "stream", "ttft", "p90"); r.Status != StatusRegression || !strings.Contains(r.Note, "more than the 3% allowed") {
		t.Errorf("+5%% against 3%%: %+v", r)
	}
}

func TestCompareTooFewSamplesNotJudged(t *testing.T) {
	// 50 calls: p50 has 25 beyond it (judged); p90 has 5, p99 0.5: not.
	small := spread(50, ms(100), ms(1000))
	base := buildResults(t, map[string]pathSpec{"stream": {calls: 50, outcomes: map[string]int64{"ok": 50}, metrics: map[string][]int64{"ttft": small}}})
	worse := append(append([]int64{}, small[:45]...), ms(9000), ms(9000), ms(9000), ms(9000), ms(9000))
	cur := buildResults(t, map[string]pathSpec{"stream": {calls: 50, outcomes: map[string]int64{"ok": 50}, metrics: map[string][]int64{"ttft": worse}}})
	c := compare(t, base, cur, CompareOptions{MaxRegression: 10})
	for _, stat := range []string{"p90", "p99", "p999"} {
		r := row(t, c, "stream", "ttft", stat)
		if r.Status != StatusTooFew {
			t.Errorf("%s on 50 samples: %s, want too few samples", stat, r.Status)
		}
	}
	if r := row(t, c, "stream", "ttft", "p50"); r.Status != StatusOK {
		t.Errorf("p50 unchanged: %+v", r)
	}
	if c.Breached {
		t.Errorf("a tail change on 50 samples breached: %s", c.Headline())
	}
	// MinTail 1 is the loosest rule: p99 needs 100 samples, p999 1000,
	// computed exactly (1000 * (1 - 0.999) is 1, not 0.999...).
	for _, tc := range []struct {
		n    int64
		p    Percentile
		want bool
	}{{99, ComparedPercentiles[2], false}, {100, ComparedPercentiles[2], true}, {999, ComparedPercentiles[3], false}, {1000, ComparedPercentiles[3], true}} {
		if got := enoughTail(tc.n, tc.p, 1); got != tc.want {
			t.Errorf("enoughTail(%d, %s, 1) = %v", tc.n, tc.p.Name, got)
		}
	}
}

func TestCompareNoiseFloor(t *testing.T) {
	// Loopback connects: 100 µs -> 300 µs is +200% and below 1 ms.
	base := buildResults(t, map[string]pathSpec{"stream": {calls: 1000, outcomes: map[string]int64{"ok": 1000}, metrics: map[string][]int64{"connect": spread(1000, 50, 100)}}})
	cur := buildResults(t, map[string]pathSpec{"stream": {calls: 1000, outcomes: map[string]int64{"ok": 1000}, metrics: map[string][]int64{"connect": spread(1000, 150, 300)}}})
	c := compare(t, base, cur, CompareOptions{MaxRegression: 10})
	if c.Breached {
		t.Errorf("a sub-millisecond change breached: %s", c.Headline())
	}
	if r := row(t, c, "stream", "connect", "p50"); !strings.Contains(r.Note, "noise floor") {
		t.Errorf("connect p50 note %q, want the noise floor", r.Note)
	}
	// With a floor of 1 µs it is a regression.
	c = compare(t, base, cur, CompareOptions{MaxRegression: 10, MinDelta: 1000})
	if !c.Breached {
		t.Error("with a 1 µs floor, +200% should breach")
	}
}

func TestCompareDirections(t *testing.T) {
	tps := spread(1000, 20, 80)
	tokens := spread(1000, 100, 500)
	base := buildResults(t, map[string]pathSpec{"stream": {calls: 1000, outcomes: map[string]int64{"ok": 1000},
		metrics: map[string][]int64{"tps": tps, "output_tokens": tokens}}})
	slower := buildResults(t, map[string]pathSpec{"stream": {calls: 1000, outcomes: map[string]int64{"ok": 1000},
		metrics: map[string][]int64{"tps": scaled(tps, 0.5), "output_tokens": scaled(tokens, 3)}}})
	c := compare(t, base, slower, CompareOptions{MaxRegression: 10})
	// Fewer tokens per second is worse.
	if r := row(t, c, "stream", "tps", "p50"); r.Status != StatusRegression {
		t.Errorf("tps halved: %s", r.Status)
	}
	// Longer answers are neither better nor worse.
	if r := row(t, c, "stream", "output_tokens", "p50"); r.Status != StatusNotJudged {
		t.Errorf("output_tokens tripled: %s, want not judged", r.Status)
	}
	c = compare(t, slower, base, CompareOptions{MaxRegression: 10})
	if r := row(t, c, "stream", "tps", "p50"); r.Status != StatusImproved || c.Breached {
		t.Errorf("tps doubled: %s, breached %v", r.Status, c.Breached)
	}
}

func TestCompareMissingMetricAndPath(t *testing.T) {
	base := buildResults(t, map[string]pathSpec{
		"stream": {calls: 100, outcomes: map[string]int64{"ok": 100}, metrics: map[string][]int64{"ttft": spread(100, ms(1), ms(9)), "gap": spread(100, ms(1), ms(9))}},
		"batch":  {calls: 100, outcomes: map[string]int64{"ok": 100}, metrics: map[string][]int64{"item": spread(100, ms(1), ms(9))}},
	})
	cur := buildResults(t, map[string]pathSpec{
		"stream": {calls: 100, outcomes: map[string]int64{"ok": 100}, metrics: map[string][]int64{"ttft": spread(100, ms(1), ms(9)), "tps": {5}}},
	})
	c := compare(t, base, cur, CompareOptions{MaxRegression: 10})
	if r := row(t, c, "stream", "gap", ""); r.Status != StatusMissing {
		t.Errorf("gap gone from the new run: %s", r.Status)
	}
	if r := row(t, c, "batch", "item", ""); r.Status != StatusMissing {
		t.Errorf("batch path gone from the new run: %s", r.Status)
	}
	if r := row(t, c, "stream", "tps", ""); r.Status != StatusOnlyNew {
		t.Errorf("tps only in the new run: %s", r.Status)
	}
	if !c.Breached || !strings.Contains(c.Headline(), "2 metrics measured in base missing in new") {
		t.Errorf("headline %q", c.Headline())
	}
}

func TestCompareErrorRate(t *testing.T) {
	mk := func(calls, ok int64) *report.Results {
		return buildResults(t, map[string]pathSpec{"stream": {calls: calls, outcomes: map[string]int64{"ok": ok, "timeout.gap": calls - ok}}})
	}
	cases := []struct {
		name      string
		base, cur *report.Results
		want      Status
	}{
		// 1% -> 5% of 1000 calls: up 4 points and significant.
		{"significant rise", mk(1000, 990), mk(1000, 950), StatusRegression},
		// 0 -> 1 of 20 calls: up 5 points, not significant.
		{"rise on few calls", mk(20, 20), mk(20, 19), StatusTooFew},
		// 1% -> 1.5%: within the 1 point allowed.
		{"small rise", mk(1000, 990), mk(1000, 985), StatusOK},
		// 5% -> 1%: better.
		{"fall", mk(1000, 950), mk(1000, 990), StatusImproved},
		// No calls on one side.
		{"no calls", mk(0, 0), mk(1000, 990), StatusTooFew},
	}
	for _, tc := range cases {
		c := compare(t, tc.base, tc.cur, CompareOptions{MaxRegression: 10})
		r := row(t, c, "stream", "errors", "rate")
		if r.Status != tc.want {
			t.Errorf("%s: %s (%+v), want %s", tc.name, r.Status, r, tc.want)
		}
		if c.Breached != (tc.want == StatusRegression) {
			t.Errorf("%s: breached %v", tc.name, c.Breached)
		}
	}
}

// Percentiles come from the histograms: a summary that disagrees with its
// histogram is ignored, and a file without histograms uses its summary.
func TestCompareReadsHistograms(t *testing.T) {
	ttft := spread(1000, ms(100), ms(1000))
	base := buildResults(t, map[string]pathSpec{"stream": {calls: 1000, outcomes: map[string]int64{"ok": 1000}, metrics: map[string][]int64{"ttft": ttft}}})
	cur := buildResults(t, map[string]pathSpec{"stream": {calls: 1000, outcomes: map[string]int64{"ok": 1000}, metrics: map[string][]int64{"ttft": ttft}}})
	cur.Paths["stream"].Metrics["ttft"].P50 = 99999
	c := compare(t, base, cur, CompareOptions{MaxRegression: 10})
	if r := row(t, c, "stream", "ttft", "p50"); r.Status != StatusOK || r.New > 600 {
		t.Errorf("p50 read from the summary, not the histogram: %+v", r)
	}
	cur.Paths["stream"].Metrics["ttft"].HDR = ""
	c = compare(t, base, cur, CompareOptions{MaxRegression: 10})
	if r := row(t, c, "stream", "ttft", "p50"); r.Status != StatusRegression || !strings.Contains(r.Note, "from the summary") {
		t.Errorf("without a histogram: %+v", r)
	}
	cur.Paths["stream"].Metrics["ttft"].HDR = "HISTFAAAgarbage"
	if _, err := Compare(base, cur, CompareOptions{NewLabel: "new.json"}); err == nil || !strings.Contains(err.Error(), "new.json: paths.stream.metrics.ttft.hdr") {
		t.Errorf("a corrupt histogram: err = %v", err)
	}
}

func TestCompareGatesAndWarnings(t *testing.T) {
	ttft := spread(1000, ms(100), ms(1000))
	base := buildResults(t, map[string]pathSpec{"stream": {calls: 1000, outcomes: map[string]int64{"ok": 1000}, metrics: map[string][]int64{"ttft": ttft}}})
	cur := buildResults(t, map[string]pathSpec{"stream": {calls: 1000, outcomes: map[string]int64{"ok": 1000}, metrics: map[string][]int64{"ttft": ttft}}})
	cur.Run.Model = "other"
	cur.Run.Clocks.Gap = report.Duration(1e10)
	held, err := ParseExpr("stream.ttft.p99>2s")
	if err != nil {
		t.Fatal(err)
	}
	broken, err := ParseExpr("stream.ttft.p50>100ms")
	if err != nil {
		t.Fatal(err)
	}
	c := compare(t, base, cur, CompareOptions{MaxRegression: 10, FailOn: []Expr{held}})
	if c.Breached || len(c.Gates) != 1 || c.Gates[0].Failed {
		t.Errorf("a held gate: breached %v gates %+v", c.Breached, c.Gates)
	}
	want := []string{"runs differ in model: m (base) vs other (new)", "runs differ in clocks.gap: 0s (base) vs 10s (new)"}
	if strings.Join(c.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings %q, want %q", c.Warnings, want)
	}
	c = compare(t, base, cur, CompareOptions{MaxRegression: 10, FailOn: []Expr{held, broken}})
	if !c.Breached || !strings.Contains(c.Headline(), "1 of 2 gates failed") {
		t.Errorf("a failed gate: %s", c.Headline())
	}
}

// Two runs drawn from one distribution do not fail each other: a change
// beyond the allowance that the 95% intervals cannot tell from noise is
// "too few samples", not a regression.
func TestCompareSameDistributionDoesNotFail(t *testing.T) {
	draw := func(seed uint64, n int) []int64 {
		rng := rand.New(rand.NewPCG(seed, 3))
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(300e3 * math.Exp(0.6*rng.NormFloat64())) // lognormal, median 300 ms
		}
		return out
	}
	for seed := uint64(1); seed <= 20; seed++ {
		for _, n := range []int{60, 200, 5000} {
			mk := func(s uint64) *report.Results {
				return buildResults(t, map[string]pathSpec{"stream": {calls: int64(n), outcomes: map[string]int64{"ok": int64(n)},
					metrics: map[string][]int64{"ttft": draw(s, n)}}})
			}
			c := compare(t, mk(seed), mk(seed+1000), CompareOptions{MaxRegression: 10})
			if c.Breached {
				t.Errorf("seed %d n %d: two draws of one distribution breached: %s", seed, n, c.Headline())
			}
		}
	}
	// A real shift on few samples: +30% at p50 of 50 calls is within the
	// intervals, so it is not judged.
	small := spread(50, ms(100), ms(1000))
	base := buildResults(t, map[string]pathSpec{"stream": {calls: 50, outcomes: map[string]int64{"ok": 50}, metrics: map[string][]int64{"ttft": small}}})
	cur := buildResults(t, map[string]pathSpec{"stream": {calls: 50, outcomes: map[string]int64{"ok": 50}, metrics: map[string][]int64{"ttft": scaled(small, 1.3)}}})
	r := row(t, compare(t, base, cur, CompareOptions{MaxRegression: 10}), "stream", "ttft", "p50")
	if r.Status != StatusTooFew || !strings.Contains(r.Note, "within noise: the 95% intervals overlap") {
		t.Errorf("+30%% on 50 samples: %+v", r)
	}
	if !(r.BaseCI95[0] < r.Base && r.Base < r.BaseCI95[1]) {
		t.Errorf("base p50 %v outside its interval %v", r.Base, r.BaseCI95)
	}
}

func TestRankInterval(t *testing.T) {
	cases := []struct {
		n      int64
		q      float64
		lo, hi int64
	}{
		// Median of 100: 50 ± 9.8 -> ranks 40..61.
		{100, 0.5, 40, 61},
		// p99 of 10,000: 9900 ± 19.5 -> 9880..9921.
		{10000, 0.99, 9880, 9921},
		// Clamped to the samples there are.
		{10, 0.99, 9, 10},
		{0, 0.5, 0, 0},
	}
	for _, tc := range cases {
		lo, hi := rankInterval(tc.n, tc.q)
		if lo != tc.lo || hi != tc.hi {
			t.Errorf("rankInterval(%d, %v) = %d..%d, want %d..%d", tc.n, tc.q, lo, hi, tc.lo, tc.hi)
		}
	}
}
