package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/report"
	"github.com/tollgate-dev/tollgate/report/routes"
)

func TestRecommendFlagParsing(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want RecommendOptions
	}{
		{[]string{"r.json"}, RecommendOptions{Results: "r.json", Route: "default", Format: "table"}},
		{[]string{"r.json", "--policy", "p.yaml", "-o", "routes.yaml", "--route", "chat", "--format", "yaml"},
			RecommendOptions{Results: "r.json", Policy: "p.yaml", Out: "routes.yaml", Route: "chat", Format: "yaml"}},
		{[]string{"--format=json", "--out", "x.yaml", "r.json"}, RecommendOptions{Results: "r.json", Out: "x.yaml", Route: "default", Format: "json"}},
	} {
		var got *RecommendOptions
		c := newCmdRecommendWith(IOStreams{}, func(o *RecommendOptions) error { got = o; return nil })
		c.SetArgs(tc.args)
		if err := c.Execute(); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		got.IO = IOStreams{}
		if *got != tc.want {
			t.Errorf("%v: got %+v, want %+v", tc.args, *got, tc.want)
		}
	}
}

func TestRecommendCommand(t *testing.T) {
	if _, err := os.Stat(reportSample); err != nil {
		t.Skipf("sample results file missing: %v", err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "routes.yaml")

	// Table, and -o writes a config that check-config passes.
	code, stdout, stderr := runTollgate(t, "recommend", reportSample, "-o", out, "--route", "chat")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Recommended timeouts", "stream.ttft", "killed/of", "ping masking"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "wrote route \"chat\" to "+out) {
		t.Errorf("stderr: %s", stderr)
	}
	if code, ccOut, ccErr := runTollgate(t, "check-config", out); code != ExitOK || !strings.Contains(ccOut, "chat: connect 2s") {
		t.Errorf("check-config of the written config: exit %d\n%s%s", code, ccOut, ccErr)
	}

	// --format yaml prints what -o wrote.
	_, yamlOut, _ := runTollgate(t, "recommend", reportSample, "--format", "yaml", "--route", "chat")
	if written, _ := os.ReadFile(out); yamlOut != string(written) {
		t.Errorf("--format yaml:\n%s\ndiffers from -o:\n%s", yamlOut, written)
	}
	if _, err := routes.Parse([]byte(yamlOut), "stdout"); err != nil {
		t.Error(err)
	}

	// --format json is the recommendation object.
	_, jsonOut, _ := runTollgate(t, "recommend", reportSample, "--format", "json")
	var rec report.Recommendation
	if err := json.Unmarshal([]byte(jsonOut), &rec); err != nil || rec.Stream.TTFT == 0 || len(rec.Rationale) == 0 {
		t.Errorf("json: %v\n%s", err, jsonOut)
	}

	// A policy changes the numbers: ttft at 10 x p99.
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte("ttft:\n  multiple: 10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, jsonOut, _ = runTollgate(t, "recommend", reportSample, "--format", "json", "--policy", policy)
	var rec10 report.Recommendation
	if err := json.Unmarshal([]byte(jsonOut), &rec10); err != nil || rec10.Stream.TTFT <= rec.Stream.TTFT {
		t.Errorf("policy multiple 10: ttft %s, default %s (%v)", rec10.Stream.TTFT, rec.Stream.TTFT, err)
	}
}

func TestRecommendExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string { return writeTestFile(t, dir, name, body) }
	broken := write("broken.json", "{not json")
	empty := write("empty.json", `{"schema":"tollgate.results/v1","paths":{"stream":{"calls":3,"outcomes":{"transport":3},"metrics":{}}}}`)
	badPolicy := write("policy.yaml", "ttft:\n  multipel: 3\n")
	for _, tc := range []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"unreadable results", []string{filepath.Join(dir, "none.json")}, ExitUsage, "none.json"},
		{"not a results file", []string{broken}, ExitUsage, "broken.json"},
		{"bad format", []string{broken, "--format", "xml"}, ExitUsage, `--format "xml"`},
		{"no call reached the target", []string{empty}, ExitNoMeasure, "empty.json"},
		{"bad policy", []string{reportSample, "--policy", badPolicy}, ExitUsage, "policy.yaml"},
		{"unwritable -o", []string{reportSample, "-o", filepath.Join(dir, "no", "such", "dir.yaml")}, ExitUsage, "write route config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runTollgate(t, append([]string{"recommend"}, tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.err) {
				t.Errorf("exit %d, stderr %q; want exit %d naming %q", code, stderr, tc.code, tc.err)
			}
		})
	}
}

// TestRecommendEndToEnd is issue 6's loop: probe the simulator, write the
// recommended config, check it, probe again under it, and see that the
// healthy calls each deadline killed stay within the 95% bound the first
// run promised for it.
func TestRecommendEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("probes the embedded simulator twice")
	}
	dir := t.TempDir()
	first, second, cfg := filepath.Join(dir, "r1.json"), filepath.Join(dir, "r2.json"), filepath.Join(dir, "routes.yaml")
	// The realistic profile, as issue 6 asks: token spacing, structural
	// pauses and TTFTs of seconds. Enough workers that every call runs at
	// once, so each probe lasts as long as its slowest call (~20 s).
	probe := []string{"probe", "--sim-profile", "realistic", "--mode", "both", "-n", "120", "-c", "240", "--max-tokens", "96", "-q", "--format", "json"}
	if code, _, stderr := runTollgate(t, append(probe, "-o", first, "--config-out", cfg)...); code != ExitOK {
		t.Fatalf("first probe: exit %d: %s", code, stderr)
	}
	if code, out, stderr := runTollgate(t, "check-config", cfg); code != ExitOK {
		t.Fatalf("check-config of the written config: exit %d\n%s%s", code, out, stderr)
	}
	if code, _, stderr := runTollgate(t, append(probe, "--seed", "2", "-o", second, "--route-config", cfg, "--route", "default")...); code != ExitOK {
		t.Fatalf("second probe under the config: exit %d: %s", code, stderr)
	}
	r1, err := report.LoadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := report.LoadFile(second)
	if err != nil {
		t.Fatal(err)
	}
	if r1.Recommendation == nil {
		t.Fatal("the first run's results hold no recommendation")
	}
	if got := time.Duration(r2.Run.Clocks.Gap); got != time.Duration(r1.Recommendation.Stream.Gap) || got == 0 {
		t.Errorf("second run's gap clock %s, want the recommended %s", got, time.Duration(r1.Recommendation.Stream.Gap))
	}
	// Each clock's kills against the bound its setting promised.
	bound := map[string]float64{}
	for _, r := range r1.Recommendation.Rationale {
		bound[r.Setting] = r.FalseKillUpper95
	}
	settingOf := map[string]string{
		"timeout.connect": "timeouts.connect", "timeout.first_token": "timeouts.first_token",
		"timeout.idle": "timeouts.idle", "timeout.total": "timeouts.total",
		"timeout.ttft": "stream.ttft", "timeout.gap": "stream.gap",
	}
	for name, p := range r2.Paths {
		if p.Calls == 0 {
			continue
		}
		for outcome, n := range p.Outcomes {
			if !strings.HasPrefix(outcome, "timeout.") || n == 0 {
				continue
			}
			setting := settingOf[outcome]
			if outcome == "timeout.head" && name == report.PathBatch {
				setting = "batch.head"
			}
			if rate := float64(n) / float64(p.Calls); setting == "" || rate > bound[setting] {
				t.Errorf("%s: %s killed %d of %d calls (%.2f%%), above the %.2f%% the first run promised for %q",
					name, outcome, n, p.Calls, 100*rate, 100*bound[setting], setting)
			}
		}
		t.Logf("%s: outcomes %v under the recommended config", name, p.Outcomes)
	}
}
