package render

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; run go test ./report/render -update and review the diff.\ngot:\n%s", name, got)
	}
}

func TestGoldenTableAndMarkdown(t *testing.T) {
	r := sampleResults(t)
	for _, tc := range []struct{ format, file string }{
		{FormatTable, "report.table.golden"},
		{FormatMarkdown, "report.markdown.golden"},
		// The JSON golden file doubles as a sample results file for the
		// report command's tests and scripts/screenshot.sh.
		{FormatJSON, "sample.results.json"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, r, tc.format, Options{}); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.file, buf.Bytes())
		})
	}
}

func TestTableFitsTheWidth(t *testing.T) {
	r := sampleResults(t)
	for _, width := range []int{DefaultWidth, 80} {
		var buf bytes.Buffer
		if err := Write(&buf, r, FormatTable, Options{Width: width}); err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(buf.String(), "\n") {
			if n := utf8.RuneCountInString(line); n > width {
				t.Errorf("width %d: line %d has %d columns: %q", width, i+1, n, line)
			}
		}
	}
}

func TestHeaderSaysWhatWasMeasured(t *testing.T) {
	r := sampleResults(t)
	r.Run.Simulated, r.Run.Target, r.Run.Interrupted = false, "https://gateway.example/v1", true
	for _, format := range []string{FormatTable, FormatMarkdown} {
		var buf bytes.Buffer
		if err := Write(&buf, r, format, Options{}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if strings.Contains(out, "SIMULATED") {
			t.Errorf("%s: a real target's report claims to be simulated", format)
		}
		if !strings.Contains(out, "https://gateway.example/v1") {
			t.Errorf("%s: the report does not name its target", format)
		}
		if !strings.Contains(out, "INTERRUPTED") {
			t.Errorf("%s: an interrupted run is not marked", format)
		}
	}
}

func TestColorOnlyWhenAsked(t *testing.T) {
	r := sampleResults(t)
	var plain, color bytes.Buffer
	if err := Write(&plain, r, FormatTable, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Write(&color, r, FormatTable, Options{Color: true}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "\x1b[") {
		t.Error("escape codes without Options.Color")
	}
	if !strings.Contains(color.String(), "\x1b[1m") {
		t.Error("no escape codes with Options.Color")
	}
}

func TestWriteRecommendation(t *testing.T) {
	rec := sampleResults(t).Recommendation
	for _, format := range []string{FormatTable, FormatMarkdown} {
		var buf bytes.Buffer
		if err := WriteRecommendation(&buf, rec, format); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, want := range []string{"stream.gap", "10s", "0/400", "0.75%", "batch.head", "3.5x the largest", "timeouts.idle", "pings every 1s"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: recommendation lacks %q:\n%s", format, want, out)
			}
		}
		if strings.Contains(out, "batch.job_deadline") {
			t.Errorf("%s: a setting with no value and no evidence is shown", format)
		}
	}
	if err := WriteRecommendation(io.Discard, rec, FormatJSON); err == nil {
		t.Error("json is not a recommendation format here, yet no error")
	}
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrorsAreReturned(t *testing.T) {
	r := sampleResults(t)
	for _, format := range Formats {
		if err := Write(failingWriter{}, r, format, Options{}); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("%s: write error %v, want one wrapping disk full", format, err)
		}
	}
	if err := WriteRecommendation(failingWriter{}, r.Recommendation, FormatTable); err == nil {
		t.Error("recommendation: write error dropped")
	}
	if err := Write(io.Discard, r, "pdf", Options{}); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestMarkdownEscapesCells(t *testing.T) {
	r := sampleResults(t)
	r.Recommendation.Warnings = []string{"a | b *c*"}
	r.Recommendation.Rationale[0].Basis = "p99 | p999"
	var buf bytes.Buffer
	if err := Write(&buf, r, FormatMarkdown, Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, `p99 \| p999`) || !strings.Contains(out, `a | b \*c\*`) {
		t.Errorf("cells or text not escaped:\n%s", out)
	}
}

func TestTickLabel(t *testing.T) {
	for _, tc := range []struct {
		ms   float64
		want string
	}{
		{0.001, "1µs"},
		{0.5, "500µs"},
		{1, "1ms"},
		{20, "20ms"},
		{1000, "1s"},
		{100000, "100s"}, // not 1m40s
	} {
		if got := tickLabel(tc.ms); got != tc.want {
			t.Errorf("tickLabel(%g) = %q, want %q", tc.ms, got, tc.want)
		}
	}
}
