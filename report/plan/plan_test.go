package plan

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/histo"
	"github.com/tollgate-dev/tollgate/report"
)

// article is the 002 article's job: 50,000 items at 8 s, 40 workers,
// 01:00 to 07:00, 30 minutes to spare, 10 minutes of retry allowance.
func article() Input {
	return Input{
		Items: 50_000, Mean: 8 * time.Second, Workers: 40,
		Start: time.Hour, Due: 7 * time.Hour,
		Margin: 30 * time.Minute, RetryAllowance: 10 * time.Minute,
	}
}

func TestCompute(t *testing.T) {
	cases := []struct {
		name  string
		in    func() Input
		check func(t *testing.T, p Plan)
	}{
		{
			// SPEC §5: 400,000 s of work, 10,000 s (about 2.8 h) of wall
			// clock, 6 h of window, about 3.2 h of slack, a 5.5 h job
			// deadline, about 347 worker-days.
			name: "the article's example",
			in:   article,
			check: func(t *testing.T, p Plan) {
				eq(t, "work", p.Mean.Work, 400_000*time.Second)
				eq(t, "wall", p.Mean.Wall, 10_000*time.Second)
				eq(t, "window", p.Window, 6*time.Hour)
				eq(t, "slack", p.Mean.Slack, 6*time.Hour-10_000*time.Second)
				near(t, "slack hours", p.Mean.Slack.Hours(), 3.2, 0.05)
				eq(t, "job deadline", p.JobDeadline, 5*time.Hour+30*time.Minute)
				eq(t, "worst case", p.WorstCase, 500_000*time.Minute)
				near(t, "worker-days", p.WorstCaseWorkerDays, 347.2, 0.05)
				if p.Mean.Bound != BoundWorkers || !p.Mean.FitsDeadline || p.CrossesMidnight || len(p.Warnings) != 0 {
					t.Errorf("bound %s, fits %v, crosses %v, warnings %q", p.Mean.Bound, p.Mean.FitsDeadline, p.CrossesMidnight, p.Warnings)
				}
				// 3.2 h of slack x 40 workers / 10 min: 773 items could retry to
				// their full allowance.
				if p.RetryItemsInSlack != 773 {
					t.Errorf("retry room %d items, want 773", p.RetryItemsInSlack)
				}
			},
		},
		{
			// 22:00 to 06:00 is 8 hours, not -16.
			name: "window across midnight",
			in: func() Input {
				in := article()
				in.Start, in.Due = 22*time.Hour, 6*time.Hour
				return in
			},
			check: func(t *testing.T, p Plan) {
				eq(t, "window", p.Window, 8*time.Hour)
				eq(t, "job deadline", p.JobDeadline, 7*time.Hour+30*time.Minute)
				if !p.CrossesMidnight {
					t.Error("not marked as crossing midnight")
				}
			},
		},
		{
			// 50,000 items at 200 rpm take 250 min, longer than the
			// workers' 2.8 h: the limit binds, and still fits 5.5 h.
			name: "rpm limit binds",
			in: func() Input {
				in := article()
				in.RPM = 200
				return in
			},
			check: func(t *testing.T, p Plan) {
				eq(t, "wall by rpm", p.Mean.WallByRPM, 250*time.Minute)
				eq(t, "wall", p.Mean.Wall, 250*time.Minute)
				eq(t, "wall by workers", p.Mean.WallByWorkers, 10_000*time.Second)
				if p.Mean.Bound != BoundRPM || !p.Mean.FitsDeadline || len(p.Warnings) != 0 {
					t.Errorf("bound %s, fits %v, warnings %q", p.Mean.Bound, p.Mean.FitsDeadline, p.Warnings)
				}
			},
		},
		{
			// 2,000 rpm allows the 50,000 items in 25 min: the workers bind.
			name: "rpm limit does not bind",
			in: func() Input {
				in := article()
				in.RPM = 2000
				return in
			},
			check: func(t *testing.T, p Plan) {
				eq(t, "wall", p.Mean.Wall, 10_000*time.Second)
				if p.Mean.Bound != BoundWorkers {
					t.Errorf("bound %s, want workers", p.Mean.Bound)
				}
			},
		},
		{
			// An rpm limit too low for the deadline: the warning gives the
			// rpm needed (50,000 items / 330 min = 152 rpm).
			name: "rpm limit misses the deadline",
			in: func() Input {
				in := article()
				in.RPM = 100
				return in
			},
			check: func(t *testing.T, p Plan) {
				if p.Mean.FitsDeadline || len(p.Warnings) == 0 || !strings.Contains(p.Warnings[0], "at least 152 rpm") {
					t.Errorf("fits %v, warnings %q", p.Mean.FitsDeadline, p.Warnings)
				}
			},
		},
		{
			// 10 workers need 40,000 s = 11.1 h: no fit, but a plan with
			// warnings, not an error; 400,000 s / 19,800 s needs 21 workers.
			name: "window too small",
			in: func() Input {
				in := article()
				in.Workers = 10
				return in
			},
			check: func(t *testing.T, p Plan) {
				if p.Mean.FitsDeadline || p.Mean.Slack >= 0 {
					t.Errorf("fits %v, slack %v", p.Mean.FitsDeadline, p.Mean.Slack)
				}
				if p.WorkersNeeded != 21 {
					t.Errorf("workers needed %d, want 21", p.WorkersNeeded)
				}
				all := strings.Join(p.Warnings, "\n")
				for _, want := range []string{"at least 21 workers", "about 25,250 items unprocessed", "does not fit its window"} {
					if !strings.Contains(all, want) {
						t.Errorf("warnings lack %q:\n%s", want, all)
					}
				}
			},
		},
		{
			// Fits the deadline but not the window's end minus nothing:
			// 5.6 h of wall clock in a 6 h window with a 5.5 h deadline.
			name: "fits the window but not the job deadline",
			in: func() Input {
				in := article()
				in.Mean = 16128 * time.Millisecond // 50,000 x 16.128 s / 40 = 5.6 h
				return in
			},
			check: func(t *testing.T, p Plan) {
				if p.Mean.FitsDeadline || p.Mean.Slack < 0 || len(p.Warnings) != 1 {
					t.Errorf("fits %v, slack %v, warnings %q", p.Mean.FitsDeadline, p.Mean.Slack, p.Warnings)
				}
			},
		},
		{
			// A measured run: the mean and p99 come from its histogram, and a
			// p99 of 20 s makes a bad night miss the deadline.
			name: "measured item time",
			in: func() Input {
				in := article()
				in.Mean = 0
				in.Measured = &Measured{Source: "run.json", Items: 5000, Mean: 8 * time.Second,
					P50: 7 * time.Second, P99: 20 * time.Second, Max: 31 * time.Second}
				return in
			},
			check: func(t *testing.T, p Plan) {
				eq(t, "work", p.Mean.Work, 400_000*time.Second)
				if p.P99 == nil {
					t.Fatal("no p99 scenario")
				}
				eq(t, "p99 wall", p.P99.Wall, 25_000*time.Second)
				if p.P99.FitsDeadline || len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "bad night") {
					t.Errorf("p99 fits %v, warnings %q", p.P99.FitsDeadline, p.Warnings)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Compute(c.in())
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, p)
		})
	}
}

func TestComputeBadInput(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Input)
		flag string
	}{
		{"no items", func(in *Input) { in.Items = 0 }, "--items"},
		{"no workers", func(in *Input) { in.Workers = 0 }, "--workers"},
		{"no mean", func(in *Input) { in.Mean = 0 }, "--mean"},
		{"negative margin", func(in *Input) { in.Margin = -time.Minute }, "--margin"},
		{"margin eats the window", func(in *Input) { in.Margin = 6 * time.Hour }, "--margin"},
		{"empty window", func(in *Input) { in.Due = in.Start }, "--due"},
		{"start out of the day", func(in *Input) { in.Start = 25 * time.Hour }, "--start"},
		{"negative rpm", func(in *Input) { in.RPM = -1 }, "--rpm"},
		{"negative retry allowance", func(in *Input) { in.RetryAllowance = -time.Second }, "--retry-allowance"},
		{"mean given twice", func(in *Input) { in.Measured = &Measured{Mean: time.Second} }, "--from"},
		{"overflow", func(in *Input) { in.Items = math.MaxInt64 / 2 }, "--items"},
	}
	for _, c := range cases {
		in := article()
		c.edit(&in)
		_, err := Compute(in)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.flag) {
			t.Errorf("%s: error %q does not name %s", c.name, err, c.flag)
		}
	}
}

func TestParseClock(t *testing.T) {
	good := map[string]time.Duration{
		"01:00": time.Hour, "7:00": 7 * time.Hour, "23:59": 23*time.Hour + 59*time.Minute, "00:00": 0, " 06:30 ": 6*time.Hour + 30*time.Minute,
	}
	for s, want := range good {
		got, err := ParseClock(s)
		if err != nil || got != want {
			t.Errorf("ParseClock(%q) = %v, %v; want %v", s, got, err, want)
		}
		if err == nil && FormatClock(got) != strings.TrimSpace(s) && s != "7:00" {
			t.Errorf("FormatClock(%v) = %q", got, FormatClock(got))
		}
	}
	for _, s := range []string{"", "24:00", "12:60", "1:5", "ab:cd", "+1:00", "1:-5", "0100", "1:00pm", "001:00"} {
		if _, err := ParseClock(s); err == nil {
			t.Errorf("ParseClock(%q) accepted", s)
		}
	}
}

func TestMeasuredFrom(t *testing.T) {
	h := histo.New()
	for i := range 1000 {
		h.Record(time.Duration(5000+i*6) * time.Millisecond) // 5 s .. 11 s, mean 8 s
	}
	m, err := report.Summarize("item", h)
	if err != nil {
		t.Fatal(err)
	}
	r := &report.Results{Schema: report.Schema, Paths: map[string]*report.Path{
		report.PathBatch: {Metrics: map[string]*report.Metric{"item": m}},
	}}
	got, err := MeasuredFrom(r, "run.json")
	if err != nil {
		t.Fatal(err)
	}
	if got.Items != 1000 || got.Source != "run.json" {
		t.Errorf("items %d source %q", got.Items, got.Source)
	}
	if d := got.Mean - 8*time.Second; d < -10*time.Millisecond || d > 10*time.Millisecond {
		t.Errorf("mean %v, want 8 s", got.Mean)
	}
	if d := got.P99 - 10940*time.Millisecond; d < -15*time.Millisecond || d > 15*time.Millisecond {
		t.Errorf("p99 %v, want about 10.94 s", got.P99)
	}

	stream := &report.Results{Schema: report.Schema, Paths: map[string]*report.Path{report.PathStream: {}}}
	if _, err := MeasuredFrom(stream, "s.json"); err == nil || !strings.Contains(err.Error(), "no batch path") {
		t.Errorf("stream-only results: %v", err)
	}
	noItem := &report.Results{Schema: report.Schema, Paths: map[string]*report.Path{report.PathBatch: {Metrics: map[string]*report.Metric{}}}}
	if _, err := MeasuredFrom(noItem, "b.json"); err == nil || !strings.Contains(err.Error(), "item") {
		t.Errorf("no item metric: %v", err)
	}
	bad := &report.Results{Schema: report.Schema, Paths: map[string]*report.Path{report.PathBatch: {Metrics: map[string]*report.Metric{"item": {HDR: "nope"}}}}}
	if _, err := MeasuredFrom(bad, "b.json"); err == nil {
		t.Error("bad hdr accepted")
	}
}

func TestWriteTableShowsTheArithmetic(t *testing.T) {
	p, err := Compute(article())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, p); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"50,000 items x 8 s", "400,000 s of work",
		"400,000 s / 40 workers", "10,000 s = 2.8 h of wall clock",
		"01:00 to 07:00", "6 h - 2.8 h", "3.2 h of slack",
		"6 h - 30 min margin", "5.5 h (stop at 06:30)",
		"50,000 items x 10 min retry allowance", "500,000 min = 8,333 h = 347.2 worker-days",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Warnings") || strings.Contains(out, "rpm") {
		t.Errorf("table of a plan that fits shows warnings or an rpm row:\n%s", out)
	}
}

func TestWriteTableWarnsAndMarksTheBound(t *testing.T) {
	in := article()
	in.RPM = 100
	in.Start, in.Due = 22*time.Hour, 4*time.Hour
	p, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, p); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"500 min = 8.3 h of wall clock (binds)", "22:00 to 04:00 (next day)", "Warnings:", "at least 152 rpm", "(stop at 03:30)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestWriteJSON(t *testing.T) {
	p, err := Compute(article())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, p); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, buf.String())
	}
	want := map[string]float64{
		"work_seconds":           400_000,
		"wall_seconds":           10_000,
		"window_seconds":         21_600,
		"slack_seconds":          11_600,
		"job_deadline_seconds":   19_800,
		"worst_case_worker_days": 347.2,
	}
	for k, v := range want {
		f, ok := got[k].(float64)
		if !ok || math.Abs(f-v) > 0.05 {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if got["bound"] != "workers" {
		t.Errorf("bound %v", got["bound"])
	}
}

func TestWriteReportsWriteErrors(t *testing.T) {
	p, err := Compute(article())
	if err != nil {
		t.Fatal(err)
	}
	if WriteTable(failWriter{}, p) == nil || WriteJSON(failWriter{}, p) == nil {
		t.Error("a write error was dropped")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, bytes.ErrTooLarge }

func TestFormat(t *testing.T) {
	cases := []struct{ got, want string }{
		{Thousands(0), "0"}, {Thousands(999), "999"}, {Thousands(1000), "1,000"},
		{Thousands(1234567), "1,234,567"}, {Thousands(-50000), "-50,000"},
		{Short(850 * time.Millisecond), "850 ms"}, {Short(8 * time.Second), "8 s"},
		{Short(8500 * time.Millisecond), "8.5 s"}, {Short(30 * time.Minute), "30 min"},
		{Short(5*time.Hour + 30*time.Minute), "5.5 h"},
		{Hours(10_000 * time.Second), "2.8 h"}, {Hours(6 * time.Hour), "6 h"},
		{Hours(-2 * time.Hour), "-2 h"}, {Hours(3 * time.Minute), "3 min"},
		{Seconds(400_000 * time.Second), "400,000 s"}, {Seconds(8 * time.Second), "8 s"},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: %q, want %q", i, c.got, c.want)
		}
	}
}

func eq(t *testing.T, what string, got, want time.Duration) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %v, want %v ± %v", what, got, want, tol)
	}
}
