package render

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/histo"
	"github.com/tollgate-dev/tollgate/report"
)

// metricOf summarises values (µs for durations) as the probe would.
func metricOf(t *testing.T, name string, values ...int64) *report.Metric {
	t.Helper()
	h := histo.New()
	for _, v := range values {
		h.RecordValue(v)
	}
	m, err := report.Summarize(name, h)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSparseResults renders results a real run can produce at the edges:
// no call succeeded, one call, values of zero, a histogram missing from a
// hand-edited file, no recommendation and no run times. Every format must
// render them without failing and say what there is.
func TestSparseResults(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    *report.Results
		has  string
	}{
		{
			// Every call was refused: outcomes but no metrics.
			name: "all failed",
			r: &report.Results{Schema: report.Schema, Run: report.Run{Target: "http://127.0.0.1:9"}, Paths: map[string]*report.Path{
				report.PathStream: {Calls: 5, Outcomes: map[string]int64{"transport": 5}, Metrics: map[string]*report.Metric{}},
			}},
			has: "transport",
		},
		{
			// One call: percentiles all equal, a one-value gap histogram.
			name: "one call",
			r: &report.Results{Schema: report.Schema, Paths: map[string]*report.Path{
				report.PathStream: {Calls: 1, Outcomes: map[string]int64{"ok": 1}, Metrics: map[string]*report.Metric{
					histo.MetricTTFT:    metricOf(t, histo.MetricTTFT, 420_000),
					histo.MetricTotal:   metricOf(t, histo.MetricTotal, 900_000),
					histo.MetricGap:     metricOf(t, histo.MetricGap, 30_000),
					histo.MetricByteGap: metricOf(t, histo.MetricByteGap, 0),
				}},
			}, Recommendation: &report.Recommendation{Stream: report.StreamTimeouts{Gap: report.Duration(10 * time.Second)}}},
			has: "ttft",
		},
		{
			// Gaps of zero (deltas that arrived in one read) and a metric
			// whose histogram was stripped from the file.
			name: "zeros and no histogram",
			r: &report.Results{Schema: report.Schema, Paths: map[string]*report.Path{
				report.PathStream: {Calls: 3, Outcomes: map[string]int64{"ok": 3}, Metrics: map[string]*report.Metric{
					histo.MetricGap:  metricOf(t, histo.MetricGap, 0, 0, 0, 0),
					histo.MetricTTFT: {Count: 3, P50: 400, Max: 500, Unit: "ms"},
				}},
			}},
			has: "gap",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, format := range Formats {
				var buf bytes.Buffer
				if err := Write(&buf, tc.r, format, Options{}); err != nil {
					t.Fatalf("%s: %v", format, err)
				}
				if !strings.Contains(buf.String(), tc.has) {
					t.Errorf("%s: output lacks %q", format, tc.has)
				}
			}
		})
	}
}
