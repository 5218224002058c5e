package gate

import (
	"strconv"
	"strings"

	"github.com/tollgate-dev/tollgate/report"
)

// formatValue writes v in unit for a person: durations (ms) as "812ms",
// "2.31s", "1.5m" or "2h" with three significant digits, the resolution of the
// histograms; percentages as "1.5%"; plain numbers with their unit.
func formatValue(v float64, unit string) string {
	switch unit {
	case report.UnitMs:
		switch {
		case v >= 3_600_000:
			return sig(v/3_600_000) + "h"
		case v >= 60_000:
			return sig(v/60_000) + "m"
		case v >= 1000:
			return sig(v/1000) + "s"
		default:
			return sig(v) + "ms"
		}
	case "%":
		return sig(v) + "%"
	case "":
		return sig(v)
	default:
		return sig(v) + " " + unit
	}
}

// sig formats v with three significant digits and no exponent, trailing
// zeros dropped: 2.31, 40.1, 812, 12345.
func sig(v float64) string {
	a := v
	if a < 0 {
		a = -a
	}
	prec := 0
	switch {
	case a == 0 || a >= 100:
		prec = 0
	case a >= 10:
		prec = 1
	case a >= 1:
		prec = 2
	case a >= 0.1:
		prec = 3
	default:
		prec = 4
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
