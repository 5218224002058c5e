package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// reportSample is a results file written by report/render's golden test.
var reportSample = filepath.Join("..", "report", "render", "testdata", "sample.results.json")

func TestReportFlagParsing(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		wantFormat string
		wantOut    string
	}{
		// Default: table on stdout.
		{[]string{"r.json"}, "table", ""},
		// Long flags.
		{[]string{"r.json", "--format", "markdown", "--out", "x.md"}, "markdown", "x.md"},
		// -o is --out.
		{[]string{"--format=html", "-o", "r.html", "r.json"}, "html", "r.html"},
	} {
		var got *ReportOptions
		c := newCmdReportWith(IOStreams{}, func(o *ReportOptions) error { got = o; return nil })
		c.SetArgs(tc.args)
		if err := c.Execute(); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got.Results != "r.json" || got.Format != tc.wantFormat || got.Out != tc.wantOut {
			t.Errorf("%v: got results %q format %q out %q", tc.args, got.Results, got.Format, got.Out)
		}
	}
}

func TestReportExitCodes(t *testing.T) {
	if _, err := os.Stat(reportSample); err != nil {
		t.Skipf("sample results file missing (run go test ./report/render -update): %v", err)
	}
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "broken.json")
	if err := os.WriteFile(notJSON, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	otherSchema := filepath.Join(dir, "other.json")
	if err := os.WriteFile(otherSchema, []byte(`{"schema":"something/v9","paths":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.json")
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		errHas string
		outHas string
	}{
		{"table renders", []string{reportSample}, 0, "", "SIMULATED"},
		{"markdown renders", []string{reportSample, "--format", "markdown"}, 0, "", "| metric |"},
		{"json renders", []string{reportSample, "--format", "json"}, 0, "", `"schema": "tollgate.results/v1"`},
		{"missing file names it", []string{missing}, 2, "missing.json", ""},
		{"bad JSON names the file", []string{notJSON}, 2, "broken.json", ""},
		{"wrong schema names the file", []string{otherSchema}, 2, "other.json", ""},
		{"unknown format", []string{reportSample, "--format", "pdf"}, 2, `"pdf"`, ""},
		{"no argument", nil, 2, "accepts 1 arg", ""},
		{"two arguments", []string{reportSample, reportSample}, 2, "accepts 1 arg", ""},
		{"unknown flag", []string{reportSample, "--colour"}, 2, "--colour", ""},
		{"unwritable output", []string{reportSample, "-o", filepath.Join(dir, "no", "such", "dir", "r.txt")}, 2, "write report", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runTollgate(t, append([]string{"report"}, tc.args...)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tc.code, errOut)
			}
			if tc.errHas != "" && !strings.Contains(errOut, tc.errHas) {
				t.Errorf("stderr %q does not mention %q", errOut, tc.errHas)
			}
			if tc.outHas != "" && !strings.Contains(out, tc.outHas) {
				t.Errorf("stdout does not contain %q:\n%s", tc.outHas, out)
			}
		})
	}
}

func TestReportWritesFile(t *testing.T) {
	if _, err := os.Stat(reportSample); err != nil {
		t.Skipf("sample results file missing (run go test ./report/render -update): %v", err)
	}
	out := filepath.Join(t.TempDir(), "report.md")
	code, stdout, errOut := runTollgate(t, "report", reportSample, "--format", "markdown", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if stdout != "" {
		t.Errorf("stdout should be empty with -o, got %q", stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "## Recommended timeouts") {
		t.Errorf("report file lacks the recommendation:\n%s", b)
	}
}
