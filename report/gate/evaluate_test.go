package gate

import (
	"strings"
	"testing"
)

func TestEvaluate(t *testing.T) {
	r := buildResults(t, map[string]pathSpec{
		"stream": {
			calls:    1000,
			outcomes: map[string]int64{"ok": 980, "timeout.gap": 15, "http.429": 5},
			metrics: map[string][]int64{
				"ttft":          spread(1000, ms(1), ms(1000)), // p99 990 ms, max 1 s
				"output_tokens": spread(1000, 100, 300),        // p50 200
			},
		},
		"batch": {
			calls:    200,
			outcomes: map[string]int64{"ok": 200},
			metrics: map[string][]int64{
				"item":     spread(200, ms(5000), ms(40000)), // p99 about 39.6 s
				"attempts": {1, 1, 2, 3},
				"ttft":     spread(200, ms(10), ms(20)),
			},
		},
	})
	cases := []struct {
		expr    string
		failed  []bool // one per verdict, stream before batch
		noData  bool
		message string // a fragment of the first verdict's message
	}{
		// > on a duration in seconds: 990 ms is not > 2s.
		{"stream.ttft.p99>2s", []bool{false}, false, "stream.ttft.p99 = 990ms <= 2s"},
		// > in milliseconds: 990 ms > 500ms breaches.
		{"stream.ttft.p99>500ms", []bool{true}, false, "stream.ttft.p99 = 990ms > 500ms"},
		// >= at the exact value breaches; the max is 1 s.
		{"stream.ttft.max>=1s", []bool{true}, false, "= 1s >= 1s"},
		// < and <= as lower bounds.
		{"stream.ttft.min<1ms", []bool{false}, false, "= 1ms >= 1ms"},
		{"stream.ttft.min<=1ms", []bool{true}, false, "= 1ms <= 1ms"},
		// Minutes.
		{"batch.item.p99>1m", []bool{false}, false, "batch.item.p99 = 39.6s <= 1m"},
		// No path: every path with the metric, stream first.
		{"ttft.p50>100ms", []bool{true, false}, false, "stream.ttft.p50 = 500ms > 100ms"},
		// A plain metric with its unit.
		{"stream.output_tokens.p50<150", []bool{false}, false, "= 199 tokens >= 150"},
		{"batch.attempts.max>2", []bool{true}, false, "batch.attempts.max = 3 attempts > 2"},
		// A count.
		{"stream.ttft.count<2000", []bool{true}, false, "stream.ttft.count = 1000 < 2000"},
		// The error rate: 20 of 1000 stream calls is 2%; batch has none.
		{"errors.rate>1%", []bool{true, false}, false, "stream.errors.rate = 2% > 1%"},
		{"stream.errors.rate>2.5%", []bool{false}, false, "stream.errors.rate = 2% <= 2.5%"},
		// Outcome counts, a class with a dot; a class never seen is 0.
		{"outcome.timeout.gap.count>10", []bool{true, false}, false, "stream.outcome.timeout.gap.count = 15 > 10"},
		{"batch.outcome.http.429.count>0", []bool{false}, false, "batch.outcome.http.429.count = 0 <= 0"},
		// No data: a metric no path has fails, it does not pass.
		{"max_gap.p99>10s", []bool{true}, true, "no data (no path has max_gap)"},
		// No data on a named path.
		{"batch.output_tokens.p50>1", []bool{true}, true, "batch.output_tokens.p50: no data (batch has no output_tokens)"},
		// A count of an absent metric on a present path is 0, which is data.
		{"batch.output_tokens.count<1", []bool{true}, false, "batch.output_tokens.count = 0 < 1"},
	}
	for _, tc := range cases {
		e, err := ParseExpr(tc.expr)
		if err != nil {
			t.Fatalf("ParseExpr(%q): %v", tc.expr, err)
		}
		vs := Evaluate(r, []Expr{e})
		if len(vs) != len(tc.failed) {
			t.Errorf("%s: %d verdicts %+v, want %d", tc.expr, len(vs), vs, len(tc.failed))
			continue
		}
		for i, v := range vs {
			if v.Failed != tc.failed[i] || v.NoData != tc.noData {
				t.Errorf("%s: verdict %d failed=%v noData=%v (%s), want failed=%v noData=%v", tc.expr, i, v.Failed, v.NoData, v.Message, tc.failed[i], tc.noData)
			}
		}
		if !strings.Contains(vs[0].Message, tc.message) {
			t.Errorf("%s: message %q lacks %q", tc.expr, vs[0].Message, tc.message)
		}
		wantAny := false
		for _, f := range tc.failed {
			wantAny = wantAny || f
		}
		if AnyFailed(vs) != wantAny {
			t.Errorf("%s: AnyFailed = %v, want %v", tc.expr, AnyFailed(vs), wantAny)
		}
	}
}

func TestEvaluateNoData(t *testing.T) {
	e, err := ParseExpr("stream.ttft.p99>2s")
	if err != nil {
		t.Fatal(err)
	}
	// A batch-only run gated on the stream path.
	batchOnly := buildResults(t, map[string]pathSpec{"batch": {calls: 5, outcomes: map[string]int64{"ok": 5}}})
	vs := Evaluate(batchOnly, []Expr{e})
	if len(vs) != 1 || !vs[0].Failed || !vs[0].NoData || !strings.Contains(vs[0].Message, "no stream path") {
		t.Errorf("gate on a missing path: %+v", vs)
	}
	// A metric with no samples.
	empty := buildResults(t, map[string]pathSpec{"stream": {calls: 5, metrics: map[string][]int64{"ttft": nil}}})
	vs = Evaluate(empty, []Expr{e})
	if len(vs) != 1 || !vs[0].NoData || !strings.Contains(vs[0].Message, "has no samples") {
		t.Errorf("gate on an empty metric: %+v", vs)
	}
	// errors.rate on a path with no calls.
	rate, err := ParseExpr("errors.rate>1%")
	if err != nil {
		t.Fatal(err)
	}
	vs = Evaluate(empty, []Expr{rate})
	if !vs[0].Failed || vs[0].NoData || vs[0].Observed != 100 {
		t.Errorf("errors.rate on 5 calls with no outcomes should be 100%% and fail: %+v", vs)
	}
	noCalls := buildResults(t, map[string]pathSpec{"stream": {}})
	vs = Evaluate(noCalls, []Expr{rate})
	if !vs[0].NoData || !strings.Contains(vs[0].Message, "has no calls") {
		t.Errorf("errors.rate with no calls: %+v", vs)
	}
	// Nothing at all.
	vs = Evaluate(nil, []Expr{e})
	if len(vs) != 1 || !vs[0].Failed || !vs[0].NoData {
		t.Errorf("gate on nil results: %+v", vs)
	}
}
