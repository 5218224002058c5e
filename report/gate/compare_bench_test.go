package gate

import (
	"testing"
)

// BenchmarkCompare compares two runs of one path with five metrics of
// 10,000 samples each: decode both histograms, four percentiles with
// their intervals, verdicts.
func BenchmarkCompare(b *testing.B) {
	metrics := map[string][]int64{}
	for _, m := range []string{"connect", "ttft", "gap", "max_gap", "total"} {
		metrics[m] = spread(10000, ms(1), ms(3000))
	}
	base := buildResults(b, map[string]pathSpec{"stream": {calls: 10000, outcomes: map[string]int64{"ok": 10000}, metrics: metrics}})
	cur := buildResults(b, map[string]pathSpec{"stream": {calls: 10000, outcomes: map[string]int64{"ok": 9990}, metrics: metrics}})
	b.ResetTimer()
	for b.Loop() {
		if _, err := Compare(base, cur, CompareOptions{MaxRegression: 10}); err != nil {
			b.Fatal(err)
		}
	}
}
