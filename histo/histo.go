// Package histo records measurements into HdrHistograms and does the math
// tollgate's reports and recommendations need: exact merging of shards, the
// V2 compressed encoding other HdrHistogram tools read, percentiles, counts
// above a threshold, log-scale bars, the interval log, and the cluster and
// confidence math behind recommended timeouts.
//
// Durations are recorded in microseconds with 3 significant digits over
// 1 µs .. MaxValue (24 h); counts (output tokens, attempts) use the same type
// with plain values. Three significant digits means any recorded value is
// known to within 0.1%: values that fall in the same bucket ("equivalent"
// values, e.g. 40,000 µs and 40,031 µs) cannot be told apart afterwards.
//
// A Histogram and a Set are not safe for concurrent use. Record from many
// goroutines through a Recorder, which shards the recording and merges the
// shards when asked.
package histo

import (
	"errors"
	"fmt"
	"math/bits"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Geometry of every tollgate histogram.
const (
	// LowestValue is the lowest discernible value (1 µs for durations).
	LowestValue = 1
	// MaxValue is the highest trackable value: 24 h in microseconds. Larger
	// values are recorded as MaxValue and counted by Clamped.
	MaxValue = int64(24 * time.Hour / time.Microsecond)
	// SignificantDigits is the precision of every histogram (0.1%).
	SignificantDigits = 3
)

// Histogram is an HdrHistogram of microseconds (or plain counts) with
// tollgate's fixed geometry. The zero value is not usable; call New.
// A Histogram is not safe for concurrent use.
type Histogram struct {
	h *hdr.Histogram
	// clamped counts values recorded out of range (above MaxValue, or
	// negative). It is not part of the V2 encoding.
	clamped int64
}

// New returns an empty histogram.
func New() *Histogram {
	return &Histogram{h: hdr.New(LowestValue, MaxValue, SignificantDigits)}
}

// Record records d in microseconds (truncated; below 1 µs is 0).
func (h *Histogram) Record(d time.Duration) {
	h.RecordValue(d.Microseconds())
}

// RecordValue records v. A negative v is recorded as 0 and a v above
// MaxValue as MaxValue; both are counted by Clamped.
func (h *Histogram) RecordValue(v int64) {
	h.RecordValues(v, 1)
}

// RecordValues records n occurrences of v, clamped as RecordValue does.
// A non-positive n records nothing.
func (h *Histogram) RecordValues(v, n int64) {
	if n <= 0 {
		return
	}
	switch {
	case v < 0:
		v = 0
		h.clamped += n
	case v > MaxValue:
		v = MaxValue
		h.clamped += n
	}
	// Cannot fail: v is in range and n is positive; only a total count
	// overflowing int64 would be rejected, which no run reaches.
	_ = h.h.RecordValues(v, n)
}

// Clamped is the number of values that were out of range when recorded
// (see RecordValue). It is lost by Encode: Decode returns 0.
func (h *Histogram) Clamped() int64 { return h.clamped }

// Merge adds every value of o to h. Both histograms share one geometry, so
// the merge is exact: percentiles of the merge equal those of one histogram
// that recorded every value.
func (h *Histogram) Merge(o *Histogram) {
	if o == nil {
		return
	}
	h.h.Merge(o.h)
	h.clamped += o.clamped
}

// Count is the number of recorded values.
func (h *Histogram) Count() int64 { return h.h.TotalCount() }

// Min is the lowest equivalent value of the lowest recorded value; 0 when
// empty.
func (h *Histogram) Min() int64 {
	if h.Count() == 0 {
		return 0
	}
	return h.h.Min()
}

// Max is the highest equivalent value of the highest recorded value; 0 when
// empty.
func (h *Histogram) Max() int64 {
	if h.Count() == 0 {
		return 0
	}
	return h.h.Max()
}

// Mean is the mean of the recorded values (each taken at its bucket's
// midpoint); 0 when empty.
func (h *Histogram) Mean() float64 { return h.h.Mean() }

// StdDev is the standard deviation of the recorded values; 0 when empty.
func (h *Histogram) StdDev() float64 { return h.h.StdDev() }

// Quantile returns the value at percentile p in [0, 100] (99.9 is p999):
// the highest equivalent value of the bucket holding that rank; 0 when
// empty.
func (h *Histogram) Quantile(p float64) int64 { return h.h.ValueAtPercentile(p) }

// QuantileDuration is Quantile of a histogram of microseconds.
func (h *Histogram) QuantileDuration(p float64) time.Duration {
	return time.Duration(h.Quantile(p)) * time.Microsecond
}

// CountAbove counts the recorded values strictly greater than v: the calls
// a deadline of v would have killed. A value is counted when its whole
// bucket lies above v; a value equivalent to v (in v's 0.1% bucket) counts
// as v. The count is therefore exact whenever v is the highest value of its
// bucket (HighestEquivalent(v) == v) and otherwise misses at most the
// values in (v, HighestEquivalent(v)].
func (h *Histogram) CountAbove(v int64) int64 {
	var n int64
	for _, b := range h.buckets() {
		if b.Lo > v {
			n += b.Count
		}
	}
	return n
}

// HighestEquivalent is the highest value that the histogram cannot tell
// apart from v: the top of v's bucket.
func (h *Histogram) HighestEquivalent(v int64) int64 {
	v = min(max(v, 0), MaxValue)
	w := bucketWidth(v)
	return v&^(w-1) + w - 1
}

// subBucketBits is log2 of the sub-bucket count HdrHistogram uses for
// SignificantDigits digits with a lowest value of 1: 2048 sub-buckets, the
// smallest power of two of at least 2 x 10^3.
const subBucketBits = 11

// bucketWidth is the width of the bucket holding v >= 0: 1 below 2048,
// then doubling with each power of two (HdrHistogram's bucket geometry,
// checked against the library in the tests).
func bucketWidth(v int64) int64 {
	shift := bits.Len64(uint64(v)|(1<<subBucketBits-1)) - subBucketBits
	return 1 << shift
}

// Clone returns an independent copy of h.
func (h *Histogram) Clone() *Histogram {
	return &Histogram{h: h.h.Clone(), clamped: h.clamped}
}

// Reset empties h, keeping its storage.
func (h *Histogram) Reset() {
	h.h.Reset()
	h.clamped = 0
}

// Equal reports whether h and o hold the same counts in every bucket.
func (h *Histogram) Equal(o *Histogram) bool { return h.h.Equals(o.h) }

// Encode returns h in the HdrHistogram V2 compressed encoding, base64
// ("HISTFAAA..."), the form HdrHistogram tools in every language read.
func (h *Histogram) Encode() (string, error) {
	b, err := h.h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// ErrEmptyEncoding is returned by Decode for an empty string.
var ErrEmptyEncoding = errors.New("empty histogram encoding")

// Decode reads a V2 compressed base64 histogram. A histogram written with
// another geometry (another tool's) is re-recorded into tollgate's, values
// at each bucket's lowest equivalent value, those above MaxValue clamped.
func Decode(s string) (*Histogram, error) {
	if s == "" {
		return nil, ErrEmptyEncoding
	}
	d, err := hdr.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	if d.LowestTrackableValue() == LowestValue && d.HighestTrackableValue() == MaxValue &&
		d.SignificantFigures() == SignificantDigits {
		d.SetTag("")
		return &Histogram{h: d}, nil
	}
	out := New()
	for _, b := range d.Distribution() {
		if b.Count > 0 {
			out.RecordValues(b.From, b.Count)
		}
	}
	return out, nil
}

// bucket is one populated bucket: every value in [Lo, Hi] is equivalent.
type bucket struct {
	Lo, Hi, Count int64
}

// buckets returns h's populated buckets in ascending order.
func (h *Histogram) buckets() []bucket {
	if h.Count() == 0 {
		return nil
	}
	var out []bucket
	for _, b := range h.h.Distribution() {
		if b.Count > 0 {
			out = append(out, bucket{Lo: b.From, Hi: b.To, Count: b.Count})
		}
	}
	return out
}
