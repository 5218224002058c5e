package cmd

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/histo"
	"github.com/tollgate-dev/tollgate/probe/shard"
	"github.com/tollgate-dev/tollgate/report"
)

// shardFile writes the results of the calls shard s owns out of n
// synthetic calls (the zero Shard: all of them) and returns its path.
// Call i has a ttft of 1 ms + i*i mod 997 ms and a gap per 100 µs of i.
func shardFile(t *testing.T, dir string, n int, s shard.Shard, mutate func(*report.Results)) string {
	t.Helper()
	ttft, gap := histo.New(), histo.New()
	calls, ok := int64(0), int64(0)
	for i := range n {
		if !s.Owns(i) {
			continue
		}
		calls++
		if i%17 != 0 {
			ok++
		}
		ttft.Record(time.Millisecond + time.Duration(i*i%997)*time.Millisecond)
		gap.Record(time.Duration(100*i) * time.Microsecond)
	}
	r := &report.Results{
		Schema: report.Schema,
		Run: report.Run{
			Target: "http://127.0.0.1:9", API: "openai", Model: "m", Mode: "stream",
			Started: time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC), Ended: time.Date(2026, 12, 1, 3, 5, 0, 0, time.UTC),
			Load: report.Load{Requests: n, Rate: 8, Shard: s.String()}, // the probe's -n and --rate
		},
		Paths: map[string]*report.Path{report.PathStream: {
			Calls: calls, Outcomes: map[string]int64{"ok": ok, "timeout.ttft": calls - ok}, Metrics: map[string]*report.Metric{},
		}},
	}
	for name, h := range map[string]*histo.Histogram{histo.MetricTTFT: ttft, histo.MetricGap: gap} {
		m, err := report.Summarize(name, h)
		if err != nil {
			t.Fatal(err)
		}
		r.Paths[report.PathStream].Metrics[name] = m
	}
	if mutate != nil {
		mutate(r)
	}
	name := "whole.json"
	if !s.IsZero() {
		name = "shard-" + strings.ReplaceAll(s.String(), "/", "-of-") + ".json"
	}
	path := filepath.Join(dir, name)
	if err := report.SaveFile(path, r); err != nil {
		t.Fatal(err)
	}
	return path
}

// Shards written to files, merged by the command, give exactly the
// numbers of the unsplit run.
func TestMergeCommandEqualsUnsplit(t *testing.T) {
	dir := t.TempDir()
	const n, shards = 2500, 4
	whole, err := report.LoadFile(shardFile(t, dir, n, shard.Shard{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"merge", "-o", filepath.Join(dir, "merged.json")}
	for i := shards; i >= 1; i-- {
		args = append(args, shardFile(t, dir, n, shard.Shard{Index: i, Count: shards}, nil))
	}
	code, out, errOut := runTollgate(t, args...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "merged 4 files (shards 1/4 2/4 3/4 4/4), stream: 2500 calls -> ") || errOut != "" {
		t.Errorf("stdout %q stderr %q", out, errOut)
	}
	merged, err := report.LoadFile(filepath.Join(dir, "merged.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, want := merged.Paths[report.PathStream], whole.Paths[report.PathStream]
	if got.Calls != want.Calls || !reflect.DeepEqual(got.Outcomes, want.Outcomes) {
		t.Errorf("counts %d %v, want %d %v", got.Calls, got.Outcomes, want.Calls, want.Outcomes)
	}
	for name, wm := range want.Metrics {
		if gm := got.Metrics[name]; gm == nil || *gm != *wm {
			t.Errorf("%s: merged %+v\nwant unsplit %+v", name, gm, wm)
		}
	}
	// compare sees no difference at all between the merge and the unsplit run.
	code, out, errOut = runTollgate(t, "compare", filepath.Join(dir, "whole.json"), filepath.Join(dir, "merged.json"), "--format", "json")
	var cmp struct {
		Breached bool
		Rows     []struct {
			Metric, Stat string
			Delta        float64
		}
	}
	if err := json.Unmarshal([]byte(out), &cmp); err != nil || code != ExitOK || cmp.Breached || len(cmp.Rows) == 0 {
		t.Fatalf("compare unsplit merged: exit %d, %v %s", code, err, errOut)
	}
	for _, r := range cmp.Rows {
		if r.Delta != 0 {
			t.Errorf("merged %s.%s differs from the unsplit run by %v", r.Metric, r.Stat, r.Delta)
		}
	}
	if merged.Run.Load.Rate != 8 {
		t.Errorf("merged rate %v, want the probe's 8", merged.Run.Load.Rate)
	}
}

func TestMergeCommandRefusals(t *testing.T) {
	dir := t.TempDir()
	one := shardFile(t, dir, 100, shard.Shard{Index: 1, Count: 2}, nil)
	two := shardFile(t, dir, 100, shard.Shard{Index: 2, Count: 2}, nil)
	otherDir := t.TempDir()
	otherModel := shardFile(t, otherDir, 100, shard.Shard{Index: 2, Count: 2}, func(r *report.Results) { r.Run.Model = "m-large" })
	otherClock := shardFile(t, t.TempDir(), 100, shard.Shard{Index: 2, Count: 2}, func(r *report.Results) { r.Run.Clocks.TTFT = report.Duration(5 * time.Second) })
	missing := filepath.Join(dir, "missing.json")
	out := filepath.Join(dir, "out.json")
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr []string
	}{
		// A shard of another model: exit 2 naming both files, the field and both values.
		{"model", []string{"-o", out, one, otherModel}, 2, []string{"merge refused", one, otherModel, `model "m" vs "m-large"`}},
		// Another clock.
		{"clock", []string{"-o", out, one, otherClock}, 2, []string{`clocks.ttft "0s" vs "5s"`}},
		// The same shard twice.
		{"duplicate", []string{"-o", out, one, one}, 2, []string{"shard 1/2 appears twice"}},
		// An unreadable input: exit 2 naming it.
		{"unreadable", []string{"-o", out, one, missing}, 2, []string{missing, "no such file"}},
		// No -o.
		{"no out", []string{one, two}, 2, []string{"-o/--out is required"}},
		// No inputs.
		{"no inputs", []string{"-o", out}, 2, []string{"requires at least 1 arg"}},
		// An output in a directory that does not exist.
		{"unwritable", []string{"-o", filepath.Join(dir, "no", "such", "out.json"), one, two}, 2, []string{"save results"}},
		// A partial set merges, with a warning.
		{"partial", []string{"-o", out, two}, 0, []string{"warning: shards missing from the merge: 1/2"}},
	}
	for _, tc := range cases {
		code, _, errOut := runTollgate(t, append([]string{"merge"}, tc.args...)...)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d: %s", tc.name, code, tc.code, errOut)
		}
		for _, want := range tc.stderr {
			if !strings.Contains(errOut, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", tc.name, want, errOut)
			}
		}
	}
}
