package histo

import (
	"sync/atomic"
	"testing"
	"time"
)

func BenchmarkRecord(b *testing.B) {
	h := New()
	d := 1234 * time.Microsecond
	for i := 0; b.Loop(); i++ {
		h.Record(d + time.Duration(i&1023)*time.Microsecond)
	}
}

// BenchmarkRecorderParallel records one call result (three metrics) per
// operation from GOMAXPROCS goroutines, each with its own worker id, so
// each records into its own shard.
func BenchmarkRecorderParallel(b *testing.B) { benchRecorder(b, 0) }

// BenchmarkRecorderParallelOneShard is the same through a single shard:
// what the recorder would cost as one histogram set behind one lock.
func BenchmarkRecorderParallelOneShard(b *testing.B) { benchRecorder(b, 1) }

func benchRecorder(b *testing.B, shards int) {
	r := NewRecorder(shards)
	var ids atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		s := r.Shard(int(ids.Add(1)))
		i := 0
		for pb.Next() {
			i++
			s.Do(func(set *Set) {
				set.Record("ttft", time.Duration(300_000+i&4095)*time.Microsecond)
				set.Record("total", time.Duration(2_000_000+i&65535)*time.Microsecond)
				set.RecordValue("output_tokens", int64(i&511))
			})
		}
	})
}

func BenchmarkMerge(b *testing.B) {
	src := New()
	for i := int64(0); i < 100_000; i++ {
		src.RecordValue(1000 + i*37)
	}
	dst := New()
	for b.Loop() {
		dst.Merge(src)
	}
}
