package histo

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

var testPercentiles = []float64{0, 1, 10, 50, 90, 95, 99, 99.9, 99.99, 100}

// lognormalUS draws a lognormal duration in µs with the given median and
// multiplicative spread.
func lognormalUS(r *rand.Rand, median, sigma float64) int64 {
	return int64(median * math.Exp(sigma*r.NormFloat64()))
}

func TestMergeOfShardsEqualsUnsplit(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	whole := New()
	const shards = 7
	parts := make([]*Histogram, shards)
	for i := range parts {
		parts[i] = New()
	}
	for i := 0; i < 50_000; i++ {
		v := lognormalUS(r, 40_000, 0.6)
		if i%97 == 0 {
			v = lognormalUS(r, 3_000_000, 0.4) // a second, slower population
		}
		whole.RecordValue(v)
		parts[r.IntN(shards)].RecordValue(v)
	}
	merged := New()
	for _, p := range parts {
		merged.Merge(p)
	}
	if !merged.Equal(whole) {
		t.Fatal("merged shards differ from the unsplit histogram")
	}
	for _, p := range testPercentiles {
		if got, want := merged.Quantile(p), whole.Quantile(p); got != want {
			t.Errorf("p%v: merged %d, unsplit %d", p, got, want)
		}
	}
	if merged.Count() != whole.Count() || merged.Mean() != whole.Mean() ||
		merged.Min() != whole.Min() || merged.Max() != whole.Max() {
		t.Errorf("summary differs: merged n=%d mean=%v min=%d max=%d, unsplit n=%d mean=%v min=%d max=%d",
			merged.Count(), merged.Mean(), merged.Min(), merged.Max(),
			whole.Count(), whole.Mean(), whole.Min(), whole.Max())
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	h := New()
	for i := 0; i < 10_000; i++ {
		h.RecordValue(lognormalUS(r, 120_000, 1.2))
	}
	h.RecordValue(0)
	h.RecordValue(MaxValue)
	s, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s, "HISTFAAA") {
		t.Errorf("encoding starts %q, want the V2 compressed HISTFAAA form", s[:min(len(s), 12)])
	}
	got, err := Decode(s)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(h) {
		t.Fatal("decoded histogram differs from the encoded one")
	}
	for _, p := range testPercentiles {
		if got.Quantile(p) != h.Quantile(p) {
			t.Errorf("p%v: decoded %d, original %d", p, got.Quantile(p), h.Quantile(p))
		}
	}
	// The empty histogram round-trips too (a metric nothing reached).
	s, err = New().Encode()
	if err != nil {
		t.Fatal(err)
	}
	e, err := Decode(s)
	if err != nil || e.Count() != 0 {
		t.Fatalf("empty round trip: count %v, err %v", e, err)
	}
}

func TestDecodeForeignGeometry(t *testing.T) {
	// A histogram written by another tool: nanoseconds-like range, 2 digits.
	f := hdr.New(1, 1_000_000, 2)
	for _, v := range []int64{100, 5000, 5000, 999_999} {
		if err := f.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	b, err := f.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Decode(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if h.Count() != 4 {
		t.Errorf("count %d, want 4", h.Count())
	}
	if got := h.Quantile(50); got < 4950 || got > 5050 {
		t.Errorf("p50 %d, want about 5000", got)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, s := range []string{"", "not base64!", "SGVsbG8gd29ybGQ="} {
		if _, err := Decode(s); err == nil {
			t.Errorf("Decode(%q) succeeded, want an error", s)
		}
	}
}

func TestClamping(t *testing.T) {
	h := New()
	h.Record(48 * time.Hour) // above 24 h
	h.RecordValue(-5)        // negative
	h.Record(time.Second)
	if h.Clamped() != 2 {
		t.Errorf("clamped %d, want 2", h.Clamped())
	}
	if h.Count() != 3 {
		t.Errorf("count %d, want 3", h.Count())
	}
	if got := h.Max(); got < MaxValue || got > MaxValue+MaxValue/1000 {
		t.Errorf("max %d, want MaxValue %d (within its bucket)", got, MaxValue)
	}
	if h.Min() != 0 {
		t.Errorf("min %d, want 0 (the clamped negative)", h.Min())
	}
	o := New()
	o.Record(25 * time.Hour)
	h.Merge(o)
	if h.Clamped() != 3 {
		t.Errorf("clamped after merge %d, want 3", h.Clamped())
	}
	h.Reset()
	if h.Clamped() != 0 || h.Count() != 0 {
		t.Errorf("after reset: clamped %d count %d", h.Clamped(), h.Count())
	}
}

func TestRecordMicroseconds(t *testing.T) {
	h := New()
	h.Record(1500 * time.Microsecond)
	if h.Quantile(50) != 1500 {
		t.Errorf("1.5 ms recorded as %d, want 1500 µs", h.Quantile(50))
	}
	if h.QuantileDuration(50) != 1500*time.Microsecond {
		t.Errorf("QuantileDuration %v", h.QuantileDuration(50))
	}
}

func TestCountAbove(t *testing.T) {
	h := New()
	// 40,000 µs: values 32,768..65,535 sit in buckets 32 µs wide, and
	// 40,000 = 1250*32 starts a bucket [40,000, 40,031].
	h.RecordValues(40_000, 10)
	h.RecordValues(40_031, 5) // same bucket as 40,000: equivalent
	h.RecordValues(40_032, 3) // next bucket
	h.RecordValues(2_000_000, 2)
	if got := h.HighestEquivalent(40_000); got != 40_031 {
		t.Fatalf("HighestEquivalent(40000) = %d, want 40031", got)
	}
	cases := []struct {
		v    int64
		want int64
		why  string
	}{
		{39_999, 20, "below every value"},
		{40_000, 5, "values equivalent to 40,000 count as 40,000, not above it"},
		{40_031, 5, "the bucket boundary: exact"},
		{40_032, 2, "at the next bucket's first value"},
		{1_999_871, 2, "just below the slow pair's bucket [1,999,872, 2,000,895]"},
		{1_999_999, 0, "equivalent to 2,000,000 (buckets here are 1,024 µs wide)"},
		{2_000_000, 0, "at the slowest value"},
		{MaxValue, 0, "at the top"},
	}
	for _, c := range cases {
		if got := h.CountAbove(c.v); got != c.want {
			t.Errorf("CountAbove(%d) = %d, want %d (%s)", c.v, got, c.want, c.why)
		}
	}
	if New().CountAbove(0) != 0 {
		t.Error("empty histogram has values above 0")
	}
}

func TestCloneIsIndependent(t *testing.T) {
	h := New()
	h.RecordValue(10)
	c := h.Clone()
	c.RecordValue(20)
	if h.Count() != 1 || c.Count() != 2 {
		t.Errorf("counts after clone: original %d, clone %d", h.Count(), c.Count())
	}
}

func TestBars(t *testing.T) {
	h := New()
	h.RecordValues(1000, 5)     // 1 ms
	h.RecordValues(10_000, 7)   // 10 ms
	h.RecordValues(100_000, 11) // 100 ms
	bars := h.Bars(4)
	if len(bars) != 4 {
		t.Fatalf("%d bars, want 4: %+v", len(bars), bars)
	}
	var sum int64
	for i, b := range bars {
		sum += b.Count
		if i > 0 && b.Lo != bars[i-1].Hi+1 {
			t.Errorf("bar %d starts at %d, previous ended at %d", i, b.Lo, bars[i-1].Hi)
		}
	}
	if sum != h.Count() {
		t.Errorf("bars hold %d values, histogram %d", sum, h.Count())
	}
	if bars[0].Lo != 1000 || bars[3].Hi != h.Max() {
		t.Errorf("bars span [%d, %d], want [1000, %d]", bars[0].Lo, bars[3].Hi, h.Max())
	}
	// Log scale: 1 ms .. 100 ms in 4 bars puts 10 ms in the third bar
	// (edges at about 3.2, 10, 31.6 ms), and 1 ms alone in the first.
	if bars[0].Count != 5 || bars[3].Count != 11 || bars[1].Count+bars[2].Count != 7 {
		t.Errorf("counts %+v", bars)
	}
	if New().Bars(10) != nil {
		t.Error("empty histogram has bars")
	}
	one := New()
	one.RecordValue(0)
	if b := one.Bars(10); len(b) != 1 || b[0].Count != 1 {
		t.Errorf("single zero value: %+v", b)
	}
}

func TestHighestEquivalentMatchesTheLibrary(t *testing.T) {
	lib := hdr.New(LowestValue, MaxValue, SignificantDigits)
	h := New()
	for v := int64(0); v <= MaxValue; v = v*21/20 + 1 {
		for _, x := range []int64{v, v + 1, v - 1} {
			if x < 0 || x > MaxValue {
				continue
			}
			top := h.HighestEquivalent(x)
			// top is the last value of x's bucket: equivalent to x, and the
			// next value starts another bucket.
			if !lib.ValuesAreEquivalent(x, top) || lib.ValuesAreEquivalent(top, top+1) {
				t.Fatalf("HighestEquivalent(%d) = %d is not the top of its library bucket", x, top)
			}
		}
	}
}
