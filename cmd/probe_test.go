package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/histo"
	"github.com/tollgate-dev/tollgate/probe"
	"github.com/tollgate-dev/tollgate/report"
	"github.com/tollgate-dev/tollgate/sim"
)

// TestProbeFlagParsing checks that flags become options, without a call.
func TestProbeFlagParsing(t *testing.T) {
	var got *ProbeOptions
	c := NewCmdProbe(IOStreams{}, func(_ context.Context, o *ProbeOptions) error { got = o; return nil })
	c.SetArgs([]string{"--target", "https://api.openai.com/v1", "--api", "openai", "--model", "gpt-x",
		"--api-key-env", "K", "-H", "X-Team: a", "-H", "X-Env: b", "--mode", "both", "-n", "10", "-d", "1m",
		"-c", "3", "--rate", "2.5", "--arrival", "poisson", "--warmup", "2", "--seed", "9", "--shard", "2/4",
		"--connect", "1s", "--head", "2s", "--head-batch", "90s", "--first-token", "3s", "--idle", "4s",
		"--total", "5m", "--ttft", "5s", "--gap", "10s", "--attempts", "5", "--retry-budget", "10m",
		"--job-deadline", "5h30m", "--cursor", "c.json", "-o", "r.json", "--calls", "c.jsonl", "--hlog", "h.hlog",
		"--html", "r.html", "--format", "markdown", "--config-out", "routes.yaml", "-q",
		"--fail-on", "stream.ttft.p99>2s", "--fail-on", "errors.rate>1%", "--baseline", "b.json", "--max-regression", "15"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	want := probe.Clocks{Connect: time.Second, Head: 2 * time.Second, HeadBatch: 90 * time.Second, FirstToken: 3 * time.Second,
		Idle: 4 * time.Second, Total: 5 * time.Minute, TTFT: 5 * time.Second, Gap: 10 * time.Second}
	switch {
	case got.Target != "https://api.openai.com/v1" || got.API != "openai" || got.Model != "gpt-x" || got.APIKeyEnv != "K":
		t.Errorf("target options: %+v", got)
	case len(got.Headers) != 2 || got.Mode != "both" || got.Requests != 10 || got.Duration != time.Minute:
		t.Errorf("load options: %+v", got)
	case got.Concurrency != 3 || got.Rate != 2.5 || got.Arrival != "poisson" || got.Warmup != 2 || got.Seed != 9 || got.Shard != "2/4":
		t.Errorf("load options: %+v", got)
	case got.Clocks != want:
		t.Errorf("clocks %+v, want %+v", got.Clocks, want)
	case got.Attempts != 5 || got.RetryBudget != 10*time.Minute || got.JobDeadline != 5*time.Hour+30*time.Minute || got.Cursor != "c.json":
		t.Errorf("batch options: %+v", got)
	case got.Out != "r.json" || got.Calls != "c.jsonl" || got.HLog != "h.hlog" || got.HTML != "r.html" || got.Format != "markdown" || got.ConfigOut != "routes.yaml" || !got.Quiet:
		t.Errorf("output options: %+v", got)
	case len(got.FailOn) != 2 || got.Baseline != "b.json" || got.MaxRegression != 15:
		t.Errorf("gate options: %+v", got)
	}
}

// TestProbeRefusesBadInput: each kind of bad flag or input exits 2 with a
// message naming it, and nothing is sent (no target is listening).
func TestProbeRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	badPrompts := writeTestFile(t, dir, "bad.jsonl", "{\"prompt\":\"ok\"}\n{not json}\n")
	cases := []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"--bogus"}, "unknown flag: --bogus"},
		{[]string{"-n", "many"}, `invalid argument "many" for "-n, --requests"`},
		{[]string{"--api", "gemini"}, "--api"},
		{[]string{"--mode", "fast"}, `--mode "fast"`},
		{[]string{"--arrival", "burst"}, `--arrival "burst"`},
		{[]string{"--gap", "-1s"}, "clock gap"},
		{[]string{"--concurrency", "-2"}, "--concurrency"},
		{[]string{"--target", "api.openai.com"}, "--target"},
		{[]string{"--target", "https://u:p@example.com/v1", "--model", "m"}, "credentials in the URL"},
		{[]string{"--target", "http://example.com/v1", "--model", "m", "-H", "Authorization: Bearer sk-x"}, "plain HTTP"},
		{[]string{"--target", "https://example.com/v1"}, "--model"},
		{[]string{"--api-key-env", "NO_SUCH_VAR", "--target", "https://example.com", "--model", "m"}, "--api-key-env NO_SUCH_VAR"},
		{[]string{"--prompts", badPrompts}, "line 2"},
		{[]string{"--prompts", filepath.Join(dir, "missing.jsonl")}, "--prompts"},
		{[]string{"--route-config", "x.yaml"}, "--route-config and --route go together"},
		{[]string{"--shard", "5/4"}, "--shard"},
		{[]string{"--fail-on", "stream.ttft.p98>2s"}, "--fail-on"},
		{[]string{"--format", "pdf"}, `--format "pdf"`},
		{[]string{"-H", "NoColon"}, "-H"},
		{[]string{"--baseline", filepath.Join(dir, "none.json")}, "--baseline"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := runTollgate(t, append([]string{"probe", "-q"}, tc.args...)...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d (stderr %q)", code, ExitUsage, stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q does not name %q", stderr, tc.want)
			}
		})
	}
}

// startSim serves the simulator on loopback for a test.
func startSim(t *testing.T, cfg sim.Config) *sim.Running {
	t.Helper()
	if cfg.Profile == nil {
		cfg.Profile = sim.Fast()
	}
	s, err := sim.Start(context.Background(), cfg, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// readCalls reads a --calls file.
func readCalls(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("calls line %d: %v", len(lines)+1, err)
		}
		lines = append(lines, m)
	}
	return lines
}

// TestProbeEndToEndWithFaults injects faults at known rates and checks the
// outcome counts against the rates within binomial tolerance, that every
// call is accounted for exactly once, and that the results file holds what
// SPEC §6 requires with histograms whose counts match the calls.
func TestProbeEndToEndWithFaults(t *testing.T) {
	faults := []struct {
		fault   string
		rate    float64
		outcome string
	}{
		{"http-500", 0.10, "http.500"},
		{"truncate", 0.10, "truncated"},
		{"error-event", 0.10, "stream_error.overloaded_error"},
		{"malformed", 0.05, "protocol"},
	}
	var cfg sim.Config
	for _, f := range faults {
		fr, err := sim.ParseFaultRate(fmt.Sprintf("%s@%g", f.fault, f.rate))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Faults = append(cfg.Faults, fr)
	}
	cfg.Seed = 7
	s := startSim(t, cfg)
	dir := t.TempDir()
	out, calls := filepath.Join(dir, "r.json"), filepath.Join(dir, "c.jsonl")
	const n = 400
	code, stdout, stderr := runTollgate(t, "probe", "-q", "--target", s.BaseURL("anthropic"), "--model", "m",
		"-n", fmt.Sprint(n), "-c", "16", "--max-tokens", "32", "-o", out, "--calls", calls, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	res, err := report.LoadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var printed report.Results
	if err := json.Unmarshal([]byte(stdout), &printed); err != nil || printed.Paths["stream"] == nil {
		t.Errorf("--format json printed something that is not the results: %v", err)
	}
	p := res.Paths["stream"]
	if p == nil || p.Calls != n {
		t.Fatalf("stream path %+v, want %d calls", p, n)
	}
	// Every call exactly once: in the outcomes, in --calls, at the simulator.
	var sum int64
	for _, c := range p.Outcomes {
		sum += c
	}
	lines := readCalls(t, calls)
	if sum != n || len(lines) != n || s.Server.Stats().Requests != n {
		t.Errorf("outcomes sum %d, calls lines %d, simulator requests %d; want %d each", sum, len(lines), s.Server.Stats().Requests, n)
	}
	// Rates within 4.5 binomial standard deviations (a false alarm about
	// once in 150,000 runs), and the seed makes the draw reproducible anyway.
	for _, f := range faults {
		got := float64(p.Outcomes[f.outcome])
		mean := f.rate * n
		sd := math.Sqrt(n * f.rate * (1 - f.rate))
		if math.Abs(got-mean) > 4.5*sd {
			t.Errorf("%s: %v calls, want %v ± %.0f", f.outcome, got, mean, 4.5*sd)
		}
	}
	checkResultsSchema(t, out)
	// Histogram counts equal the calls that reached each phase.
	reached := map[string]int64{}
	for _, l := range lines {
		for _, m := range []string{"connect", "head", "first_byte", "ttft", "total", "max_gap", "max_byte_gap"} {
			if _, ok := l[m]; ok {
				reached[m]++
			}
		}
	}
	for m, want := range reached {
		h, err := p.Metrics[m].Histogram()
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		if h.Count() != want || p.Metrics[m].Count != want {
			t.Errorf("%s: histogram holds %d, summary %d; %d calls reached it", m, h.Count(), p.Metrics[m].Count, want)
		}
	}
}

// checkResultsSchema checks the keys SPEC §6 requires, on the raw JSON.
func checkResultsSchema(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	get := func(keys ...string) any {
		var v any = doc
		for _, k := range keys {
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		}
		return v
	}
	if get("schema") != report.Schema {
		t.Errorf("schema %v", get("schema"))
	}
	for _, k := range [][]string{{"tool", "version"}, {"run", "started"}, {"run", "ended"}, {"run", "target"}, {"run", "api"},
		{"run", "model"}, {"run", "mode"}, {"run", "load"}, {"run", "clocks"}, {"run", "interrupted"}} {
		if get(k...) == nil {
			t.Errorf("results: no %s", strings.Join(k, "."))
		}
	}
	for name := range get("paths").(map[string]any) {
		for _, k := range []string{"calls", "outcomes", "metrics"} {
			if get("paths", name, k) == nil {
				t.Errorf("results: no paths.%s.%s", name, k)
			}
		}
		for metric := range get("paths", name, "metrics").(map[string]any) {
			for _, k := range []string{"count", "min", "mean", "p50", "p90", "p95", "p99", "p999", "max", "hdr"} {
				if get("paths", name, "metrics", metric, k) == nil {
					t.Errorf("results: no paths.%s.metrics.%s.%s", name, metric, k)
				}
			}
			if _, err := histo.Decode(get("paths", name, "metrics", metric, "hdr").(string)); err != nil {
				t.Errorf("paths.%s.metrics.%s.hdr: %v", name, metric, err)
			}
		}
	}
}

// TestProbeNeverWritesTheKey runs with a recognisable fake key, in the
// environment and in a credential header, and finds it in no output.
func TestProbeNeverWritesTheKey(t *testing.T) {
	const key = "sk-tollgate-FAKE-KEY-0123456789abcdef"
	t.Setenv("TOLLGATE_TEST_KEY", key)
	var mu sync.Mutex
	var seen []string
	s := startSim(t, sim.Config{Observe: func(ri sim.RequestInfo) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, ri.Header.Get("x-api-key"))
	}})
	dir := t.TempDir()
	outs := map[string]string{"-o": "r.json", "--calls": "c.jsonl", "--hlog": "h.hlog", "--html": "r.html"}
	args := []string{"probe", "--target", s.BaseURL("anthropic"), "--model", "m", "--api-key-env", "TOLLGATE_TEST_KEY",
		"-H", "X-Custom-Auth: " + key, "-n", "20", "-c", "4", "--max-tokens", "16"}
	for flag, name := range outs {
		args = append(args, flag, filepath.Join(dir, name))
	}
	code, stdout, stderr := runTollgate(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 || seen[0] != key {
		t.Fatalf("the simulator did not receive the key, so this test proves nothing")
	}
	texts := map[string]string{"stdout": stdout, "stderr": stderr}
	for _, name := range outs {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		texts[name] = string(b)
	}
	// Errors are outputs too: a refused plain-HTTP run names the target.
	_, _, refused := runTollgate(t, "probe", "--target", "http://example.com/v1", "--model", "m", "--api-key-env", "TOLLGATE_TEST_KEY", "-H", "Authorization: Bearer "+key)
	texts["refusal"] = refused
	for name, text := range texts {
		if strings.Contains(text, key) || strings.Contains(text, key[len(key)-12:]) {
			t.Errorf("%s contains the key", name)
		}
	}
}

// TestProbeInterruptWritesResults runs the probe as a subprocess, sends
// SIGINT mid-run, and checks exit 130, the results file with interrupted
// true, and every completed call in it.
func TestProbeInterruptWritesResults(t *testing.T) {
	s := startSim(t, sim.Config{Profile: sim.Realistic()})
	dir := t.TempDir()
	out, calls := filepath.Join(dir, "r.json"), filepath.Join(dir, "c.jsonl")
	args, _ := json.Marshal([]string{"probe", "--target", s.BaseURL("anthropic"), "--model", "m",
		"-n", "100000", "-c", "20", "--max-tokens", "32", "-o", out, "--calls", calls})
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envRunMain+"=1", envRunMain+"_ARGS="+string(args))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once some calls have completed (realistic calls take
	// seconds, so many are in flight at that moment).
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, _ := os.ReadFile(calls); strings.Count(string(b), "\n") >= 5 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no call completed in 30 s: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != ExitInterrupted {
		t.Fatalf("exit %d (%v), want %d: %s", code, err, ExitInterrupted, stderr.String())
	}
	res, err := report.LoadFile(out)
	if err != nil {
		t.Fatalf("results after SIGINT: %v", err)
	}
	if !res.Run.Interrupted {
		t.Error("results do not say interrupted")
	}
	lines := readCalls(t, calls)
	completed, canceled := 0, 0
	for _, l := range lines {
		if l["outcome"] == probe.OutcomeCanceled {
			canceled++
		} else {
			completed++
		}
	}
	p := res.Paths["stream"]
	if p == nil || p.Calls != int64(len(lines)) || p.Outcomes[probe.OutcomeOK] != int64(completed) || p.Outcomes[probe.OutcomeCanceled] != int64(canceled) {
		t.Errorf("results %+v; calls file has %d completed and %d canceled", p, completed, canceled)
	}
	if canceled == 0 {
		t.Error("no call was in flight at the interrupt: the test did not interrupt a run")
	}
}

// TestProbeJobDeadlineAndResume: a batch job cut by --job-deadline writes a
// cursor; --resume runs exactly the unprocessed items. Counted at the
// simulator: across both runs every item completes exactly once.
func TestProbeJobDeadlineAndResume(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	const items = 60
	for i := range items {
		fmt.Fprintf(&b, "{\"id\": \"doc-%02d\", \"prompt\": \"summarise document %02d\"}\n", i, i)
	}
	prompts := writeTestFile(t, dir, "items.jsonl", b.String())
	var mu sync.Mutex
	seen := map[string]int{}
	s := startSim(t, sim.Config{Observe: func(ri sim.RequestInfo) {
		mu.Lock()
		defer mu.Unlock()
		i := strings.Index(string(ri.Body), "document ")
		seen[string(ri.Body)[i+9:i+11]]++
	}})
	cursor := filepath.Join(dir, "cursor.json")
	first, second := filepath.Join(dir, "r1.json"), filepath.Join(dir, "r2.json")
	base := []string{"probe", "-q", "--target", s.BaseURL("openai"), "--api", "openai", "--model", "m",
		"--mode", "batch", "--prompts", prompts, "-c", "2", "--max-tokens", "40"}

	code, _, stderr := runTollgate(t, append(base, "--job-deadline", "150ms", "--cursor", cursor, "-o", first)...)
	if code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	r1, err := report.LoadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	it := r1.Paths["batch"].Items
	if it == nil || it.Done+it.Failed+it.Unprocessed != items || it.Unprocessed == 0 || it.Done == 0 {
		t.Fatalf("first run items %+v: want done + failed + unprocessed = %d, some of each of done and unprocessed", it, items)
	}

	code, _, stderr = runTollgate(t, append(base, "--resume", cursor, "-o", second)...)
	if code != 0 {
		t.Fatalf("resumed run: exit %d: %s", code, stderr)
	}
	r2, err := report.LoadFile(second)
	if err != nil {
		t.Fatal(err)
	}
	if got := r2.Paths["batch"].Items; got.Total != it.Unprocessed || got.Done != it.Unprocessed {
		t.Errorf("resumed run items %+v, want exactly the %d unprocessed, all done", got, it.Unprocessed)
	}
	// Items canceled in flight by the deadline may reach the simulator twice
	// (once cut, once resumed); every other item exactly once, and none lost.
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != items {
		t.Errorf("the simulator saw %d distinct items, want %d", len(seen), items)
	}
	var twice int64
	for id, n := range seen {
		if n > 2 {
			t.Errorf("item %s sent %d times", id, n)
		}
		if n == 2 {
			twice++
		}
	}
	// Only an item canceled in flight can have reached the simulator twice;
	// one canceled before its request was read reached it once.
	if canceled := r1.Paths["batch"].Outcomes[probe.OutcomeCanceled]; twice > canceled {
		t.Errorf("%d items sent twice, but only %d were canceled in flight by the deadline", twice, canceled)
	}
}

// TestProbeRouteConfigClocks: --route-config gives the route's clocks and
// batch settings; flags given on the command line win.
func TestProbeRouteConfigClocks(t *testing.T) {
	path := writeTestFile(t, t.TempDir(), "routes.yaml", `routes:
  - name: chat
    timeouts:
      connect: 2s
      first_token: 10s
      idle: 45s
      total: 10m
    stream:
      ttft: 5s
      gap: 10s
    non_streaming:
      head: 90s
    batch:
      item_ceiling: 3m
      attempts: 4
      retry_budget: 5m
`)
	var got *ProbeOptions
	c := NewCmdProbe(IOStreams{}, func(_ context.Context, o *ProbeOptions) error { got = o; return nil })
	c.SetArgs([]string{"--route-config", path, "--route", "chat", "--gap", "20s", "--attempts", "2"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	clocks, err := got.routeClocks()
	if err != nil {
		t.Fatal(err)
	}
	want := probe.Clocks{Connect: 2 * time.Second, Head: defaultClocks.Head, HeadBatch: 90 * time.Second,
		FirstToken: 10 * time.Second, Idle: 45 * time.Second, Total: 10 * time.Minute, TTFT: 5 * time.Second,
		Gap: 20 * time.Second, ItemCeiling: 3 * time.Minute}
	if clocks != want {
		t.Errorf("clocks %+v\nwant   %+v", clocks, want)
	}
	if got.Attempts != 2 || got.RetryBudget != 5*time.Minute {
		t.Errorf("attempts %d (flag wins: 2), retry budget %v (route: 5m)", got.Attempts, got.RetryBudget)
	}
}
