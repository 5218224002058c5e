package histo

import "math"

// Bar is one bar of a log-scale histogram: Count values in [Lo, Hi].
type Bar struct {
	Lo, Hi, Count int64
}

// Bars splits [Min, Max] into n bars of equal width on a log scale and
// counts the values in each (for text histograms and plots). Each recorded
// bucket goes, whole, to the bar holding its lowest value, so the counts
// sum to Count. Bars are contiguous: each Lo is the previous Hi + 1. Fewer
// than n bars come back when the range is too narrow to split into n
// integer ranges; none when h is empty or n < 1.
func (h *Histogram) Bars(n int) []Bar {
	bs := h.buckets()
	if len(bs) == 0 || n < 1 {
		return nil
	}
	lo, hi := bs[0].Lo, bs[len(bs)-1].Hi
	// Edges are computed from max(lo, 1) so a minimum of 0 still has a log.
	base := math.Max(float64(lo), 1)
	ratio := float64(hi) / base
	bars := make([]Bar, 0, n)
	start := lo
	for i := 1; i <= n && start <= hi; i++ {
		end := hi
		if i < n {
			end = int64(math.Floor(base * math.Pow(ratio, float64(i)/float64(n))))
		}
		if end < start {
			continue
		}
		bars = append(bars, Bar{Lo: start, Hi: end})
		start = end + 1
	}
	j := 0
	for _, b := range bs {
		for j < len(bars)-1 && b.Lo > bars[j].Hi {
			j++
		}
		bars[j].Count += b.Count
	}
	return bars
}
