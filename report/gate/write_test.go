package gate

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// sampleComparison has a regression, an improvement, a too-few-samples
// row, a failed gate and a warning.
func sampleComparison(t *testing.T) *Comparison {
	ttft := spread(2000, ms(100), ms(1000))
	gap := spread(2000, ms(20), ms(200))
	base := buildResults(t, map[string]pathSpec{"stream": {calls: 2000, outcomes: map[string]int64{"ok": 2000},
		metrics: map[string][]int64{"ttft": ttft, "gap": gap}}})
	cur := buildResults(t, map[string]pathSpec{"stream": {calls: 2000, outcomes: map[string]int64{"ok": 1990, "timeout.gap": 10},
		metrics: map[string][]int64{"ttft": scaled(ttft, 1.3), "gap": scaled(gap, 0.7)}}})
	cur.Run.Model = "m2"
	e, err := ParseExpr("stream.ttft.p99>1s")
	if err != nil {
		t.Fatal(err)
	}
	return compare(t, base, cur, CompareOptions{MaxRegression: 10, FailOn: []Expr{e}, BaseLabel: "base.json", NewLabel: "new.json"})
}

func TestWriteCompareMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCompareMarkdown(&b, sampleComparison(t)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"### ❌ tollgate compare\n\n**REGRESSION: 3 of ",
		"| | path | metric | stat | base.json | new.json | change | note |",
		"| ❌ | stream | ttft | p99 | 991ms | 1.29s | +30.1% | regression; worse by 30.1%, more than the 10% allowed |",
		"| ✅ | stream | gap | p50 | 110ms | 77ms | -30% | improved |",
		"| ➖ | stream | ttft | p999 |",
		"| ✅ | stream | errors | rate | 0% | 0.5% | +0.5 pts |",
		"| ❌ | `stream.ttft.p99>1s` | stream.ttft.p99 = 1.29s &gt; 1s |",
		"> ⚠️ runs differ in model: m (base) vs m2 (new)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	// Every table line has the same number of cells as its header.
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "| ") && strings.Contains(line, " stream ") && strings.Count(line, " | ") != 7 {
			t.Errorf("row with a wrong cell count: %q", line)
		}
	}
}

func TestWriteCompareTable(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCompareTable(&b, sampleComparison(t)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"REGRESSION: 3 of ", "base.json", "too few samples", "improved", "FAILED  stream.ttft.p99 = 1.29s > 1s", "warning: runs differ in model"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !regexpLine(out, "ttft", "p99", "REGRESSION") {
		t.Errorf("no table line marks ttft p99 a regression:\n%s", out)
	}
}

// regexpLine reports whether one line holds every fragment.
func regexpLine(out string, frags ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		all := true
		for _, f := range frags {
			all = all && strings.Contains(line, f)
		}
		if all {
			return true
		}
	}
	return false
}

type failWriter struct{}

var errDiskFull = errors.New("disk full")

func (failWriter) Write([]byte) (int, error) { return 0, errDiskFull }

func TestWritersReturnWriteErrors(t *testing.T) {
	c := sampleComparison(t)
	for name, err := range map[string]error{
		"table":    WriteCompareTable(failWriter{}, c),
		"markdown": WriteCompareMarkdown(failWriter{}, c),
		"verdicts": WriteVerdicts(failWriter{}, c.Gates),
	} {
		if !errors.Is(err, errDiskFull) {
			t.Errorf("%s: err = %v, want the write error", name, err)
		}
	}
}

func TestWriteVerdicts(t *testing.T) {
	var b bytes.Buffer
	if err := WriteVerdicts(&b, sampleComparison(t).Gates); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "gate FAILED  stream.ttft.p99 = 1.29s > 1s\n"; got != want {
		t.Errorf("WriteVerdicts = %q, want %q", got, want)
	}
}
