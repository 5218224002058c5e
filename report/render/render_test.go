package render

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
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
