// Package shard splits one probe into N shards that can run on N machines
// and merge exactly (tollgate merge): `probe --shard I/N` takes a
// deterministic 1/N of the items and of the rate.
//
// The split is by item index, round robin: item i (0-based, in the order the
// prompts file lists them or the order the run generates them) belongs to
// shard I (1-based) when i mod N == I-1. Every item belongs to exactly one
// shard whatever N is, the shards differ in size by at most one item, and
// the split does not depend on timing, so re-running a shard takes the same
// items. The rate is divided evenly: each of N shards paces total/N per
// second, so N open-loop shards together offer the rate of the unsplit run.
//
// The package imports nothing from tollgate so that the engine (probe) can
// use it without importing report.
package shard

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is shard Index (1-based) of Count. The zero value is "not sharded":
// it owns every item and keeps the whole rate.
type Shard struct {
	Index int
	Count int
}

// ParseShard reads "I/N" (for example "2/4"): 1 <= I <= N. Errors name the
// text and say what is valid.
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want I/N, for example 1/4", s)
	}
	index, err := strconv.Atoi(strings.TrimSpace(i))
	if err != nil {
		return Shard{}, fmt.Errorf("shard %q: index %q is not a whole number: want I/N, for example 1/4", s, i)
	}
	count, err := strconv.Atoi(strings.TrimSpace(n))
	if err != nil {
		return Shard{}, fmt.Errorf("shard %q: count %q is not a whole number: want I/N, for example 1/4", s, n)
	}
	if count < 1 {
		return Shard{}, fmt.Errorf("shard %q: count %d must be at least 1", s, count)
	}
	if index < 1 || index > count {
		return Shard{}, fmt.Errorf("shard %q: index %d must be between 1 and %d (shards are numbered from 1)", s, index, count)
	}
	return Shard{Index: index, Count: count}, nil
}

// IsZero reports whether s is the zero value (not sharded).
func (s Shard) IsZero() bool { return s.Count == 0 }

// String formats s as "I/N"; the zero value is "".
func (s Shard) String() string {
	if s.IsZero() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Owns reports whether item index (0-based) belongs to s: index mod Count
// == Index-1. The zero Shard owns every item.
func (s Shard) Owns(index int) bool {
	if s.Count <= 1 {
		return true
	}
	return index%s.Count == s.Index-1
}

// Items is how many of total items (indices 0..total-1) s owns; use it to
// turn `-n total` into this shard's request count.
func (s Shard) Items(total int) int {
	if s.Count <= 1 || total <= 0 {
		return max(total, 0)
	}
	return (total - (s.Index - 1) + s.Count - 1) / s.Count
}

// Rate is this shard's share of an open-loop rate: total / Count per second.
// The zero Shard keeps the whole rate.
func (s Shard) Rate(total float64) float64 {
	if s.Count <= 1 {
		return total
	}
	return total / float64(s.Count)
}
