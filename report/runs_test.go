package report

import (
	"reflect"
	"testing"
	"time"
)

func TestSortPaths(t *testing.T) {
	got := SortPaths([]string{"zeta", "batch", "alpha", "stream"})
	want := []string{"stream", "batch", "alpha", "zeta"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SortPaths = %v, want %v", got, want)
	}
}

func TestProbeDifferences(t *testing.T) {
	a := Run{Target: "t", API: "anthropic", Model: "m", Mode: "stream", Clocks: Clocks{Gap: Duration(10 * time.Second)},
		Load: Load{Concurrency: 4, Shard: "1/2"}}
	b := a
	b.Load.Shard, b.Load.Concurrency = "2/2", 8
	if d := ProbeDifferences(a, b); len(d) != 0 {
		t.Errorf("shards of one probe differ: %v", d)
	}
	if d := LoadDifferences(a, b); len(d) != 1 || d[0].String() != "load.concurrency: 4 vs 8" {
		t.Errorf("LoadDifferences = %v", d)
	}
	b.Model, b.Clocks.Gap = "n", Duration(time.Second)
	want := []Difference{{"model", "m", "n"}, {"clocks.gap", "10s", "1s"}}
	if d := ProbeDifferences(a, b); !reflect.DeepEqual(d, want) {
		t.Errorf("ProbeDifferences = %v, want %v", d, want)
	}
}
