package histo

import (
	"fmt"
	"io"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// LogWriter writes the standard HdrHistogram interval log (format 1.3, the
// one HistogramLogProcessor and every HdrHistogram library read): a header,
// then one line per interval and tag,
//
//	Tag=stream.ttft,12.000000,1.000000,0.412351,HISTFAAA...
//
// giving the interval's start (seconds since the log's start), its length
// in seconds, its maximum, and the interval's histogram. Values are
// microseconds, so the maximum column (value / 1,000,000, the library's
// fixed ratio) reads in seconds. A LogWriter is not safe for concurrent
// use.
type LogWriter struct {
	lw     *hdr.HistogramLogWriter
	baseMs int64
}

// NewLogWriter writes the log header to w, with start (truncated to the
// second, as the StartTime line holds whole seconds) as the base time
// every interval is relative to.
func NewLogWriter(w io.Writer, start time.Time) (*LogWriter, error) {
	baseMs := start.Unix() * 1000
	l := &LogWriter{lw: hdr.NewHistogramLogWriter(w), baseMs: baseMs}
	l.lw.SetBaseTime(baseMs)
	for _, write := range []func() error{
		func() error {
			return l.lw.OutputComment("[Logged with tollgate; values in microseconds, Interval_Max in seconds]")
		},
		l.lw.OutputLogFormatVersion,
		func() error { return l.lw.OutputStartTime(baseMs) },
		func() error { return l.lw.OutputBaseTime(baseMs) },
		l.lw.OutputLegend,
	} {
		if err := write(); err != nil {
			return nil, fmt.Errorf("write histogram log header: %w", err)
		}
	}
	return l, nil
}

// WriteInterval writes h as the interval [from, to) under tag (no commas,
// spaces or line breaks; tollgate uses "path.metric", e.g. "stream.ttft").
func (l *LogWriter) WriteInterval(tag string, from, to time.Time, h *Histogram) error {
	if tag == "" || strings.ContainsAny(tag, ", \r\n") {
		return fmt.Errorf("histogram log tag %q: must be non-empty without commas, spaces or line breaks", tag)
	}
	// The library takes the interval and tag from the histogram's metadata;
	// set them for this line and put the old ones back.
	inner := h.h
	oldTag, oldStart, oldEnd := inner.Tag(), inner.StartTimeMs(), inner.EndTimeMs()
	inner.SetTag(tag)
	inner.SetStartTimeMs(from.UnixMilli())
	inner.SetEndTimeMs(to.UnixMilli())
	err := l.lw.OutputIntervalHistogram(inner)
	inner.SetTag(oldTag)
	inner.SetStartTimeMs(oldStart)
	inner.SetEndTimeMs(oldEnd)
	if err != nil {
		return fmt.Errorf("write histogram log interval %s: %w", tag, err)
	}
	return nil
}

// WriteSet writes every histogram of s for the interval [from, to), tagged
// prefix.name in name order, skipping empty histograms.
func (l *LogWriter) WriteSet(prefix string, from, to time.Time, s *Set) error {
	for _, name := range s.Names() {
		h := s.Lookup(name)
		if h.Count() == 0 {
			continue
		}
		if err := l.WriteInterval(prefix+"."+name, from, to, h); err != nil {
			return err
		}
	}
	return nil
}
