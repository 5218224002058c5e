package merge

import (
	"testing"

	"github.com/tollgate-dev/tollgate/probe/shard"
	"github.com/tollgate-dev/tollgate/report"
)

// BenchmarkMerge8Shards merges eight shards of a 20,000-call probe (two
// paths, about 200,000 gap samples): decode, merge, re-encode and
// re-summarize every histogram.
func BenchmarkMerge8Shards(b *testing.B) {
	calls := recordings(20000)
	var parts []*report.Results
	for i := 1; i <= 8; i++ {
		parts = append(parts, buildFrom(b, calls, shard.Shard{Index: i, Count: 8}))
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Merge(parts); err != nil {
			b.Fatal(err)
		}
	}
}
