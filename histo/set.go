package histo

import (
	"maps"
	"slices"
	"time"
)

// Set is a group of named histograms (metric name -> histogram), such as
// one path's metrics. The zero value is not usable; call NewSet. A Set is
// not safe for concurrent use.
type Set struct {
	m map[string]*Histogram
}

// NewSet returns an empty set.
func NewSet() *Set { return &Set{m: make(map[string]*Histogram)} }

// Get returns the histogram named name, creating it empty on first use.
func (s *Set) Get(name string) *Histogram {
	h, ok := s.m[name]
	if !ok {
		h = New()
		s.m[name] = h
	}
	return h
}

// Lookup returns the histogram named name, or nil when there is none.
func (s *Set) Lookup(name string) *Histogram { return s.m[name] }

// Record records d into the histogram named name.
func (s *Set) Record(name string, d time.Duration) { s.Get(name).Record(d) }

// RecordValue records v into the histogram named name.
func (s *Set) RecordValue(name string, v int64) { s.Get(name).RecordValue(v) }

// Names returns the names of the set's histograms, sorted.
func (s *Set) Names() []string { return slices.Sorted(maps.Keys(s.m)) }

// Len is the number of histograms in the set.
func (s *Set) Len() int { return len(s.m) }

// Merge adds every histogram of o into the histogram of the same name in
// s, exactly. o is not changed.
func (s *Set) Merge(o *Set) {
	if o == nil {
		return
	}
	for name, h := range o.m {
		s.Get(name).Merge(h)
	}
}

// Clone returns an independent copy of s.
func (s *Set) Clone() *Set {
	c := &Set{m: make(map[string]*Histogram, len(s.m))}
	for name, h := range s.m {
		c.m[name] = h.Clone()
	}
	return c
}

// Reset empties every histogram of s, keeping names and storage.
func (s *Set) Reset() {
	for _, h := range s.m {
		h.Reset()
	}
}
