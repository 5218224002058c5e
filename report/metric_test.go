package report

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/histo"
)

func TestMetricUnit(t *testing.T) {
	cases := map[string]string{
		"ttft": "ms", "gap": "ms", "max_byte_gap": "ms", "item": "ms", "connect": "ms",
		"scheduler_lag": "ms", "output_tokens": "tokens", "tps": "tokens/s",
		"attempts": "attempts", "nonsense": "",
	}
	for name, want := range cases {
		if got := MetricUnit(name); got != want {
			t.Errorf("MetricUnit(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestSummarizeDurationInMilliseconds(t *testing.T) {
	h := histo.New()
	// 1..1000 ms: p50 is 500 ms, p99 990 ms, max 1 s, all exactly
	// representable at 3 significant digits.
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Millisecond)
	}
	m, err := Summarize("ttft", h)
	if err != nil {
		t.Fatal(err)
	}
	if m.Unit != "ms" || m.Count != 1000 {
		t.Fatalf("unit %q count %d, want ms 1000", m.Unit, m.Count)
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"min", m.Min, 1}, {"p50", m.P50, 500}, {"p90", m.P90, 900}, {"p99", m.P99, 990},
		{"p999", m.P999, 999}, {"max", m.Max, 1000},
	}
	for _, c := range checks {
		// Within 0.1%: the histogram's resolution.
		if c.got < c.want || c.got > c.want*1.001 {
			t.Errorf("%s = %v ms, want %v ms (within 0.1%%)", c.name, c.got, c.want)
		}
	}
	if m.Mean < 500 || m.Mean > 501.5 {
		t.Errorf("mean = %v ms, want about 500.5", m.Mean)
	}
	back, err := m.Histogram()
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equal(h) {
		t.Error("the encoded histogram does not decode to the recorded one")
	}
}

func TestSummarizePlainCounts(t *testing.T) {
	h := histo.New()
	for _, v := range []int64{100, 200, 300} {
		h.RecordValue(v)
	}
	m, err := Summarize("output_tokens", h)
	if err != nil {
		t.Fatal(err)
	}
	if m.Unit != "tokens" || m.Min != 100 || m.Max != 300 || m.P50 != 200 || m.Mean != 200 {
		t.Errorf("output_tokens summary = %+v, want plain 100/200/300 tokens", m)
	}
}

func TestSummarizeEmpty(t *testing.T) {
	m, err := Summarize("gap", nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Count != 0 || m.HDR == "" {
		t.Errorf("empty summary: count %d hdr %q; want 0 and an encoded empty histogram", m.Count, m.HDR)
	}
}

func TestMetricHistogramWithoutHDR(t *testing.T) {
	if _, err := (&Metric{}).Histogram(); err == nil {
		t.Error("decoding an empty hdr succeeded")
	}
}

// Save and Load keep real histograms bit for bit.
func TestSaveLoadKeepsHistograms(t *testing.T) {
	h := histo.New()
	for i := range 5000 {
		h.Record(time.Duration(i*i%7919) * time.Microsecond * 37)
	}
	m, err := Summarize("gap", h)
	if err != nil {
		t.Fatal(err)
	}
	r := sampleResults()
	r.Paths[PathStream].Metrics["gap"] = m
	path := filepath.Join(t.TempDir(), "r.json")
	if err := SaveFile(path, r); err != nil {
		t.Fatal(err)
	}
	got, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gm := got.Paths[PathStream].Metrics["gap"]
	if *gm != *m {
		t.Errorf("gap summary changed: %+v, want %+v", gm, m)
	}
	back, err := gm.Histogram()
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equal(h) || back.Quantile(99.9) != h.Quantile(99.9) {
		t.Error("histogram changed across SaveFile/LoadFile")
	}
}
