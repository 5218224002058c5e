package gate

import (
	"strings"
	"testing"
)

func TestParseExpr(t *testing.T) {
	cases := []struct {
		in   string
		want Expr // Text and ValueText are checked separately
	}{
		// The SPEC's first example: a path, a duration in seconds.
		{"stream.ttft.p99>2s", Expr{Kind: KindMetric, Path: "stream", Metric: "ttft", Stat: "p99", Op: OpGT, Value: 2000, Unit: "ms"}},
		// No path; milliseconds; >= with spaces around it.
		{"gap.p999 >= 150ms", Expr{Kind: KindMetric, Metric: "gap", Stat: "p999", Op: OpGE, Value: 150, Unit: "ms"}},
		// Minutes and the batch path.
		{"batch.item.p99 < 1m", Expr{Kind: KindMetric, Path: "batch", Metric: "item", Stat: "p99", Op: OpLT, Value: 60000, Unit: "ms"}},
		// A fractional duration and <=.
		{"total.max<=1.5s", Expr{Kind: KindMetric, Metric: "total", Stat: "max", Op: OpLE, Value: 1500, Unit: "ms"}},
		// count takes a plain number even on a duration metric.
		{"stream.ttft.count < 100", Expr{Kind: KindMetric, Path: "stream", Metric: "ttft", Stat: "count", Op: OpLT, Value: 100}},
		// A count metric takes a plain number with its unit.
		{"batch.attempts.max>3", Expr{Kind: KindMetric, Path: "batch", Metric: "attempts", Stat: "max", Op: OpGT, Value: 3, Unit: "attempts"}},
		// tps is a plain number; a lower bound.
		{"stream.tps.p50<20", Expr{Kind: KindMetric, Path: "stream", Metric: "tps", Stat: "p50", Op: OpLT, Value: 20, Unit: "tokens/s"}},
		// The error rate in percent.
		{"errors.rate>1%", Expr{Kind: KindErrorRate, Op: OpGT, Value: 1, Unit: "%"}},
		// A fractional percentage, a path, spaces.
		{"stream.errors.rate >= 0.5 %", Expr{Kind: KindErrorRate, Path: "stream", Op: OpGE, Value: 0.5, Unit: "%"}},
		// An outcome class with a dot in it.
		{"outcome.timeout.gap.count>0", Expr{Kind: KindOutcome, Class: "timeout.gap", Op: OpGT, Value: 0}},
		// An HTTP status class on one path.
		{"batch.outcome.http.429.count >= 10", Expr{Kind: KindOutcome, Path: "batch", Class: "http.429", Op: OpGE, Value: 10}},
		// A one-word class.
		{"outcome.truncated.count>5", Expr{Kind: KindOutcome, Class: "truncated", Op: OpGT, Value: 5}},
	}
	for _, tc := range cases {
		got, err := ParseExpr(tc.in)
		if err != nil {
			t.Errorf("ParseExpr(%q): %v", tc.in, err)
			continue
		}
		if got.Text != strings.TrimSpace(tc.in) {
			t.Errorf("ParseExpr(%q).Text = %q", tc.in, got.Text)
		}
		got.Text, got.ValueText = "", ""
		if got != tc.want {
			t.Errorf("ParseExpr(%q) = %+v\n want %+v", tc.in, got, tc.want)
		}
	}
}

func TestParseExprErrors(t *testing.T) {
	cases := []struct {
		in   string
		want []string // every fragment must be in the error
	}{
		// An unknown stat: name it and list the valid ones.
		{"stream.ttft.p98>2s", []string{`"stream.ttft.p98>2s"`, `unknown stat "p98"`, "p50 p90 p95 p99 p999 max min mean count"}},
		// An unknown metric.
		{"stream.ttfb.p99>2s", []string{`unknown metric "ttfb"`, "first_byte"}},
		// A misspelt path.
		{"strem.ttft.p99>2s", []string{`unknown path "strem"`, "stream or batch"}},
		// No operator.
		{"stream.ttft.p99 2s", []string{"no operator", "> >= < <="}},
		// An operator the grammar does not have.
		{"stream.ttft.p99=2s", []string{`operator "=" is not supported`}},
		{"stream.ttft.p99 == 2s", []string{`operator "==" is not supported`}},
		{"stream.ttft.p99 != 2s", []string{`operator "!=" is not supported`}},
		// Two operators.
		{"1s < ttft.p99 < 2s", []string{"more than one operator"}},
		// A duration metric with a bare number.
		{"ttft.p99>2", []string{`value "2"`, "needs a unit", "2ms or 2s"}},
		// Not a duration.
		{"ttft.p99>fast", []string{"not a duration", "2s, 150ms"}},
		// A duration for a count metric.
		{"output_tokens.p50>2s", []string{"output_tokens is a number", "not a duration"}},
		// The error rate without %.
		{"errors.rate>0.01", []string{"percentage such as 1%"}},
		// Over 100%.
		{"errors.rate>150%", []string{"from 0% to 100%"}},
		// A negative number.
		{"outcome.ok.count>-1", []string{"plain number"}},
		// errors.something else.
		{"errors.count>1", []string{"errors.rate"}},
		// An outcome gate without .count.
		{"outcome.timeout.gap>0", []string{"outcome.CLASS.count"}},
		// An unknown outcome class.
		{"outcome.slow.count>0", []string{`unknown outcome class "slow"`, "timeout"}},
		// A metric without a stat.
		{"ttft>2s", []string{"has no statistic", "ttft.p99"}},
		// Nothing on one side.
		{">2s", []string{"nothing before"}},
		{"ttft.p99>", []string{"no value"}},
		// Empty parts.
		{"stream..p99>2s", []string{"malformed"}},
		// A path alone.
		{"stream>2s", []string{"names a path but no metric"}},
		// Not a number for a count.
		{"ttft.count>many", []string{"plain number"}},
		// NaN is not a number a gate can compare.
		{"ttft.count>NaN", []string{"plain number"}},
	}
	for _, tc := range cases {
		_, err := ParseExpr(tc.in)
		if err == nil {
			t.Errorf("ParseExpr(%q) succeeded, want an error", tc.in)
			continue
		}
		for _, frag := range tc.want {
			if !strings.Contains(err.Error(), frag) {
				t.Errorf("ParseExpr(%q) error %q lacks %q", tc.in, err, frag)
			}
		}
	}
}

func TestParsePercent(t *testing.T) {
	for in, want := range map[string]float64{"10": 10, "10%": 10, " 2.5% ": 2.5, "0": 0} {
		got, err := ParsePercent(in)
		if err != nil || got != want {
			t.Errorf("ParsePercent(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-5", "ten", "5%%"} {
		if _, err := ParsePercent(in); err == nil {
			t.Errorf("ParsePercent(%q) succeeded", in)
		}
	}
}

func FuzzParseExpr(f *testing.F) {
	for _, s := range []string{"stream.ttft.p99>2s", "errors.rate>1%", "outcome.http.429.count>=3", "gap.p999 <= 1m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseExpr(s)
		if err != nil {
			if !strings.Contains(err.Error(), "--fail-on") {
				t.Errorf("error %q does not say it is about --fail-on", err)
			}
			return
		}
		// A parsed expression has an operator and a usable threshold.
		if !e.Op.holds(1, 0) && !e.Op.holds(0, 1) {
			t.Errorf("%q parsed with operator %q", s, e.Op)
		}
		if e.Value < 0 || e.Value != e.Value {
			t.Errorf("%q parsed with value %v", s, e.Value)
		}
	})
}
