package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/histo"
	"github.com/tollgate-dev/tollgate/report"
)

// articlePlan is the 002 article's job as flags.
var articlePlan = []string{"--items", "50000", "--mean", "8s", "--workers", "40",
	"--start", "01:00", "--due", "07:00", "--margin", "30m", "--retry-allowance", "10m"}

// runPlanCmd runs `tollgate plan args...` and returns the exit code,
// stdout and stderr.
func runPlanCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return execTollgate(t, append([]string{"plan"}, args...)...)
}

// execTollgate runs `tollgate args...` through the root command and the
// one place errors become exit codes, and returns the exit code, stdout
// and stderr.
func execTollgate(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	code := run(context.Background(), NewCmdRoot(streams), args, &errOut)
	return code, out.String(), errOut.String()
}

func TestPlanFlagParsing(t *testing.T) {
	var got *PlanOptions
	c := newCmdPlanWith(IOStreams{}, func(o *PlanOptions) error { got = o; return nil })
	c.SetArgs(append(append([]string{}, articlePlan...), "--rpm", "300", "--format", "json"))
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	in := got.Input
	if in.Items != 50_000 || in.Mean != 8*time.Second || in.Workers != 40 ||
		in.Start != time.Hour || in.Due != 7*time.Hour || in.Margin != 30*time.Minute ||
		in.RetryAllowance != 10*time.Minute || in.RPM != 300 || got.Format != "json" || got.From != "" {
		t.Errorf("options %+v", got)
	}

	// --from instead of --mean.
	c = newCmdPlanWith(IOStreams{}, func(o *PlanOptions) error { got = o; return nil })
	c.SetArgs([]string{"--items", "10", "--from", "r.json", "--workers", "2", "--start", "22:00", "--due", "6:00"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.From != "r.json" || got.Input.Mean != 0 || got.Input.Due != 6*time.Hour || got.Format != "table" {
		t.Errorf("options %+v", got)
	}
}

func TestPlanArticle(t *testing.T) {
	code, out, errOut := runPlanCmd(t, articlePlan...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"400,000 s of work", "10,000 s = 2.8 h of wall clock", "3.2 h of slack", "5.5 h", "347.2 worker-days"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	code, out, errOut = runPlanCmd(t, append(append([]string{}, articlePlan...), "--format", "json")...)
	if code != ExitOK {
		t.Fatalf("json: exit %d: %s", code, errOut)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("json output: %v\n%s", err, out)
	}
	for k, v := range map[string]float64{"work_seconds": 400_000, "wall_seconds": 10_000, "window_seconds": 21_600,
		"slack_seconds": 11_600, "job_deadline_seconds": 19_800, "worst_case_worker_days": 347.2} {
		if f, ok := got[k].(float64); !ok || math.Abs(f-v) > 0.05 {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}

func TestPlanTooSmallWindowWarnsNotFails(t *testing.T) {
	args := append(append([]string{}, articlePlan...), "--workers", "10")
	code, out, errOut := runPlanCmd(t, args...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "Warnings:") || !strings.Contains(out, "at least 21 workers") {
		t.Errorf("no warning:\n%s", out)
	}
}

func TestPlanFrom(t *testing.T) {
	h := histo.New()
	for i := range 200 {
		h.Record(time.Duration(6000+i*20) * time.Millisecond) // 6 s .. 10 s
	}
	m, err := report.Summarize("item", h)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "batch.json")
	r := &report.Results{Schema: report.Schema, Paths: map[string]*report.Path{
		report.PathBatch: {Calls: 200, Metrics: map[string]*report.Metric{"item": m}},
	}}
	if err := report.SaveFile(path, r); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runPlanCmd(t, "--items", "50000", "--from", path, "--workers", "40",
		"--start", "01:00", "--due", "07:00", "--margin", "30m", "--retry-allowance", "10m")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"over 200 items", "a bad night (p99)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestPlanExitCodes(t *testing.T) {
	without := func(flag string) []string {
		var out []string
		for i := 0; i < len(articlePlan); i += 2 {
			if articlePlan[i] != flag {
				out = append(out, articlePlan[i], articlePlan[i+1])
			}
		}
		return out
	}
	with := func(extra ...string) []string { return append(append([]string{}, articlePlan...), extra...) }
	missingFile := filepath.Join(t.TempDir(), "missing.json")
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"the article", articlePlan, ExitOK, ""},
		{"no --items", without("--items"), ExitUsage, "--items"},
		{"--items 0", with("--items", "0"), ExitUsage, "--items"},
		{"--workers 0", with("--workers", "0"), ExitUsage, "--workers"},
		{"no item time", without("--mean"), ExitUsage, "--mean"},
		{"bad --start", with("--start", "25:00"), ExitUsage, "--start"},
		{"bad --due", with("--due", "7am"), ExitUsage, "--due"},
		{"equal start and due", with("--due", "01:00"), ExitUsage, "--due"},
		{"--mean and --from", with("--from", "x.json"), ExitUsage, "--from"},
		{"--from a missing file", append(without("--mean"), "--from", missingFile), ExitUsage, "--from"},
		{"bad --format", with("--format", "xml"), ExitUsage, "--format"},
		{"not a duration", with("--mean", "8"), ExitUsage, "--mean"},
		{"an argument", with("extra"), ExitUsage, "unknown command"},
	}
	for _, c := range cases {
		code, _, errOut := runPlanCmd(t, c.args...)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d (%s)", c.name, code, c.code, errOut)
		}
		if c.msg != "" && !strings.Contains(errOut, c.msg) {
			t.Errorf("%s: stderr %q does not name %s", c.name, errOut, c.msg)
		}
	}
}
