package render

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/histo"
	"github.com/tollgate-dev/tollgate/report"
)

// lognormal draws a duration around median with spread sigma.
func lognormal(r *rand.Rand, median time.Duration, sigma float64) time.Duration {
	return time.Duration(float64(median) * math.Exp(sigma*r.NormFloat64()))
}

// sampleResults is a synthetic run shaped like a real one: a stream path
// whose content gaps have two populations (token spacing around 30 ms and
// thinking pauses around 3 s) while pings every 1 s keep the byte gaps
// short, a batch path with retries, outcomes with phases, scheduler lag
// and a recommendation with warnings. It is deterministic.
func sampleResults(t testing.TB) *report.Results {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	const ping = time.Second
	stream := map[string]*histo.Histogram{}
	rec := func(set map[string]*histo.Histogram, name string, d time.Duration) {
		if set[name] == nil {
			set[name] = histo.New()
		}
		set[name].Record(d)
	}
	for range 400 {
		connect := lognormal(rng, 3*time.Millisecond, 0.3)
		head := lognormal(rng, 180*time.Millisecond, 0.4)
		ttft := connect + head + lognormal(rng, 250*time.Millisecond, 0.5)
		rec(stream, histo.MetricConnect, connect)
		rec(stream, histo.MetricHead, head)
		rec(stream, histo.MetricFirstByte, head+time.Millisecond)
		rec(stream, histo.MetricTTFT, ttft)
		var maxGap, maxByteGap, sum time.Duration
		tokens := 40 + rng.IntN(200)
		for i := range tokens {
			g := lognormal(rng, 30*time.Millisecond, 0.35)
			if i == 5 && rng.IntN(4) == 0 {
				g = lognormal(rng, 3*time.Second, 0.3) // a thinking pause
			}
			rec(stream, histo.MetricGap, g)
			maxGap = max(maxGap, g)
			sum += g
			// Pings arrive every second during a long pause, so the
			// byte gaps inside it are at most the ping interval.
			for g > ping {
				rec(stream, histo.MetricByteGap, ping)
				g -= ping
			}
			rec(stream, histo.MetricByteGap, g)
			maxByteGap = max(maxByteGap, min(g, ping))
		}
		rec(stream, histo.MetricMaxGap, maxGap)
		rec(stream, histo.MetricMaxByteGap, maxByteGap)
		rec(stream, histo.MetricTotal, ttft+sum)
		if stream[histo.MetricOutputTokens] == nil {
			stream[histo.MetricOutputTokens] = histo.New()
			stream[histo.MetricTPS] = histo.New()
		}
		stream[histo.MetricOutputTokens].RecordValue(int64(tokens))
		stream[histo.MetricTPS].RecordValue(int64(float64(tokens) / sum.Seconds()))
	}
	batch := map[string]*histo.Histogram{}
	for range 60 {
		head := lognormal(rng, 4*time.Second, 0.4)
		rec(batch, histo.MetricConnect, lognormal(rng, 3*time.Millisecond, 0.3))
		rec(batch, histo.MetricHead, head)
		rec(batch, histo.MetricTotal, head+20*time.Millisecond)
		attempts := int64(1)
		if rng.IntN(10) == 0 {
			attempts = 2
		}
		rec(batch, histo.MetricItem, time.Duration(attempts)*head)
		if batch[histo.MetricAttempts] == nil {
			batch[histo.MetricAttempts] = histo.New()
		}
		batch[histo.MetricAttempts].RecordValue(attempts)
	}
	lag := histo.New()
	for range 460 {
		lag.Record(lognormal(rng, 200*time.Microsecond, 0.8))
	}
	summarize := func(set map[string]*histo.Histogram) map[string]*report.Metric {
		out := map[string]*report.Metric{}
		for name, h := range set {
			m, err := report.Summarize(name, h)
			if err != nil {
				t.Fatalf("summarize %s: %v", name, err)
			}
			out[name] = m
		}
		return out
	}
	lagMetric, err := report.Summarize(histo.MetricSchedulerLag, lag)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	return &report.Results{
		Schema: report.Schema,
		Tool:   report.Tool{Name: "tollgate", Version: "v0.1.0-test"},
		Run: report.Run{
			Started: started, Ended: started.Add(40 * time.Second),
			Target: "http://127.0.0.1:41234", Simulated: true, SimProfile: "realistic",
			API: "anthropic", Model: "claude-sim-1", Mode: "both",
			Load: report.Load{Requests: 460, Rate: 12, Arrival: "poisson", Seed: 1, MaxTokens: 512},
			Clocks: report.Clocks{
				Connect: report.Duration(2 * time.Second), Head: report.Duration(30 * time.Second),
				HeadBatch: report.Duration(90 * time.Second), Idle: report.Duration(45 * time.Second),
				Total: report.Duration(10 * time.Minute), TTFT: report.Duration(20 * time.Second),
				Gap: report.Duration(30 * time.Second),
			},
			SchedulerLag: lagMetric,
		},
		Paths: map[string]*report.Path{
			report.PathStream: {
				Calls:    412,
				Outcomes: map[string]int64{"ok": 400, "timeout.gap": 7, "http.529": 3, "stream_error.overloaded_error": 2},
				Phases: map[string]map[string]int64{
					"ok":                            {"mid_stream": 400},
					"timeout.gap":                   {"mid_stream": 6, "before_content": 1},
					"http.529":                      {"before_first_byte": 3},
					"stream_error.overloaded_error": {"mid_stream": 2},
				},
				Metrics: summarize(stream),
			},
			report.PathBatch: {
				Calls:    66,
				Outcomes: map[string]int64{"ok": 60, "http.429": 6},
				Phases:   map[string]map[string]int64{"ok": {"before_head": 60}, "http.429": {"before_first_byte": 6}},
				Items:    &report.Items{Total: 60, Done: 60, Outcomes: map[string]int64{"ok": 60}},
				Metrics:  summarize(batch),
			},
		},
		Recommendation: &report.Recommendation{
			Timeouts: report.RouteTimeouts{
				Connect: report.Duration(2 * time.Second), FirstToken: report.Duration(10 * time.Second),
				Idle: report.Duration(45 * time.Second), Total: report.Duration(10 * time.Minute),
			},
			Stream: report.StreamTimeouts{TTFT: report.Duration(5 * time.Second), Gap: report.Duration(10 * time.Second)},
			Batch: report.BatchRecommendation{
				Head: report.Duration(30 * time.Second), ItemCeiling: report.Duration(2 * time.Minute),
				Attempts: 3, RetryBudget: report.Duration(10 * time.Minute),
			},
			Rationale: []report.Rationale{
				{Setting: "stream.gap", Value: "10s", Basis: "above the second gap population (thinking pauses, max 6.2s) with 1.5x margin; the token population's p99 (80ms) would classify every pause as a stall", WouldHaveKilled: 0, Of: 400, FalseKillUpper95: 3.0 / 400, DetectsStallIn: report.Duration(10 * time.Second)},
				{Setting: "stream.ttft", Value: "5s", Basis: "p99.9 of ttft x 3", WouldHaveKilled: 0, Of: 400, FalseKillUpper95: 3.0 / 400, DetectsStallIn: report.Duration(5 * time.Second)},
				{Setting: "batch.head", Value: "30s", Basis: "3.5x the largest observed completion (ADR-0036)", WouldHaveKilled: 0, Of: 60, FalseKillUpper95: 3.0 / 60},
			},
			Warnings: []string{
				"only 60 batch calls: the batch head wait rests on few samples (95% upper bound on false kills 5%)",
				"pings every 1s keep byte gaps short: the idle timeout cannot detect a stalled generation; rely on the gap deadline",
			},
		},
	}
}
