package render

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/histo"

	"github.com/tollgate-dev/tollgate/report"
)

// textBars is how many log-scale bars a text histogram has: enough to
// show a valley between two populations, few enough for a terminal.
const textBars = 16

// deadlineFor is the recommended deadline drawn on a metric's histogram:
// the gap deadline on content gaps, the idle timeout on byte gaps (which
// pings keep short, so an idle timeout cannot see a stalled generation).
func deadlineFor(metric string, rec *report.Recommendation) (string, time.Duration) {
	if rec == nil {
		return "", 0
	}
	switch metric {
	case histo.MetricGap, histo.MetricMaxGap:
		return "gap deadline", time.Duration(rec.Stream.Gap)
	case histo.MetricByteGap, histo.MetricMaxByteGap:
		return "idle timeout", time.Duration(rec.Timeouts.Idle)
	}
	return "", 0
}

// textHistogram draws a metric's distribution as log-scale text bars, the
// recommended deadline marked on the bar that holds it. It returns false
// when the metric has no usable histogram.
func textHistogram(path, name string, m *report.Metric, rec *report.Recommendation, width int) (pre, bool) {
	if m == nil || m.Count == 0 {
		return pre{}, false
	}
	h, err := m.Histogram()
	if err != nil || h.Count() == 0 {
		return pre{}, false
	}
	bars := h.Bars(textBars)
	var peak int64
	for _, b := range bars {
		peak = max(peak, b.Count)
	}
	label, deadline := deadlineFor(name, rec)
	deadlineUS := deadline.Microseconds()
	barWidth := max(10, width-64)
	split, hasSplit := histo.SplitLog(h)
	p := pre{title: fmt.Sprintf("%s %s, %d values (log-scale bins):", path, name, h.Count())}
	for _, b := range bars {
		line := fmt.Sprintf("%8s – %-8s │%-*s│ %7d %6s", fmtMicros(b.Lo), fmtMicros(b.Hi),
			barWidth, bar(b.Count, peak, barWidth), b.Count, fmtPct(b.Count, h.Count()))
		if hasSplit && split.At >= b.Lo && split.At <= b.Hi {
			line += "  ◀ split"
		}
		if deadlineUS > 0 && deadlineUS >= b.Lo && deadlineUS <= b.Hi {
			line += fmt.Sprintf("  ◀ %s %s", label, deadline)
		}
		p.lines = append(p.lines, line)
	}
	if hasSplit {
		p.lines = append(p.lines, wrapWords(fmt.Sprintf("two populations split at %s: %s; %s.",
			fmtMicros(split.At), populationText(split.Lower), populationText(split.Upper)), width-2)...)
	}
	if deadlineUS > 0 && len(bars) > 0 {
		switch {
		case deadlineUS > bars[len(bars)-1].Hi:
			p.lines = append(p.lines, wrapWords(fmt.Sprintf("%s %s is above every observed value (max %s): it would have ended none of these calls.",
				label, deadline, fmtMicros(h.Max())), width-2)...)
		case deadlineUS < bars[0].Lo:
			p.lines = append(p.lines, fmt.Sprintf("%s %s is below every observed value (min %s).", label, deadline, fmtMicros(h.Min())))
		}
	}
	return p, true
}

// populationText summarises one population of a split.
func populationText(p histo.Population) string {
	return fmt.Sprintf("%d around %s (p99 %s, max %s)", p.Count, fmtMicros(p.P50), fmtMicros(p.P99), fmtMicros(p.Max))
}

// bar draws count of peak as a bar of at most width cells in eighths of a
// cell; a non-zero count always shows, however small beside the peak.
func bar(count, peak int64, width int) string {
	if count <= 0 || peak <= 0 {
		return ""
	}
	eighths := max(int(count*int64(width)*8/peak), 1)
	const parts = " ▏▎▍▌▋▊▉"
	s := strings.Repeat("█", eighths/8)
	if r := eighths % 8; r > 0 {
		s += string([]rune(parts)[r])
	}
	return s
}

// fmtMicros formats a value in µs with its unit: 850µs, 12.5ms, 3.20s.
func fmtMicros(us int64) string {
	switch {
	case us < 1000:
		return strconv.FormatInt(us, 10) + "µs"
	case us < 1_000_000:
		return fmtMS(float64(us)/1000) + "ms"
	}
	return strconv.FormatFloat(float64(us)/1e6, 'f', 2, 64) + "s"
}
