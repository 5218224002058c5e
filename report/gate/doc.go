// Package gate decides whether a run passes CI: --fail-on expressions
// judged on one run (ParseExpr, Evaluate) and a regression comparison of
// two runs (Compare), with renderers for a terminal (WriteCompareTable,
// WriteVerdicts) and a CI step summary (WriteCompareMarkdown).
//
// # Expressions
//
// ParseExpr reads SPEC §5's grammar: [PATH.]METRIC.STAT OP VALUE,
// errors.rate OP PCT and outcome.CLASS.count OP N. An expression states the
// failure: "stream.ttft.p99>2s" fails the build when the stream path's p99
// TTFT exceeds 2 s. Evaluate judges each expression on every path it
// applies to and returns a Verdict per path; a gate with nothing to judge
// (a path or metric the run does not have) fails with "no data" instead of
// passing silently.
//
// # Comparison
//
// Compare judges a new run against a base run: per path, metric and
// percentile (p50 p90 p99 p999), recomputed from the HdrHistograms, a
// regression is a value worse than base by more than MaxRegression percent,
// by at least MinDelta for durations, and by more than noise (the two
// values' distribution-free 95% confidence intervals do not overlap); the
// error rate may rise by MaxErrorRateIncrease points, and a larger rise
// fails only when a two-proportion z-test says it is significant. Only what
// is comparable is compared: percentile q of n samples is judged only when
// n*(1-q) >= MinTail (default 10) in both runs, so p99 needs 1,000 samples
// and p999 10,000; below that, or when a change is within noise, the row
// says "too few samples" and neither passes nor fails. The max is never
// compared (it is one sample).
//
// # Use from probe
//
// probe --fail-on, --baseline and --max-regression map onto this package:
//
//	exprs := make([]gate.Expr, 0, len(failOn))     // before any call is sent:
//	for _, s := range failOn {                     // a bad expression is exit 2
//		e, err := gate.ParseExpr(s)
//		...
//		exprs = append(exprs, e)
//	}
//	base, err := report.LoadFile(baselinePath)     // also before the run: exit 2
//	pct, err := gate.ParsePercent(maxRegression)   // "10" or "10%"; default gate.DefaultMaxRegression
//
//	// after the run, with results r:
//	verdicts := gate.Evaluate(r, exprs)            // without a baseline
//	gate.WriteVerdicts(errOut, verdicts)
//	failed := gate.AnyFailed(verdicts)
//
//	c, err := gate.Compare(base, r, gate.CompareOptions{  // with a baseline
//		MaxRegression: pct, FailOn: exprs, BaseLabel: baselinePath, NewLabel: "this run"})
//	gate.WriteCompareTable(out, c)                 // or WriteCompareMarkdown
//	failed := c.Breached                           // exit 1 when true
//
// Comparison and Verdict marshal to JSON for --format json.
package gate
