package render

import (
	"fmt"
	"math"
	"strconv"
)

// fmtMS formats milliseconds with about three significant digits: 0.042,
// 4.21, 42.1, 421, 4210.
func fmtMS(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a < 1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	case a < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// fmtNum formats a plain number: integers as such, others with one decimal.
func fmtNum(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// fmtRate formats a per-second rate with one decimal below 1000.
func fmtRate(v float64) string {
	if v >= 1000 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// fmtSeconds formats a wall-clock length in seconds.
func fmtSeconds(s float64) string { return strconv.FormatFloat(s, 'f', 1, 64) + "s" }

// fmtPct formats n of total as a percentage.
func fmtPct(n, total int64) string {
	if total <= 0 {
		return ""
	}
	return fmtRatio(float64(n) / float64(total))
}

// fmtRatio formats a fraction (0..1) as a percentage with two significant
// digits for small values: <0.01%, 0.25%, 1.2%, 12%.
func fmtRatio(f float64) string {
	p := 100 * f
	switch {
	case p == 0:
		return "0%"
	case p < 0.01:
		return "<0.01%"
	case p < 1:
		return fmt.Sprintf("%.2f%%", p)
	case p < 10:
		return fmt.Sprintf("%.1f%%", p)
	}
	return fmt.Sprintf("%.0f%%", p)
}
