package report

import (
	"errors"
	"fmt"
	"slices"

	"github.com/tollgate-dev/tollgate/histo"
)

// Units of Metric.Unit.
const (
	UnitMs       = "ms"
	UnitTokens   = "tokens"
	UnitTPS      = "tokens/s"
	UnitAttempts = "attempts"
)

// MetricUnit is the unit a metric's summary is written in: "ms" for
// durations (recorded in µs), "tokens" for output_tokens, "tokens/s" for
// tps, "attempts" for attempts, and "" for a name it does not know.
func MetricUnit(name string) string {
	switch name {
	case histo.MetricOutputTokens:
		return UnitTokens
	case histo.MetricTPS:
		return UnitTPS
	case histo.MetricAttempts:
		return UnitAttempts
	}
	if IsDurationMetric(name) {
		return UnitMs
	}
	return ""
}

// IsDurationMetric reports whether name is a duration, recorded in µs and
// summarized in ms.
func IsDurationMetric(name string) bool {
	switch name {
	case histo.MetricConnect, histo.MetricHead, histo.MetricFirstByte, histo.MetricTTFT, histo.MetricGap, histo.MetricMaxGap,
		histo.MetricByteGap, histo.MetricMaxByteGap, histo.MetricTotal, histo.MetricItem, histo.MetricSchedulerLag:
		return true
	}
	return false
}

// IsKnownMetric reports whether name is one of histo.Metrics.
func IsKnownMetric(name string) bool { return slices.Contains(histo.Metrics, name) }

// Summarize turns the histogram of metric name into its results-file form:
// count, min, mean, p50 ... p999, max and the unit, in milliseconds for
// durations (the histogram holds µs) and as recorded for the others (tps is
// recorded as whole tokens per second), and the histogram itself, encoded.
// It is the one place where a histogram becomes a summary: the probe and
// merge both call it, so a merged file reads like one run's file.
func Summarize(name string, h *histo.Histogram) (*Metric, error) {
	if h == nil {
		h = histo.New()
	}
	enc, err := h.Encode()
	if err != nil {
		return nil, fmt.Errorf("summarize %s: %w", name, err)
	}
	scale := 1.0
	if IsDurationMetric(name) {
		scale = 1000 // µs -> ms
	}
	q := func(p float64) float64 { return float64(h.Quantile(p)) / scale }
	m := &Metric{
		Count: h.Count(),
		Min:   float64(h.Min()) / scale,
		Mean:  h.Mean() / scale,
		P50:   q(50),
		P90:   q(90),
		P95:   q(95),
		P99:   q(99),
		P999:  q(99.9),
		Max:   float64(h.Max()) / scale,
		Unit:  MetricUnit(name),
		HDR:   enc,
	}
	return m, nil
}

// Histogram decodes m's HDR field. The histogram holds µs for durations.
func (m *Metric) Histogram() (*histo.Histogram, error) {
	if m.HDR == "" {
		return nil, errors.New("no histogram (hdr is empty)")
	}
	h, err := histo.Decode(m.HDR)
	if err != nil {
		return nil, err
	}
	return h, nil
}
