package cmd

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/histo"
	"github.com/tollgate-dev/tollgate/report"
)

// gateRun writes a results file with a stream path of n calls (failed of
// them not ok) whose ttft is spread over lo..hi, stretched by factor, and
// returns its path.
func gateRun(t *testing.T, dir, name string, n, failed int, factor float64, mutate func(*report.Results)) string {
	t.Helper()
	h := histo.New()
	lo, hi := 100*time.Millisecond, time.Second
	for i := range n {
		d := lo + (hi-lo)*time.Duration(i)/time.Duration(max(n-1, 1))
		h.Record(time.Duration(float64(d) * factor))
	}
	m, err := report.Summarize(histo.MetricTTFT, h)
	if err != nil {
		t.Fatal(err)
	}
	r := &report.Results{
		Schema: report.Schema,
		Run:    report.Run{Target: "http://127.0.0.1:9", API: "anthropic", Model: "m", Mode: "stream", Started: time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)},
		Paths: map[string]*report.Path{report.PathStream: {
			Calls:    int64(n),
			Outcomes: map[string]int64{"ok": int64(n - failed), "timeout.gap": int64(failed)},
			Metrics:  map[string]*report.Metric{histo.MetricTTFT: m},
		}},
	}
	if mutate != nil {
		mutate(r)
	}
	path := filepath.Join(dir, name)
	if err := report.SaveFile(path, r); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCompareFlagParsing(t *testing.T) {
	var got *CompareOptions
	c := newCmdCompareWith(IOStreams{}, func(o *CompareOptions) error { got = o; return nil })
	c.SetArgs([]string{"a.json", "b.json", "--max-regression", "15%", "--fail-on", "stream.ttft.p99>2s", "--fail-on", "errors.rate > 1%", "--format", "markdown", "--min-tail", "5"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	g := got.Gate
	if got.Base != "a.json" || got.New != "b.json" || got.Format != "markdown" || g.MaxRegression != 15 || g.MinTail != 5 ||
		len(g.FailOn) != 2 || g.FailOn[1].Text != "errors.rate > 1%" || g.BaseLabel != "a.json" || g.NewLabel != "b.json" {
		t.Errorf("options %+v", got)
	}
	// Defaults.
	c = newCmdCompareWith(IOStreams{}, func(o *CompareOptions) error { got = o; return nil })
	c.SetArgs([]string{"a.json", "b.json"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Format != "table" || got.Gate.MaxRegression != 10 || got.Gate.MinTail != 10 || got.Gate.FailOn != nil {
		t.Errorf("default options %+v", got)
	}
}

func TestCompareExitCodes(t *testing.T) {
	dir := t.TempDir()
	base := gateRun(t, dir, "base.json", 2000, 0, 1, nil)
	same := gateRun(t, dir, "same.json", 2000, 0, 1, nil)
	slower := gateRun(t, dir, "slower.json", 2000, 0, 1.3, nil)
	faster := gateRun(t, dir, "faster.json", 2000, 0, 0.7, nil)
	fewSlower := gateRun(t, dir, "few.json", 50, 0, 1.3, nil)
	fewBase := gateRun(t, dir, "fewbase.json", 50, 0, 1, nil)
	notResults := filepath.Join(dir, "nope.json")

	cases := []struct {
		name   string
		args   []string
		code   int
		stdout string // a fragment of stdout ("" to skip)
		stderr string // a fragment of stderr ("" to skip)
	}{
		// The same run twice passes.
		{"same", []string{base, same}, 0, "OK: nothing worse than", ""},
		// 30% slower against the default 10% fails, and says so on stderr.
		{"regression", []string{base, slower}, 1, "REGRESSION", "tollgate: REGRESSION: 3 of 4 compared values"},
		// A larger allowance lets it pass.
		{"allowance", []string{base, slower, "--max-regression", "50"}, 0, "OK:", ""},
		// Faster is not a regression.
		{"improvement", []string{base, faster}, 0, "improved", ""},
		// 30% slower on 50 calls: p90 and up rest on too few samples, and
		// p50's change is within its 95% interval: not a breach.
		{"few samples", []string{fewBase, fewSlower}, 0, "within noise", ""},
		// With --min-tail 30 not even p50 of 50 calls is judged.
		{"min tail", []string{fewBase, fewSlower, "--min-tail", "30"}, 0, "p50 needs 60 for 30 beyond it", ""},
		// A --fail-on gate on NEW.json.
		{"gate breach", []string{base, same, "--fail-on", "stream.ttft.p99>500ms"}, 1, "FAILED  stream.ttft.p99 = 991ms > 500ms", "1 of 1 gate failed"},
		{"gate holds", []string{base, same, "--fail-on", "stream.ttft.p99>2s"}, 0, "held", ""},
		// Markdown for a step summary.
		{"markdown", []string{base, slower, "--format", "markdown"}, 1, "### ❌ tollgate compare", ""},
		{"markdown ok", []string{base, same, "--format", "markdown"}, 0, "### ✅ tollgate compare", ""},
		// Bad input is exit 2, naming what is wrong.
		{"bad gate", []string{base, same, "--fail-on", "stream.ttft.p98>2s"}, 2, "", `unknown stat "p98"`},
		{"bad pct", []string{base, same, "--max-regression", "lots"}, 2, "", "--max-regression"},
		{"bad format", []string{base, same, "--format", "html"}, 2, "", `--format "html"`},
		{"missing file", []string{base, notResults}, 2, "", notResults},
		{"one file", []string{base}, 2, "", "accepts 2 arg(s)"},
		{"bad min tail", []string{base, same, "--min-tail", "0"}, 2, "", "--min-tail"},
	}
	for _, tc := range cases {
		code, out, errOut := runTollgate(t, append([]string{"compare"}, tc.args...)...)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", tc.name, code, tc.code, out, errOut)
			continue
		}
		if !strings.Contains(out, tc.stdout) {
			t.Errorf("%s: stdout lacks %q:\n%s", tc.name, tc.stdout, out)
		}
		if !strings.Contains(errOut, tc.stderr) {
			t.Errorf("%s: stderr lacks %q:\n%s", tc.name, tc.stderr, errOut)
		}
	}
}

func TestCompareJSON(t *testing.T) {
	dir := t.TempDir()
	base := gateRun(t, dir, "base.json", 2000, 10, 1, nil)
	slower := gateRun(t, dir, "slower.json", 2000, 100, 1.3, nil)
	code, out, errOut := runTollgate(t, "compare", base, slower, "--format", "json", "--fail-on", "errors.rate>1%")
	if code != ExitGateFailed {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Breached bool
		Rows     []struct {
			Path, Metric, Stat, Status string
			Base, New                  float64
		}
		Gates []struct {
			Gate   string
			Failed bool
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if !got.Breached || len(got.Gates) != 1 || got.Gates[0].Gate != "errors.rate>1%" || !got.Gates[0].Failed {
		t.Errorf("breached %v gates %+v", got.Breached, got.Gates)
	}
	statuses := map[string]string{}
	for _, r := range got.Rows {
		statuses[r.Metric+"."+r.Stat] = r.Status
	}
	// 0.5% -> 5% of 2000 calls: a significant rise of 4.5 points.
	want := map[string]string{"ttft.p50": "regression", "ttft.p99": "regression", "ttft.p999": "too_few_samples", "errors.rate": "regression"}
	for k, v := range want {
		if statuses[k] != v {
			t.Errorf("%s: status %q, want %q (all: %v)", k, statuses[k], v, statuses)
		}
	}
}
