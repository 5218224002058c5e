package recommend

import (
	"testing"

	"github.com/tollgate-dev/tollgate/report"
)

// BenchmarkRecommend is one recommendation from a mixed run's results
// (histogram decoding included), as probe does at the end of every run
// and recommend does per invocation.
func BenchmarkRecommend(b *testing.B) {
	t := &testing.T{}
	r := results(map[string]*report.Path{report.PathStream: seedStream(t), report.PathBatch: seedBatch(t)})
	p := DefaultPolicy()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Recommend(r, p); err != nil {
			b.Fatal(err)
		}
	}
}
