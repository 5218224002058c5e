package histo

import (
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRecorderConcurrentIsExact(t *testing.T) {
	r := NewRecorder(3)
	want := NewSet()
	const workers, per = 8, 2000
	for w := 0; w < workers; w++ {
		for i := 0; i < per; i++ {
			want.Record("ttft", time.Duration(w*per+i)*time.Microsecond)
			want.RecordValue("output_tokens", int64(i%300))
		}
	}
	var wg sync.WaitGroup
	flushed := NewSet()
	done := make(chan struct{})
	go func() {
		// Flush concurrently with recording: intervals must partition the
		// values, none lost or counted twice.
		defer close(done)
		for i := 0; i < 20; i++ {
			flushed.Merge(r.Flush())
			time.Sleep(time.Millisecond)
		}
	}()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			s := r.Shard(w)
			for i := 0; i < per; i++ {
				s.Do(func(set *Set) {
					set.Record("ttft", time.Duration(w*per+i)*time.Microsecond)
					set.RecordValue("output_tokens", int64(i%300))
				})
			}
		}(w)
	}
	wg.Wait()
	<-done
	snap := r.Snapshot()
	flushed.Merge(r.Flush())
	for _, name := range want.Names() {
		if !snap.Get(name).Equal(want.Get(name)) {
			t.Errorf("%s: snapshot differs from single-threaded recording", name)
		}
		if !flushed.Get(name).Equal(want.Get(name)) {
			t.Errorf("%s: sum of intervals differs from single-threaded recording", name)
		}
	}
	if got := r.Snapshot().Get("ttft").Count(); got != workers*per {
		t.Errorf("total after final flush %d, want %d", got, workers*per)
	}
	if r.Flush().Get("ttft").Count() != 0 {
		t.Error("a flush with nothing recorded since is not empty")
	}
}

func TestSetNamesAndMerge(t *testing.T) {
	a, b := NewSet(), NewSet()
	a.RecordValue("total", 5)
	b.RecordValue("ttft", 7)
	b.RecordValue("total", 9)
	a.Merge(b)
	if got := a.Names(); len(got) != 2 || got[0] != "total" || got[1] != "ttft" {
		t.Errorf("names %v, want [total ttft]", got)
	}
	if a.Get("total").Count() != 2 || b.Get("total").Count() != 1 {
		t.Error("merge miscounted or changed its source")
	}
	if a.Lookup("gap") != nil {
		t.Error("Lookup created a histogram")
	}
}

func TestShardNegativeID(t *testing.T) {
	r := NewRecorder(2)
	r.Shard(-3).RecordValue("x", 1)
	if r.Snapshot().Get("x").Count() != 1 {
		t.Error("negative worker id lost its value")
	}
}
