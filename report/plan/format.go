package plan

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Thousands writes n with comma thousands separators: 50000 -> "50,000".
func Thousands(n int64) string {
	if n < 0 {
		return "-" + Thousands(-n)
	}
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// oneDecimal writes v with at most one decimal, dropping ".0" and adding
// thousands separators to the whole part: 2.777 -> "2.8", 6 -> "6".
func oneDecimal(v float64) string {
	neg := v < 0
	tenths := int64(math.Round(math.Abs(v) * 10))
	s := Thousands(tenths / 10)
	if f := tenths % 10; f != 0 {
		s += "." + strconv.FormatInt(f, 10)
	}
	if neg && tenths != 0 {
		s = "-" + s
	}
	return s
}

// Short writes d in the unit a person would say: "850 ms", "8 s",
// "30 min", "5.5 h".
func Short(d time.Duration) string {
	a := d
	if a < 0 {
		a = -a
	}
	switch {
	case a < time.Second:
		return oneDecimal(float64(d)/float64(time.Millisecond)) + " ms"
	case a < time.Minute:
		return oneDecimal(d.Seconds()) + " s"
	case a < time.Hour:
		return oneDecimal(d.Minutes()) + " min"
	}
	return Hours(d)
}

// Hours writes d in hours with one decimal ("2.8 h"), or as Short when it
// is under six minutes (where 0.1 h says too little).
func Hours(d time.Duration) string {
	if d > -6*time.Minute && d < 6*time.Minute {
		return Short(d)
	}
	return oneDecimal(d.Hours()) + " h"
}

// Seconds writes d in whole seconds with separators ("400,000 s"), with
// one decimal below ten seconds.
func Seconds(d time.Duration) string {
	if d > -10*time.Second && d < 10*time.Second {
		return oneDecimal(d.Seconds()) + " s"
	}
	return Thousands(int64(math.Round(d.Seconds()))) + " s"
}
