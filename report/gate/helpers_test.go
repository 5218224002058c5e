package gate

import (
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/histo"
	"github.com/tollgate-dev/tollgate/report"
)

// pathSpec describes one synthetic path: its call count, outcomes, and the
// values of each metric (µs for durations, plain for counts).
type pathSpec struct {
	calls    int64
	outcomes map[string]int64
	metrics  map[string][]int64
}

// buildResults makes a results value from specs the way the probe does:
// each metric's histogram summarized by report.Summarize.
func buildResults(t testing.TB, specs map[string]pathSpec) *report.Results {
	t.Helper()
	r := &report.Results{
		Schema: report.Schema,
		Run:    report.Run{API: "anthropic", Model: "m", Mode: "both", Target: "http://127.0.0.1:1", Started: time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)},
		Paths:  map[string]*report.Path{},
	}
	for name, s := range specs {
		p := &report.Path{Calls: s.calls, Outcomes: s.outcomes, Metrics: map[string]*report.Metric{}}
		for metric, values := range s.metrics {
			h := histo.New()
			for _, v := range values {
				h.RecordValue(v)
			}
			m, err := report.Summarize(metric, h)
			if err != nil {
				t.Fatal(err)
			}
			p.Metrics[metric] = m
		}
		r.Paths[name] = p
	}
	return r
}

// spread returns n values evenly spread over [lo, hi].
func spread(n int, lo, hi int64) []int64 {
	out := make([]int64, n)
	for i := range n {
		if n == 1 {
			out[i] = lo
			continue
		}
		out[i] = lo + (hi-lo)*int64(i)/int64(n-1)
	}
	return out
}

// scaled returns vs each multiplied by f.
func scaled(vs []int64, f float64) []int64 {
	out := make([]int64, len(vs))
	for i, v := range vs {
		out[i] = int64(float64(v) * f)
	}
	return out
}

// ms is n milliseconds in µs.
func ms(n int64) int64 { return n * 1000 }
