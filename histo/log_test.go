package histo

import (
	"bytes"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

func TestLogWriterRoundTrip(t *testing.T) {
	start := time.Date(2026, 12, 1, 3, 0, 0, 250e6, time.UTC)
	var buf bytes.Buffer
	lw, err := NewLogWriter(&buf, start)
	if err != nil {
		t.Fatal(err)
	}
	type line struct {
		tag      string
		from, to time.Duration // after the whole second of start
		values   []int64
	}
	lines := []line{
		{"stream.ttft", 0, time.Second, []int64{300_000, 420_000, 1_200_000}},
		{"stream.gap", 0, time.Second, []int64{20_000, 40_000}},
		{"stream.ttft", time.Second, 2 * time.Second, []int64{350_000}},
	}
	base := start.Truncate(time.Second)
	var written []*Histogram
	for _, l := range lines {
		h := New()
		for _, v := range l.values {
			h.RecordValue(v)
		}
		written = append(written, h)
		if err := lw.WriteInterval(l.tag, base.Add(l.from), base.Add(l.to), h); err != nil {
			t.Fatal(err)
		}
	}
	text := buf.String()
	for _, want := range []string{"#[Histogram log format version 1.3]", "#[StartTime: ", "\"StartTimestamp\"", "Tag=stream.ttft,1.000000,1.000000,0.350207,HISTFAAA"} {
		if !strings.Contains(text, want) {
			t.Errorf("log lacks %q:\n%s", want, text)
		}
	}
	r := hdr.NewHistogramLogReader(strings.NewReader(text))
	for i, l := range lines {
		got, err := r.NextIntervalHistogram()
		if err != nil || got == nil {
			t.Fatalf("interval %d: %v, %v", i, got, err)
		}
		if got.Tag() != l.tag {
			t.Errorf("interval %d tag %q, want %q", i, got.Tag(), l.tag)
		}
		if want := base.Add(l.from).UnixMilli(); got.StartTimeMs() != want {
			t.Errorf("interval %d starts at %d ms, want %d", i, got.StartTimeMs(), want)
		}
		if want := base.Add(l.to).UnixMilli(); got.EndTimeMs() != want {
			t.Errorf("interval %d ends at %d ms, want %d", i, got.EndTimeMs(), want)
		}
		if !(&Histogram{h: got}).Equal(written[i]) {
			t.Errorf("interval %d histogram differs after the round trip", i)
		}
	}
	if h, err := r.NextIntervalHistogram(); h != nil || err != nil {
		t.Errorf("extra interval %v, %v", h, err)
	}
	if written[0].h.Tag() != "" {
		t.Error("WriteInterval left its tag on the histogram")
	}
}

func TestLogWriterSetAndBadTags(t *testing.T) {
	var buf bytes.Buffer
	start := time.Unix(1_800_000_000, 0)
	lw, err := NewLogWriter(&buf, start)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSet()
	s.RecordValue("total", 5_000_000)
	s.RecordValue("ttft", 400_000)
	s.Get("gap") // empty: skipped
	if err := lw.WriteSet("batch", start, start.Add(time.Second), s); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	if strings.Contains(text, "batch.gap") || strings.Index(text, "Tag=batch.total") > strings.Index(text, "Tag=batch.ttft") ||
		!strings.Contains(text, "Tag=batch.ttft") {
		t.Errorf("set lines wrong:\n%s", text)
	}
	for _, tag := range []string{"", "a b", "a,b", "a\nb"} {
		if err := lw.WriteInterval(tag, start, start, New()); err == nil {
			t.Errorf("tag %q accepted", tag)
		}
	}
}

func TestLogWriterReportsWriteErrors(t *testing.T) {
	if _, err := NewLogWriter(failWriter{}, time.Now()); err == nil {
		t.Error("header write error dropped")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, bytes.ErrTooLarge }
