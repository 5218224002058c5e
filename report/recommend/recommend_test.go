package recommend

import (
	"bytes"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/histo"
	"github.com/tollgate-dev/tollgate/report"
	"github.com/tollgate-dev/tollgate/report/routes"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const ms = time.Millisecond

// path builds a results path from histograms, as the probe writes it.
func path(t *testing.T, calls int64, outcomes map[string]int64, hs map[string]*histo.Histogram) *report.Path {
	t.Helper()
	p := &report.Path{Calls: calls, Outcomes: outcomes, Metrics: map[string]*report.Metric{}}
	for name, h := range hs {
		m, err := report.Summarize(name, h)
		if err != nil {
			t.Fatal(err)
		}
		p.Metrics[name] = m
	}
	return p
}

func results(paths map[string]*report.Path) *report.Results {
	return &report.Results{Schema: report.Schema, Paths: paths}
}

// seedTTFT is 1,000 ttfts with p50 640 ms and p99 exactly 2.1 s (002's
// support-chat path): 495 from 300 to 640 ms, 495 from 640 ms to 2.1 s,
// and 10 above p99, from 2.2 to 2.6 s.
func seedTTFT() *histo.Histogram {
	h := histo.New()
	for i := range 495 {
		h.Record(300*ms + time.Duration(i)*340*ms/494)
	}
	for i := range 495 {
		h.Record(640*ms + time.Duration(i)*1460*ms/494)
	}
	for i := range 10 {
		h.Record(2200*ms + time.Duration(i)*400*ms/9)
	}
	return h
}

// streamCalls simulates the article's path: token gaps lognormal with
// p50 40 ms and p99 180 ms, and in pauseShare of the calls one to three
// structural pauses (thinking, tool use) of 1 to 4 s, with pings every
// pingEvery during a pause (0: no pings, the wire is silent too).
type streamCalls struct {
	n          int
	pauseShare float64
	pingEvery  time.Duration
	pauseMax   time.Duration
}

var streamCache = map[streamCalls]map[string]*histo.Histogram{}

// histograms returns the calls' histograms (generated once per shape; the
// map is the caller's, the histograms are shared and must not change).
func (sc streamCalls) histograms() map[string]*histo.Histogram {
	if c, ok := streamCache[sc]; ok {
		out := map[string]*histo.Histogram{}
		for k, v := range c {
			out[k] = v
		}
		return out
	}
	hs := sc.generate()
	streamCache[sc] = hs
	return sc.histograms()
}

func (sc streamCalls) generate() map[string]*histo.Histogram {
	rng := rand.New(rand.NewPCG(1, 2))
	hs := map[string]*histo.Histogram{}
	for _, m := range []string{histo.MetricConnect, histo.MetricHead, histo.MetricFirstByte, histo.MetricGap,
		histo.MetricMaxGap, histo.MetricByteGap, histo.MetricMaxByteGap, histo.MetricTotal} {
		hs[m] = histo.New()
	}
	hs[histo.MetricTTFT] = seedTTFT()
	sigma := math.Log(180.0/40) / 2.326
	pauseMax := sc.pauseMax
	if pauseMax == 0 {
		pauseMax = 4 * time.Second
	}
	for i := range sc.n {
		hs[histo.MetricConnect].Record(time.Duration(100+rng.IntN(30_000)) * time.Microsecond)
		hs[histo.MetricHead].Record(time.Duration(50+rng.IntN(150)) * ms)
		hs[histo.MetricFirstByte].Record(time.Duration(100+rng.IntN(200)) * ms)
		var gaps []time.Duration
		for range 200 {
			gaps = append(gaps, time.Duration(40*float64(ms)*math.Exp(sigma*rng.NormFloat64())))
		}
		if rng.Float64() < sc.pauseShare {
			for range 1 + rng.IntN(3) {
				gaps[rng.IntN(len(gaps))] = time.Second + time.Duration(rng.Int64N(int64(pauseMax-time.Second)))
			}
		}
		var maxGap, maxByte, total time.Duration
		total = 2 * time.Second
		for _, g := range gaps {
			hs[histo.MetricGap].Record(g)
			maxGap = max(maxGap, g)
			total += g
			// Bytes: a ping every pingEvery inside a long gap.
			rest := g
			for sc.pingEvery > 0 && rest > sc.pingEvery {
				hs[histo.MetricByteGap].Record(sc.pingEvery)
				maxByte = max(maxByte, sc.pingEvery)
				rest -= sc.pingEvery
			}
			hs[histo.MetricByteGap].Record(rest)
			maxByte = max(maxByte, rest)
		}
		hs[histo.MetricMaxGap].Record(maxGap)
		hs[histo.MetricMaxByteGap].Record(maxByte)
		hs[histo.MetricTotal].Record(total)
		_ = i
	}
	return hs
}

// batchCalls is n non-streaming completions up to ADR-0036's 25,833 ms.
func batchCalls(n int, largest time.Duration) map[string]*histo.Histogram {
	hs := map[string]*histo.Histogram{}
	for _, m := range []string{histo.MetricConnect, histo.MetricHead, histo.MetricFirstByte, histo.MetricMaxByteGap,
		histo.MetricTotal, histo.MetricItem, histo.MetricAttempts} {
		hs[m] = histo.New()
	}
	for i := range n {
		c := 5*time.Second + time.Duration(i)*(largest-5*time.Second)/time.Duration(n-1)
		hs[histo.MetricConnect].Record(2 * ms)
		hs[histo.MetricHead].Record(c - 5*ms)
		hs[histo.MetricFirstByte].Record(c - 4*ms)
		hs[histo.MetricMaxByteGap].Record(ms)
		hs[histo.MetricTotal].Record(c)
		hs[histo.MetricItem].Record(c)
		attempts := int64(1)
		if i%50 == 0 {
			attempts = 2
		}
		hs[histo.MetricAttempts].RecordValue(attempts)
	}
	return hs
}

func ok(n int64) map[string]int64 { return map[string]int64{"ok": n} }

func seedStream(t *testing.T) *report.Path {
	return path(t, 1000, ok(1000), streamCalls{n: 1000, pauseShare: 0.3, pingEvery: 900 * ms}.histograms())
}

func seedBatch(t *testing.T) *report.Path {
	p := path(t, 300, ok(300), batchCalls(300, 25833*ms))
	p.Items = &report.Items{Total: 300, Done: 300}
	return p
}

func rationale(t *testing.T, rec *report.Recommendation, setting string) report.Rationale {
	t.Helper()
	for _, r := range rec.Rationale {
		if r.Setting == setting {
			return r
		}
	}
	t.Fatalf("no rationale for %s in %+v", setting, rec.Rationale)
	return report.Rationale{}
}

// TestSeeds reproduces the seeds' numbers from synthetic histograms.
func TestSeeds(t *testing.T) {
	streamOnly, err := Recommend(results(map[string]*report.Path{report.PathStream: seedStream(t)}), DefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	mixed, err := Recommend(results(map[string]*report.Path{report.PathStream: seedStream(t), report.PathBatch: seedBatch(t)}), DefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	batchOnly, err := Recommend(results(map[string]*report.Path{report.PathBatch: seedBatch(t)}), DefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	s := time.Second
	for _, tc := range []struct {
		name string
		got  report.Duration
		want time.Duration
	}{
		// 002: ttft p99 2.1 s -> 5 s (2 x 2.1 s = 4.2 s, rounded up).
		{"stream.ttft", streamOnly.Stream.TTFT, 5 * s},
		// 002: 40 ms / 180 ms token gaps plus pauses of seconds -> about 10 s
		// (2 x the largest pause, under 4 s, rounded up).
		{"stream.gap", streamOnly.Stream.Gap, 10 * s},
		// ADR-0036: largest completion 25,833 ms -> 90 s (3 x = 77.5 s, rounded up).
		{"non_streaming.head (mixed)", mixed.Batch.Head, 90 * s},
		{"non_streaming.head (batch only)", batchOnly.Batch.Head, 90 * s},
		// 002: a 180 s per-call ceiling = 2 x the head wait.
		{"batch.item_ceiling", mixed.Batch.ItemCeiling, 180 * s},
		// The connect p99 (about 30 ms) is far under the 2 s floor.
		{"timeouts.connect", streamOnly.Timeouts.Connect, 2 * s},
		// Streams alone: 2 x first_byte p99 (under 300 ms) -> 1 s.
		{"timeouts.first_token (streams)", streamOnly.Timeouts.FirstToken, 1 * s},
		// ADR 0016's consequence: a mixed route waits for the head.
		{"timeouts.first_token (mixed)", mixed.Timeouts.FirstToken, 90 * s},
		// Pings every 900 ms: 2 x 0.9 s is under the 10 s floor.
		{"timeouts.idle", streamOnly.Timeouts.Idle, 10 * s},
		// The longest stream (under 30 s: 200 gaps and a few pauses) x 2 -> 60 s.
		{"timeouts.total (streams)", streamOnly.Timeouts.Total, time.Minute},
		// Mixed: must clear connect + first_token (92 s) by 30 s and the
		// 180 s item ceiling.
		{"timeouts.total (mixed)", mixed.Timeouts.Total, 3 * time.Minute},
		{"batch.retry_budget", mixed.Batch.RetryBudget, 10 * time.Minute},
	} {
		if time.Duration(tc.got) != tc.want {
			t.Errorf("%s = %s, want %s", tc.name, time.Duration(tc.got), tc.want)
		}
	}
	if mixed.Batch.Attempts != 5 {
		t.Errorf("batch.attempts = %d, want 5", mixed.Batch.Attempts)
	}
	if streamOnly.Batch != (report.BatchRecommendation{}) {
		t.Errorf("stream-only run recommends batch settings: %+v", streamOnly.Batch)
	}
	if batchOnly.Stream != (report.StreamTimeouts{}) {
		t.Errorf("batch-only run recommends stream settings: %+v", batchOnly.Stream)
	}
	if hasWarning(batchOnly, "stream.ttft and stream.gap not recommended") == "" || hasWarning(streamOnly, "non_streaming.head and the batch settings not recommended") == "" {
		t.Errorf("a missing path is not warned about:\n%q\n%q", batchOnly.Warnings, streamOnly.Warnings)
	}
	// The evidence names the rule.
	if b := rationale(t, streamOnly, SettingTTFT).Basis; b != "2 x p99 ttft (2.1s)" {
		t.Errorf("ttft basis = %q", b)
	}
	if b := rationale(t, mixed, SettingHead).Basis; b != "3 x max batch total (25.8s)" {
		t.Errorf("head basis = %q", b)
	}
	if b := rationale(t, streamOnly, SettingGap).Basis; !strings.HasPrefix(b, "2 x max max_gap (3.99s); pauses 1s–3.99s above a") || !strings.Contains(b, "2 x token p99 (359ms) kills 341/1000") {
		t.Errorf("gap basis does not explain the split: %q", b)
	}
}

// TestSplitIgnoresCoalescedDeltas: deltas that arrive in one read have
// gaps of a microsecond or so; thousands of them must not become the
// "lower population" of the split, hiding the pauses.
func TestSplitIgnoresCoalescedDeltas(t *testing.T) {
	hs := streamCalls{n: 1000, pauseShare: 0.3, pingEvery: 900 * ms}.histograms()
	gaps := hs[histo.MetricGap].Clone()
	gaps.RecordValues(0, 20000)
	gaps.RecordValues(1, 20000)
	hs[histo.MetricGap] = gaps
	rec, err := Recommend(results(map[string]*report.Path{report.PathStream: path(t, 1000, ok(1000), hs)}), DefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	if b := rationale(t, rec, SettingGap).Basis; !strings.Contains(b, "–3.99s above a 708ms split") {
		t.Errorf("gap basis %q: want the split between token spacing and the pauses", b)
	}
}

// TestEvidence checks would-have-killed counts and their bounds.
func TestEvidence(t *testing.T) {
	rec, err := Recommend(results(map[string]*report.Path{report.PathStream: seedStream(t), report.PathBatch: seedBatch(t)}), DefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		setting string
		killed  int64
		of      int64
		detects time.Duration
	}{
		{SettingTTFT, 0, 1000, 5 * time.Second},
		{SettingGap, 0, 1000, 10 * time.Second},        // judged per call on max_gap
		{SettingHead, 0, 300, 90 * time.Second},        // on the batch head
		{SettingFirstToken, 0, 1300, 90 * time.Second}, // both paths' first_byte
		{SettingConnect, 0, 1300, 2 * time.Second},
		{SettingAttempts, 0, 300, 0},
	} {
		r := rationale(t, rec, tc.setting)
		if r.WouldHaveKilled != tc.killed || r.Of != tc.of || time.Duration(r.DetectsStallIn) != tc.detects {
			t.Errorf("%s: killed %d of %d, detects in %s; want %d of %d, %s", tc.setting, r.WouldHaveKilled, r.Of, time.Duration(r.DetectsStallIn), tc.killed, tc.of, tc.detects)
		}
		if want := histo.UpperBound95(tc.killed, tc.of); r.FalseKillUpper95 != want {
			t.Errorf("%s: upper bound %g, want %g", tc.setting, r.FalseKillUpper95, want)
		}
	}
	// The rule of three: none killed of 1,000 -> 0.3%.
	if r := rationale(t, rec, SettingTTFT); math.Abs(r.FalseKillUpper95-0.003) > 1e-12 {
		t.Errorf("ttft bound %g, want 3/1000", r.FalseKillUpper95)
	}

	// A deadline that kills: with a policy multiple of 1, ttft sits at
	// RoundUpHuman(p99 2.1 s) = 3 s, and the 10 values from 2.2 to 2.6 s
	// survive; at multiple 1 for p90, the 90th percentile (about 1.8 s)
	// rounds to 2 s, which kills every value above 2 s.
	p := DefaultPolicy()
	p.TTFT = Rule{Percentile: 90, Multiple: 1}
	rec, err = Recommend(results(map[string]*report.Path{report.PathStream: seedStream(t)}), p)
	if err != nil {
		t.Fatal(err)
	}
	r := rationale(t, rec, SettingTTFT)
	want := seedTTFT().CountAbove(int64(2 * time.Second / time.Microsecond))
	if r.Value != "2s" || r.WouldHaveKilled != want || want < 10 {
		t.Errorf("ttft at p90 x 1: %s killing %d, want 2s killing %d (>= 10)", r.Value, r.WouldHaveKilled, want)
	}
	if r.FalseKillUpper95 != histo.UpperBound95(want, 1000) || r.FalseKillUpper95 <= float64(want)/1000 {
		t.Errorf("bound %g: want the Clopper-Pearson bound above the observed rate %g", r.FalseKillUpper95, float64(want)/1000)
	}
}

func hasWarning(rec *report.Recommendation, prefix string) string {
	for _, w := range rec.Warnings {
		if strings.HasPrefix(w, prefix) || strings.Contains(w, prefix) {
			return w
		}
	}
	return ""
}

// TestDiagnoses: each diagnosis fires when it should and not otherwise.
func TestDiagnoses(t *testing.T) {
	long := func(t *testing.T, largest time.Duration) *report.Path {
		p := path(t, 300, ok(300), batchCalls(300, largest))
		return p
	}
	heavyTail := func(t *testing.T) *report.Path {
		// p99 of ttft 1 s, but 0.5% of calls at 3 to 4 s: 2 x p99 = 2 s
		// sits below p99.9.
		hs := streamCalls{n: 1000, pauseShare: 0.3, pingEvery: 900 * ms}.histograms()
		h := histo.New()
		for i := range 995 {
			h.Record(200*ms + time.Duration(i)*800*ms/994)
		}
		for i := range 5 {
			h.Record(3*time.Second + time.Duration(i)*200*ms)
		}
		hs[histo.MetricTTFT] = h
		return path(t, 1000, ok(1000), hs)
	}
	censored := func(t *testing.T) *report.Results {
		r := results(map[string]*report.Path{report.PathStream: seedStream(t)})
		r.Run.Clocks.TTFT = report.Duration(3 * time.Second)
		r.Paths[report.PathStream].Outcomes["timeout.ttft"] = 4
		return r
	}
	for _, tc := range []struct {
		name    string
		r       func(t *testing.T) *report.Results
		warning string
		fires   bool
		say     []string
	}{
		// Pings every 900 ms through pauses of up to 4 s.
		{"ping masking", func(t *testing.T) *report.Results {
			return results(map[string]*report.Path{report.PathStream: seedStream(t)})
		}, "ping masking", true, []string{"max_gap", "max_byte_gap", "only stream.gap (10s)"}},
		// The realistic simulator's shape: a ping every 5 s through pauses
		// of up to 8 s; the idle timeout cannot see those pauses either.
		{"ping masking, slow pings", func(t *testing.T) *report.Results {
			hs := streamCalls{n: 1000, pauseShare: 0.3, pingEvery: 5 * time.Second, pauseMax: 8 * time.Second}.histograms()
			return results(map[string]*report.Path{report.PathStream: path(t, 1000, ok(1000), hs)})
		}, "ping masking", true, []string{"never went quiet for more than 5s"}},
		// No pings: the wire is as quiet as the content.
		{"no ping masking without pings", func(t *testing.T) *report.Results {
			return results(map[string]*report.Path{report.PathStream: path(t, 1000, ok(1000), streamCalls{n: 1000, pauseShare: 0.3}.histograms())})
		}, "ping masking", false, nil},
		// Non-streaming answers of up to 75 s: nginx and ALB cut at 60 s,
		// Envoy's 5 m does not.
		{"intermediaries", func(t *testing.T) *report.Results {
			return results(map[string]*report.Path{report.PathBatch: long(t, 75*time.Second)})
		}, "intermediaries", true, []string{"up to 75s", "nginx proxy_read_timeout (default 60s)", "AWS ALB idle timeout", "at least 5m (batch.head)"}},
		{"intermediaries: no Envoy under 5 m", func(t *testing.T) *report.Results {
			return results(map[string]*report.Path{report.PathBatch: long(t, 75*time.Second)})
		}, "Envoy", false, nil},
		{"no intermediaries under 60 s", func(t *testing.T) *report.Results {
			return results(map[string]*report.Path{report.PathBatch: long(t, 25833*ms)})
		}, "intermediaries", false, nil},
		{"mixed mode", func(t *testing.T) *report.Results {
			return results(map[string]*report.Path{report.PathStream: seedStream(t), report.PathBatch: seedBatch(t)})
		}, "mixed-mode route", true, []string{"first_token is 90s where the streams alone need 1s", "split the route"}},
		{"no mixed mode on a stream route", func(t *testing.T) *report.Results {
			return results(map[string]*report.Path{report.PathStream: seedStream(t)})
		}, "mixed-mode", false, nil},
		{"below percentile", func(t *testing.T) *report.Results {
			return results(map[string]*report.Path{report.PathStream: heavyTail(t)})
		}, "stream.ttft 2s sits at or below the p99.9", true, []string{"killed 5 of 1000"}},
		{"not below percentile", func(t *testing.T) *report.Results {
			return results(map[string]*report.Path{report.PathStream: seedStream(t)})
		}, "sits at or below", false, nil},
		{"censored", censored, "censored tail", true, []string{"ttft clock (--ttft 3s) cut 4 stream calls"}},
		{"not censored", func(t *testing.T) *report.Results {
			r := censored(t)
			r.Paths[report.PathStream].Outcomes["timeout.ttft"] = 0
			return r
		}, "censored", false, nil},
		// 300 batch calls cannot support 1%: 3/300 = 1% exactly passes;
		// 100 calls (3%) do not.
		{"too few calls", func(t *testing.T) *report.Results {
			return results(map[string]*report.Path{report.PathBatch: path(t, 100, ok(100), batchCalls(100, 25833*ms))})
		}, "too few calls", true, []string{"batch.head, batch.item_ceiling, batch.attempts, batch.retry_budget: 0/100 killed, up to 3.0%", "at least 300 calls"}},
		{"enough calls", func(t *testing.T) *report.Results {
			return results(map[string]*report.Path{report.PathStream: seedStream(t), report.PathBatch: seedBatch(t)})
		}, "too few calls", false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := Recommend(tc.r(t), DefaultPolicy())
			if err != nil {
				t.Fatal(err)
			}
			w := hasWarning(rec, tc.warning)
			if (w != "") != tc.fires {
				t.Fatalf("warning %q fired = %v, want %v; warnings:\n%s", tc.warning, w != "", tc.fires, strings.Join(rec.Warnings, "\n"))
			}
			for _, s := range tc.say {
				if !strings.Contains(w, s) {
					t.Errorf("warning lacks %q:\n%s", s, w)
				}
			}
		})
	}
}

// TestJobDeadline is 002's arithmetic: 01:00 to 07:00 with 30 minutes to
// spare is a 5.5 h job deadline; 50,000 items of 8 s on 40 workers fit.
func TestJobDeadline(t *testing.T) {
	item := histo.New()
	item.RecordValues(8_000_000, 1000)
	hs := batchCalls(300, 25833*ms)
	hs[histo.MetricItem] = item
	r := results(map[string]*report.Path{report.PathBatch: path(t, 300, ok(300), hs)})
	p := DefaultPolicy()
	p.Window = &Window{Start: "01:00", Due: "07:00", Margin: 30 * time.Minute, Items: 50000, Workers: 40}
	rec, err := Recommend(r, p)
	if err != nil {
		t.Fatal(err)
	}
	if time.Duration(rec.Batch.JobDeadline) != 5*time.Hour+30*time.Minute {
		t.Errorf("job deadline %s, want 5h30m", time.Duration(rec.Batch.JobDeadline))
	}
	if b := rationale(t, rec, SettingJobDeadline).Basis; b != "window 01:00 to 07:00 (6h) less 30m to spare; 50000 items x 8s / 40 workers = 2h46m40s of wall clock" {
		t.Errorf("basis %q", b)
	}
	if w := hasWarning(rec, "tollgate plan"); w != "" {
		t.Errorf("unexpected warning %s", w)
	}
	p.Window.Workers = 5 // 80,000 s of wall clock
	rec, err = Recommend(r, p)
	if err != nil {
		t.Fatal(err)
	}
	// 400,000 s of work in 5.5 h needs 21 workers.
	if w := hasWarning(rec, "tollgate plan"); !strings.Contains(w, "22.2 h of wall clock") || !strings.Contains(w, "at least 21 workers") {
		t.Errorf("warning %q, want the 22.2 h wall clock and 21 workers", w)
	}
	// A window shorter than one item: no deadline, a warning.
	p.Window = &Window{Start: "01:00", Due: "01:04", Margin: time.Minute}
	rec, err = Recommend(r, p)
	if err != nil || rec.Batch.JobDeadline != 0 || hasWarning(rec, "batch.job_deadline not recommended") == "" {
		t.Errorf("4-minute window: %v, %v, %q", rec.Batch.JobDeadline, err, rec.Warnings)
	}
	// Without items and workers the deadline is the window's alone.
	p.Window = &Window{Start: "22:00", Due: "06:00", Margin: time.Hour}
	rec, err = Recommend(r, p)
	if err != nil || time.Duration(rec.Batch.JobDeadline) != 7*time.Hour {
		t.Errorf("22:00 to 06:00 less 1h: %v, %v; want 7h", rec.Batch.JobDeadline, err)
	}
}

// TestGolden writes the mixed seed recommendation as route config.
func TestGolden(t *testing.T) {
	rec, err := Recommend(results(map[string]*report.Path{report.PathStream: seedStream(t), report.PathBatch: seedBatch(t)}), DefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := routes.Write(&buf, ToRoutes(rec, "default")); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "seed.golden.yaml")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if buf.String() != string(want) {
		t.Errorf("config =\n%s\nwant\n%s", buf.String(), want)
	}
	// Round trip: the written config passes check-config and reads back
	// the same values.
	cfg, err := routes.Parse(buf.Bytes(), golden)
	if err != nil {
		t.Fatalf("recommended config refused: %v", err)
	}
	r, _ := cfg.Route("default")
	if r.Timeouts.Total != time.Duration(rec.Timeouts.Total) || r.NonStreaming.Head != time.Duration(rec.Batch.Head) || r.Stream.Gap != time.Duration(rec.Stream.Gap) {
		t.Errorf("round trip: %+v", r)
	}
}

// TestRecommendedConfigsPass: whatever the policy, the recommendation
// passes routes validation.
func TestRecommendedConfigsPass(t *testing.T) {
	for _, mult := range []float64{1, 1.5, 2, 3.5, 10} {
		p := DefaultPolicy()
		for _, r := range []*Rule{&p.Connect, &p.FirstToken, &p.Idle, &p.Total, &p.TTFT, &p.Gap, &p.NonStreamingHead} {
			r.Multiple = mult
		}
		p.Batch.ItemCeilingMultiple = mult
		for _, paths := range []map[string]*report.Path{
			{report.PathStream: seedStream(t)},
			{report.PathBatch: seedBatch(t)},
			{report.PathStream: seedStream(t), report.PathBatch: seedBatch(t)},
		} {
			rec, err := Recommend(results(paths), p)
			if err != nil {
				t.Fatalf("multiple %g: %v", mult, err)
			}
			if err := ToRoutes(rec, "r").Validate(); err != nil {
				t.Errorf("multiple %g: %v", mult, err)
			}
		}
	}
}

func TestRecommendErrors(t *testing.T) {
	if _, err := Recommend(nil, DefaultPolicy()); err == nil {
		t.Error("nil results: no error")
	}
	if _, err := Recommend(results(map[string]*report.Path{}), DefaultPolicy()); err == nil || !strings.Contains(err.Error(), "no path has calls") {
		t.Errorf("no paths: %v", err)
	}
	failed := path(t, 10, map[string]int64{"transport": 10}, map[string]*histo.Histogram{})
	if _, err := Recommend(results(map[string]*report.Path{report.PathStream: failed}), DefaultPolicy()); err == nil {
		t.Error("no call reached the target: no error")
	}
}

// TestPolicyDefaultFile: the documented policy file with every key is
// exactly DefaultPolicy, so the file stays true.
func TestPolicyDefaultFile(t *testing.T) {
	p, err := LoadPolicy(filepath.Join("testdata", "policy.default.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, DefaultPolicy()) {
		t.Errorf("testdata/policy.default.yaml = %+v\nDefaultPolicy() = %+v", p, DefaultPolicy())
	}
}

func TestPolicy(t *testing.T) {
	p, err := ParsePolicy([]byte("ttft:\n  multiple: 3\nwindow:\n  start: \"01:00\"\n  due: \"07:00\"\n  margin: 30m\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.TTFT.Multiple != 3 || p.TTFT.Percentile != 99 || p.Gap.Multiple != 2 || p.Window == nil || p.Window.Margin != 30*time.Minute {
		t.Errorf("policy = %+v", p)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"ttft:\n  multiplier: 3\n", "line 2: field multiplier not found"},
		{"gap:\n  multiple: 0.5\n", "gap.multiple 0.5: want at least 1"},
		{"ttft:\n  percentile: 101\n", "ttft.percentile 101"},
		{"window:\n  start: 1am\n  due: \"07:00\"\n", "window.start"},
		{"connect:\n  floor: 30\n", "line 2"},
	} {
		if _, err := ParsePolicy([]byte(tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.yaml, err, tc.want)
		}
	}
	if _, err := LoadPolicy(filepath.Join(t.TempDir(), "none.yaml")); err == nil || !strings.Contains(err.Error(), "none.yaml") {
		t.Errorf("missing policy file: %v", err)
	}
	// An empty file is the default policy.
	if p, err := ParsePolicy(nil); err != nil || p.TTFT != DefaultPolicy().TTFT {
		t.Errorf("empty policy: %+v, %v", p, err)
	}
}
