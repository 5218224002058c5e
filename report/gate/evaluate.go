package gate

import (
	"fmt"
	"maps"
	"slices"

	"github.com/tollgate-dev/tollgate/report"
)

// Verdict is the result of one expression on one path.
type Verdict struct {
	// Expr is the expression (written as the user typed it in JSON).
	Expr Expr `json:"gate"`
	// Path is the path judged; "" when the expression found no path.
	Path string `json:"path,omitempty"`
	// Observed is the value measured, in Unit (ms, %, or plain).
	Observed float64 `json:"observed"`
	// Unit is Observed's unit.
	Unit string `json:"unit"`
	// Failed is true when the expression holds (the gate is breached) or
	// when there was no data to judge.
	Failed bool `json:"failed"`
	// NoData is true when the results hold nothing the expression could be
	// judged on: no such path, no such metric, or no calls. A gate on
	// nothing fails rather than passes silently.
	NoData bool `json:"no_data,omitempty"`
	// Message says what was judged, in a line a CI log shows:
	// "stream.ttft.p99 = 2.31s > 2s".
	Message string `json:"message"`
}

// AnyFailed reports whether any verdict failed (exit 1).
func AnyFailed(vs []Verdict) bool {
	for _, v := range vs {
		if v.Failed {
			return true
		}
	}
	return false
}

// Evaluate judges each expression on r and returns one verdict per
// expression and path, in the order of exprs (stream before batch).
//
// A metric statistic is read from the results' summary, the numbers the
// report shows (Summarize computed them from the histogram). An expression
// with a PATH judges that path; without one it judges every path that has
// the data, and fails if any breaches. When nothing can be judged — the
// path is absent, no path has the metric, the metric has no samples, or a
// path has no calls for errors.rate — the verdict has NoData set and fails,
// so that a misspelt or unmeasured gate does not pass silently. Counts are
// data even when zero: metric.count of an absent metric on a present path
// is 0, and outcome.CLASS.count of a class never seen is 0.
func Evaluate(r *report.Results, exprs []Expr) []Verdict {
	var out []Verdict
	for _, e := range exprs {
		out = append(out, evaluate(r, e)...)
	}
	return out
}

// evaluate judges one expression on every path it applies to.
func evaluate(r *report.Results, e Expr) []Verdict {
	var paths []string
	switch {
	case r == nil || len(r.Paths) == 0:
		return []Verdict{noData(e, "", "the results hold no path")}
	case e.Path != "":
		if r.Paths[e.Path] == nil {
			return []Verdict{noData(e, e.Path, fmt.Sprintf("the results have no %s path", e.Path))}
		}
		paths = []string{e.Path}
	default:
		for _, name := range orderedPaths(r.Paths) {
			if e.Kind != KindMetric || e.Stat == "count" || r.Paths[name].Metrics[e.Metric] != nil {
				paths = append(paths, name)
			}
		}
		if len(paths) == 0 {
			return []Verdict{noData(e, "", fmt.Sprintf("no path has %s", e.Metric))}
		}
	}
	out := make([]Verdict, 0, len(paths))
	for _, name := range paths {
		out = append(out, judge(e, name, r.Paths[name]))
	}
	return out
}

// judge evaluates e on one path.
func judge(e Expr, name string, p *report.Path) Verdict {
	var observed float64
	unit := e.Unit
	switch e.Kind {
	case KindErrorRate:
		if p.Calls <= 0 {
			return noData(e, name, fmt.Sprintf("%s has no calls", name))
		}
		observed = ErrorRate(p)
	case KindOutcome:
		observed = float64(p.Outcomes[e.Class])
	default:
		m := p.Metrics[e.Metric]
		switch {
		case e.Stat == "count":
			if m != nil {
				observed = float64(m.Count)
			}
		case m == nil:
			return noData(e, name, fmt.Sprintf("%s has no %s", name, e.Metric))
		case m.Count == 0:
			return noData(e, name, fmt.Sprintf("%s.%s has no samples", name, e.Metric))
		default:
			observed = stat(m, e.Stat)
		}
	}
	v := Verdict{Expr: e, Path: name, Observed: observed, Unit: unit}
	subject := e.subject(name)
	shown := formatValue(observed, unit)
	if e.Op.holds(observed, e.Value) {
		v.Failed = true
		v.Message = fmt.Sprintf("%s = %s %s %s", subject, shown, e.Op, e.ValueText)
	} else {
		v.Message = fmt.Sprintf("%s = %s %s %s", subject, shown, e.Op.negation(), e.ValueText)
	}
	return v
}

// noData is the failing verdict of an expression with nothing to judge.
func noData(e Expr, path, why string) Verdict {
	return Verdict{
		Expr: e, Path: path, Unit: e.Unit, Failed: true, NoData: true,
		Message: fmt.Sprintf("%s: no data (%s)", e.subject(path), why),
	}
}

// ErrorRate is the percentage of p's calls whose outcome is not ok; 0 when
// p has no calls.
func ErrorRate(p *report.Path) float64 {
	if p == nil || p.Calls <= 0 {
		return 0
	}
	return 100 * float64(p.Calls-p.Outcomes["ok"]) / float64(p.Calls)
}

// stat reads one statistic of a summary.
func stat(m *report.Metric, name string) float64 {
	switch name {
	case "p50":
		return m.P50
	case "p90":
		return m.P90
	case "p95":
		return m.P95
	case "p99":
		return m.P99
	case "p999":
		return m.P999
	case "max":
		return m.Max
	case "min":
		return m.Min
	case "mean":
		return m.Mean
	case "count":
		return float64(m.Count)
	}
	return 0
}

// orderedPaths lists the names of paths in table order (report.SortPaths).
func orderedPaths[V any](paths map[string]V) []string {
	return report.SortPaths(slices.Collect(maps.Keys(paths)))
}
