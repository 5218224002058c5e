package histo

import (
	"runtime"
	"sync"
	"time"
)

// Recorder lets many goroutines record into one logical Set without a
// single lock becoming the bottleneck.
//
// Concurrency: the recorder holds a fixed number of shards, each a Set
// behind its own mutex. Each worker records through Shard(id), so workers
// with different ids mod the shard count never contend, and a worker takes
// one lock per call result (Shard.Do) rather than one per metric. Readers
// (Flush, Snapshot) hold each shard's lock only long enough to swap or copy
// its Set; merging happens outside the locks. Merges are exact, so the
// shard count changes memory use (one dense histogram of about 230 KB per
// metric per shard) but never the numbers.
type Recorder struct {
	shards []*Shard

	// mu guards total and serializes Flush and Snapshot.
	mu    sync.Mutex
	total *Set
}

// Shard is one shard of a Recorder. Its methods are safe for concurrent
// use.
type Shard struct {
	mu    sync.Mutex
	set   *Set
	spare *Set
	// pad keeps neighbouring shards' mutexes off one cache line.
	_ [64]byte
}

// NewRecorder returns a recorder with n shards; n <= 0 means GOMAXPROCS.
func NewRecorder(n int) *Recorder {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	r := &Recorder{shards: make([]*Shard, n), total: NewSet()}
	for i := range r.shards {
		r.shards[i] = &Shard{set: NewSet(), spare: NewSet()}
	}
	return r
}

// Shard returns the shard for worker id (any int; taken mod the shard
// count).
func (r *Recorder) Shard(id int) *Shard {
	if id < 0 {
		id = -id
	}
	return r.shards[id%len(r.shards)]
}

// Do runs f with the shard's Set under the shard's lock: record every
// metric of one call result with one lock acquisition. f must not keep the
// Set after it returns.
func (s *Shard) Do(f func(*Set)) {
	s.mu.Lock()
	f(s.set)
	s.mu.Unlock()
}

// Record records d into the shard's histogram named name.
func (s *Shard) Record(name string, d time.Duration) {
	s.mu.Lock()
	s.set.Get(name).Record(d)
	s.mu.Unlock()
}

// RecordValue records v into the shard's histogram named name.
func (s *Shard) RecordValue(name string, v int64) {
	s.mu.Lock()
	s.set.Get(name).RecordValue(v)
	s.mu.Unlock()
}

// swap takes the shard's recorded Set, leaving an empty one in its place.
func (s *Shard) swap() *Set {
	s.mu.Lock()
	got := s.set
	s.set, s.spare = s.spare, nil
	s.mu.Unlock()
	return got
}

// Flush returns what was recorded since the previous Flush (an interval,
// for the interval log), merged over all shards, and adds it to the
// recorder's total. The returned Set is the caller's.
func (r *Recorder) Flush() *Set {
	r.mu.Lock()
	defer r.mu.Unlock()
	interval := NewSet()
	for _, s := range r.shards {
		got := s.swap()
		interval.Merge(got)
		got.Reset()
		// The emptied Set becomes the next spare; only Flush touches spare,
		// and r.mu serializes Flush.
		s.mu.Lock()
		s.spare = got
		s.mu.Unlock()
	}
	r.total.Merge(interval)
	return interval
}

// Snapshot returns everything recorded so far (flushed or not), merged
// over all shards, without disturbing intervals. The returned Set is the
// caller's.
func (r *Recorder) Snapshot() *Set {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.total.Clone()
	for _, s := range r.shards {
		// Copy under the lock (a memory copy) and merge outside it, so
		// recording waits for as little as possible.
		s.mu.Lock()
		c := s.set.Clone()
		s.mu.Unlock()
		out.Merge(c)
	}
	return out
}
