package histo

import (
	"math"
	"math/rand/v2"
	"testing"
)

// lognormalP50P99 draws from the lognormal with the given p50 and p99 (µs).
func lognormalP50P99(r *rand.Rand, p50, p99 float64) int64 {
	sigma := math.Log(p99/p50) / 2.3263478740408408 // z of 0.99
	return int64(p50 * math.Exp(sigma*r.NormFloat64()))
}

func TestSplitLogTwoPopulations(t *testing.T) {
	// The article's path: token gaps at 40 ms p50 / 180 ms p99, plus
	// structural pauses (thinking, tool use) seconds wide.
	cases := []struct {
		name        string
		seed        uint64
		tokens      int
		pauses      int
		pauseP50    float64
		pauseP99    float64
		minAt       int64
		maxAt       int64
		wantUpperN  int
		upperP50Lo  int64
		upperP50Hi  int64
		lowerP99Lo  int64
		lowerP99Hi  int64
		description string
	}{
		{"article", 1, 200_000, 2_000, 3e6, 9e6, 250_000, 1_200_000, 2_000, 2_700_000, 3_300_000, 165_000, 200_000, "1% pauses around 3 s"},
		{"rare pauses", 2, 300_000, 400, 2e6, 8e6, 250_000, 1_000_000, 400, 1_700_000, 2_300_000, 165_000, 200_000, "0.13% pauses"},
		{"heavy pauses", 3, 50_000, 10_000, 5e6, 20e6, 250_000, 2_500_000, 10_000, 4_500_000, 5_500_000, 165_000, 200_000, "a sixth of gaps are pauses"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(c.seed, 99))
			h := New()
			for range c.tokens {
				h.RecordValue(lognormalP50P99(r, 40_000, 180_000))
			}
			for range c.pauses {
				h.RecordValue(lognormalP50P99(r, c.pauseP50, c.pauseP99))
			}
			s, ok := SplitLog(h)
			if !ok {
				t.Fatalf("no split found (%s)", c.description)
			}
			if s.At < c.minAt || s.At > c.maxAt {
				t.Errorf("split at %d µs, want between %d and %d", s.At, c.minAt, c.maxAt)
			}
			if h.CountAbove(s.At) != s.Upper.Count || s.Lower.Count+s.Upper.Count != h.Count() {
				t.Errorf("populations %d + %d do not partition %d at %d (above: %d)",
					s.Lower.Count, s.Upper.Count, h.Count(), s.At, h.CountAbove(s.At))
			}
			// The far tail of the token lognormal reaches past a few hundred
			// ms, and the pauses' low tail reaches below a second, so allow
			// up to 5% to land on the other side.
			if d := s.Upper.Count - int64(c.wantUpperN); d < -int64(c.wantUpperN)/20 || d > int64(c.wantUpperN)/20+5 {
				t.Errorf("upper population holds %d, want about %d", s.Upper.Count, c.wantUpperN)
			}
			if s.Upper.P50 < c.upperP50Lo || s.Upper.P50 > c.upperP50Hi {
				t.Errorf("upper p50 %d, want %d..%d", s.Upper.P50, c.upperP50Lo, c.upperP50Hi)
			}
			if s.Lower.P99 < c.lowerP99Lo || s.Lower.P99 > c.lowerP99Hi {
				t.Errorf("lower p99 %d, want %d..%d", s.Lower.P99, c.lowerP99Lo, c.lowerP99Hi)
			}
			if s.Lower.Max > s.At || s.Upper.Min <= s.At {
				t.Errorf("populations overlap the split: lower max %d, upper min %d, at %d", s.Lower.Max, s.Upper.Min, s.At)
			}
			if s.ValleyRatio > MaxValleyRatio {
				t.Errorf("accepted a valley ratio of %v", s.ValleyRatio)
			}
			if w := s.Lower.Weight + s.Upper.Weight; math.Abs(w-1) > 1e-9 {
				t.Errorf("weights sum to %v", w)
			}
		})
	}
}

func TestSplitLogOnePopulation(t *testing.T) {
	cases := []struct {
		name     string
		n        int
		p50, p99 float64
	}{
		{"token gaps alone", 200_000, 40_000, 180_000},
		{"wide lognormal", 100_000, 500_000, 20_000_000},
		{"narrow", 50_000, 2_000_000, 2_400_000},
		{"small sample", 300, 40_000, 180_000},
	}
	for _, c := range cases {
		for seed := uint64(1); seed <= 5; seed++ {
			r := rand.New(rand.NewPCG(seed, 7))
			h := New()
			for range c.n {
				h.RecordValue(lognormalP50P99(r, c.p50, c.p99))
			}
			if s, ok := SplitLog(h); ok {
				t.Errorf("%s seed %d: split a single lognormal at %d (valley %.2f, upper %d values, p50 %d)",
					c.name, seed, s.At, s.ValleyRatio, s.Upper.Count, s.Upper.P50)
			}
		}
	}
}

func TestSplitLogDegenerate(t *testing.T) {
	if _, ok := SplitLog(New()); ok {
		t.Error("split an empty histogram")
	}
	one := New()
	one.RecordValues(40_000, 1000)
	if _, ok := SplitLog(one); ok {
		t.Error("split a single value")
	}
	// Two spikes far apart, but the upper one is two values: too few to be
	// a population (a couple of stalls are not a healthy cluster).
	few := New()
	few.RecordValues(40_000, 10_000)
	few.RecordValues(5_000_000, 2)
	if _, ok := SplitLog(few); ok {
		t.Error("split off two values as a population")
	}
	// Two clean spikes: split, exactly partitioned.
	two := New()
	two.RecordValues(40_000, 1000)
	two.RecordValues(4_000_000, 30)
	s, ok := SplitLog(two)
	if !ok || s.Upper.Count != 30 || s.Lower.Count != 1000 || s.ValleyRatio != 0 {
		t.Errorf("two spikes: %+v, %v", s, ok)
	}
}

// TestSplitLogIgnoresCoalescedDeltas: deltas that arrive in one read are
// 0 µs apart; a large cluster of them must not be taken for the token
// population, which still splits from the pauses where it did before.
func TestSplitLogIgnoresCoalescedDeltas(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	h := New()
	for range 20000 {
		h.RecordValue(lognormalP50P99(r, 40_000, 180_000))
	}
	for range 500 {
		h.RecordValue(lognormalP50P99(r, 3_000_000, 9_000_000))
	}
	h.RecordValues(0, 3000) // coalesced deltas
	h.RecordValues(3, 40)   // reads back to back
	s, ok := SplitLog(h)
	if !ok {
		t.Fatal("no split")
	}
	if s.At < 250_000 || s.At > 1_200_000 {
		t.Errorf("split at %d µs, want between the token gaps and the pauses (250 ms .. 1.2 s)", s.At)
	}
	if s.Lower.P50 < 20_000 {
		t.Errorf("lower population p50 %d µs: the zero cluster was taken for the token spacing", s.Lower.P50)
	}
}
