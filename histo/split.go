package histo

import "math"

// Population summarizes one of the two populations SplitLog finds.
type Population struct {
	// Count is how many values the population holds; Weight is that as a
	// fraction of all values.
	Count  int64
	Weight float64
	// Min, P50, P99 and Max are the population's own percentiles.
	Min, P50, P99, Max int64
}

// Split is where SplitLog divides a distribution into two populations.
type Split struct {
	// At is the valley: values <= At are the lower population, values
	// above it the upper. It is the top of a histogram bucket, so
	// CountAbove(At) is exactly Upper.Count.
	At int64
	// ValleyRatio is the density at the valley over the lower of the two
	// populations' peak densities (0 for an empty valley; SplitLog accepts
	// at most MaxValleyRatio).
	ValleyRatio float64
	// Lower and Upper are the two populations.
	Lower, Upper Population
}

// Tuning of SplitLog, exported so that reports can state the criteria.
const (
	// BinsPerDecade is the resolution of the log-scale density SplitLog
	// reads: 10 bins per factor of ten.
	BinsPerDecade = 10
	// MaxValleyRatio is the shallowest valley, as a fraction of the
	// smaller peak, that still counts as two populations. A single
	// lognormal's best candidate sits above 1 (its tail falls
	// monotonically); synthetic single lognormals of 300 to 200,000 values
	// never went below 1.07.
	MaxValleyRatio = 0.5
	// MinPeakSeparation is how far apart, in decades, the two populations'
	// peaks must be (0.5 decades is a factor of about 3.2).
	MinPeakSeparation = 0.5
	// MinPopulationWeight and MinPopulationCount are the least either
	// population may hold, as a fraction of all values and as a count.
	MinPopulationWeight = 0.001
	MinPopulationCount  = 5
	// SplitFloor is the smallest value (µs) SplitLog looks at. Content
	// deltas that arrive in one read, or in reads back to back, are 0 to a
	// few µs apart: they say how the stream was batched on the wire, not
	// how far apart the tokens were made, and left in they form a spurious
	// "population" at zero beneath the real token spacing.
	SplitFloor = 100
)

// SplitLog reports whether h holds two populations on a log scale — such
// as token spacing (tens of ms) and structural pauses (seconds) among
// content gaps — and where the valley between them lies. Values below
// SplitFloor are left out.
//
// Method: the values are binned by log10 (BinsPerDecade bins per decade,
// smoothed with a 1-2-1 kernel), and every bin is tried as the valley. A
// candidate is valid when each side holds at least MinPopulationWeight of
// the values and MinPopulationCount values, and the highest bins on the
// two sides are at least MinPeakSeparation decades apart. Its depth is the
// valley bin's density over the lower of the two side peaks. The deepest
// valid candidate wins; among equally deep ones (a run of empty bins) the
// one with the largest between-class variance of log10 values (Otsu's
// criterion) wins, and within a run of ties the middle one. The split is
// accepted only when the depth is at most MaxValleyRatio: a single
// lognormal has no valley, however long its tail, so it is not split.
func SplitLog(h *Histogram) (Split, bool) {
	var bs []bucket
	var total int64
	for _, b := range h.buckets() {
		if b.Lo >= SplitFloor {
			bs = append(bs, b)
			total += b.Count
		}
	}
	if len(bs) < 2 {
		return Split{}, false
	}
	// Bin by the log of each bucket's midpoint; 0 and 1 share the first bin.
	logOf := func(b bucket) float64 { return math.Log10(math.Max(1, float64(b.Lo+b.Hi)/2)) }
	first := math.Floor(logOf(bs[0]) * BinsPerDecade)
	n := int(math.Floor(logOf(bs[len(bs)-1])*BinsPerDecade)-first) + 1
	if n < 3 {
		return Split{}, false
	}
	raw := make([]float64, n)
	sum := make([]float64, n) // sum of log10 values, for Otsu
	for _, b := range bs {
		x := logOf(b)
		i := int(math.Floor(x*BinsPerDecade) - first)
		raw[i] += float64(b.Count)
		sum[i] += float64(b.Count) * x
	}
	dens := make([]float64, n)
	for i := range raw {
		l, r := 0.0, 0.0
		if i > 0 {
			l = raw[i-1]
		}
		if i < n-1 {
			r = raw[i+1]
		}
		dens[i] = (l + 2*raw[i] + r) / 4
	}
	// Prefix sums of counts and log sums, and running peaks from each end.
	cw := make([]float64, n+1)
	cs := make([]float64, n+1)
	for i := range raw {
		cw[i+1] = cw[i] + raw[i]
		cs[i+1] = cs[i] + sum[i]
	}
	peakL := make([]int, n) // index of the highest bin in [0, i]
	peakR := make([]int, n) // index of the highest bin in [i, n-1]
	for i := range n {
		peakL[i] = i
		if i > 0 && dens[peakL[i-1]] >= dens[i] {
			peakL[i] = peakL[i-1]
		}
	}
	for i := n - 1; i >= 0; i-- {
		peakR[i] = i
		if i < n-1 && dens[peakR[i+1]] > dens[i] {
			peakR[i] = peakR[i+1]
		}
	}
	mean := cs[n] / cw[n]
	minCount := math.Max(MinPopulationCount, MinPopulationWeight*float64(total))

	best, bestRatio, bestVar := -1, math.Inf(1), 0.0
	var ties []int
	for k := 1; k < n-1; k++ {
		// The valley bin k goes to the lower class for the weights.
		wl, wu := cw[k+1], cw[n]-cw[k+1]
		if wl < minCount || wu < minCount {
			continue
		}
		pl, pu := peakL[k-1], peakR[k+1]
		if float64(pu-pl)/BinsPerDecade < MinPeakSeparation {
			continue
		}
		ratio := dens[k] / math.Min(dens[pl], dens[pu])
		ml, mu := cs[k+1]/wl, (cs[n]-cs[k+1])/wu
		between := (wl*(ml-mean)*(ml-mean) + wu*(mu-mean)*(mu-mean)) / cw[n]
		const eps = 1e-12
		switch {
		case ratio < bestRatio-eps || (math.Abs(ratio-bestRatio) <= eps && between > bestVar+eps):
			best, bestRatio, bestVar = k, ratio, between
			ties = ties[:0]
			ties = append(ties, k)
		case math.Abs(ratio-bestRatio) <= eps && math.Abs(between-bestVar) <= eps:
			ties = append(ties, k)
		}
	}
	if best < 0 || bestRatio > MaxValleyRatio {
		return Split{}, false
	}
	best = ties[len(ties)/2]
	// The valley's value: the geometric centre of bin best, moved to the top
	// of its histogram bucket so that the classes fall on bucket bounds.
	at := h.HighestEquivalent(int64(math.Pow(10, (first+float64(best)+0.5)/BinsPerDecade)))
	lower, upper := New(), New()
	for _, b := range bs {
		if b.Lo <= at {
			lower.RecordValues(b.Lo, b.Count)
		} else {
			upper.RecordValues(b.Lo, b.Count)
		}
	}
	if lower.Count() == 0 || upper.Count() == 0 {
		return Split{}, false
	}
	return Split{
		At:          at,
		ValleyRatio: bestRatio,
		Lower:       population(lower, total),
		Upper:       population(upper, total),
	}, true
}

// population summarizes p, part of a distribution of total values.
func population(p *Histogram, total int64) Population {
	return Population{
		Count:  p.Count(),
		Weight: float64(p.Count()) / float64(total),
		Min:    p.Min(),
		P50:    p.Quantile(50),
		P99:    p.Quantile(99),
		Max:    p.Max(),
	}
}
