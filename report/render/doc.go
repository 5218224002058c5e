package render

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/histo"
	"github.com/tollgate-dev/tollgate/report"
)

// doc is the content shared by the table and markdown formats: a list of
// blocks that each format draws in its own way.
type doc struct {
	blocks []block
}

// block is one of heading, para, table, list or pre.
type block interface{ isBlock() }

// heading is a section title; level 1 is the report's title.
type heading struct {
	level int
	text  string
}

// tone says how a paragraph or list stands out.
type tone int

const (
	plain tone = iota
	notice
	alarm
)

// para is one paragraph of text.
type para struct {
	tone tone
	text string
}

// list is a bulleted list.
type list struct {
	tone  tone
	items []string
}

// table is a table with a header row; right holds the columns aligned
// right (numbers), wrap the column (if any, else -1) that wraps long text
// and width the total width the table should fit in a terminal.
type table struct {
	header []string
	right  []bool
	rows   [][]string
	wrap   int
	width  int
}

// pre is preformatted text (a text histogram).
type pre struct {
	title string
	lines []string
}

// chart is an inline SVG chart with a caption that says how to read it
// (HTML only).
type chart struct {
	svg     []byte
	caption string
}

func (heading) isBlock() {}
func (para) isBlock()    {}
func (list) isBlock()    {}
func (table) isBlock()   {}
func (pre) isBlock()     {}
func (chart) isBlock()   {}

func (d *doc) add(b ...block) { d.blocks = append(d.blocks, b...) }

// histogramMetrics are drawn as text histograms in the terminal: the two
// gap populations and ping masking only show in a distribution's shape.
var histogramMetrics = []string{histo.MetricGap, histo.MetricByteGap}

// buildDoc lays out everything the table and markdown formats show, for a
// terminal width columns wide (0: no limit, as in markdown and HTML). With
// charts (the HTML report) it draws SVG charts where the terminal has text
// histograms, and adds a table of the run's metadata.
func buildDoc(r *report.Results, width int, charts bool) (*doc, error) {
	d := &doc{}
	d.header(r, !charts)
	if charts {
		d.add(runTable(r))
	}
	for _, name := range pathNames(r.Paths) {
		if err := d.path(r, name, r.Paths[name], width, charts); err != nil {
			return nil, err
		}
	}
	if lag := r.Run.SchedulerLag; lag != nil && lag.Count > 0 {
		d.add(heading{2, "Scheduler lag"},
			para{plain, fmt.Sprintf("How far the open-loop pacer fell behind the intended starts (latencies count from the intended start): p50 %s ms, p99 %s ms, max %s ms over %d calls.",
				fmtMS(lag.P50), fmtMS(lag.P99), fmtMS(lag.Max), lag.Count)})
	}
	if r.Recommendation != nil {
		d.recommendation(r.Recommendation, width)
		if r.Paths[report.PathStream] != nil && r.Paths[report.PathBatch] != nil {
			d.twoPaths(r.Recommendation)
		}
	}
	return d, nil
}

// pathNames orders paths stream, batch, then any other by name.
func pathNames(paths map[string]*report.Path) []string {
	names := report.SortPaths(slices.Collect(maps.Keys(paths)))
	return slices.DeleteFunc(names, func(s string) bool { return paths[s] == nil })
}

// header adds the title, the simulated and interrupted notices and, with
// facts, the run's metadata as text (the HTML report has a table instead).
func (d *doc) header(r *report.Results, facts bool) {
	run := r.Run
	target := cmp.Or(run.Target, "(unknown target)")
	d.add(heading{1, "tollgate results: " + target})
	if run.Simulated {
		d.add(para{notice, fmt.Sprintf("SIMULATED: these calls went to tollgate's embedded simulator (profile %q) on loopback, not to a real provider. The numbers describe the simulator.",
			cmp.Or(run.SimProfile, "default"))})
	}
	if run.Interrupted {
		d.add(para{alarm, "INTERRUPTED: the run was stopped early; these results cover the calls completed before the interrupt."})
	}
	if !facts {
		return
	}
	var what []string
	for _, kv := range [][2]string{{"api", run.API}, {"model", run.Model}, {"mode", run.Mode}} {
		if kv[1] != "" {
			what = append(what, kv[0]+" "+kv[1])
		}
	}
	if l := loadText(run.Load); l != "" {
		what = append(what, l)
	}
	if len(what) > 0 {
		d.add(para{plain, strings.Join(what, " · ")})
	}
	if !run.Started.IsZero() {
		when := "started " + run.Started.UTC().Format(time.RFC3339)
		if el := runSeconds(run); el > 0 {
			when += fmt.Sprintf(", ran %s", fmtSeconds(el))
		}
		d.add(para{plain, when})
	}
	d.add(para{plain, "clocks: " + clocksText(run.Clocks)})
	if len(run.Shards) > 0 {
		d.add(para{plain, "merged shards: " + strings.Join(run.Shards, ", ")})
	}
}

// loadText describes the applied load in one phrase.
func loadText(l report.Load) string {
	var parts []string
	switch {
	case l.Rate > 0:
		parts = append(parts, fmt.Sprintf("open loop %s/s %s", fmtNum(l.Rate), cmp.Or(l.Arrival, "constant")))
	case l.Concurrency > 0:
		parts = append(parts, fmt.Sprintf("closed loop %d workers", l.Concurrency))
	}
	if l.Requests > 0 {
		parts = append(parts, fmt.Sprintf("%d requests", l.Requests))
	}
	if l.Duration > 0 {
		parts = append(parts, "for "+l.Duration.String())
	}
	if l.Warmup > 0 {
		parts = append(parts, fmt.Sprintf("%d warmup", l.Warmup))
	}
	if l.MaxTokens > 0 {
		parts = append(parts, fmt.Sprintf("max_tokens %d", l.MaxTokens))
	}
	if len(parts) > 0 || l.Seed != 0 {
		parts = append(parts, fmt.Sprintf("seed %d", l.Seed))
	}
	if l.Shard != "" {
		parts = append(parts, "shard "+l.Shard)
	}
	return strings.Join(parts, ", ")
}

// clocksText lists the eight clock settings, "off" for 0.
func clocksText(c report.Clocks) string {
	var parts []string
	for _, kv := range []struct {
		name string
		v    report.Duration
	}{
		{"connect", c.Connect}, {"head", c.Head}, {"head_batch", c.HeadBatch},
		{"first_token", c.FirstToken}, {"idle", c.Idle}, {"total", c.Total},
		{"ttft", c.TTFT}, {"gap", c.Gap},
	} {
		v := "off"
		if kv.v > 0 {
			v = kv.v.String()
		}
		parts = append(parts, kv.name+" "+v)
	}
	return strings.Join(parts, ", ")
}

// runSeconds is the run's wall-clock length in seconds, 0 when unknown.
func runSeconds(run report.Run) float64 {
	if run.Started.IsZero() || !run.Ended.After(run.Started) {
		return 0
	}
	return run.Ended.Sub(run.Started).Seconds()
}

func (d *doc) path(r *report.Results, name string, p *report.Path, width int, charts bool) error {
	calls := "calls"
	if p.Calls == 1 {
		calls = "call"
	}
	d.add(heading{2, fmt.Sprintf("%s path: %d %s", name, p.Calls, calls)})
	if t, ok := metricTable(p, width); ok {
		d.add(t)
	}
	if charts {
		svg, ok, err := spectrumChart(name, p.Metrics, r.Recommendation)
		if err != nil {
			return err
		}
		if ok {
			d.add(chart{svg, "Latency at each percentile on log axes: the x axis gives 90, 99, 99.9 ... equal room, so the tail reads as clearly as the median. A line ends at the highest percentile its sample count resolves. Dashed: the recommended deadline for that metric (ttft, total; batch head)."})
		}
	}
	if el := runSeconds(r.Run); el > 0 {
		s := fmt.Sprintf("throughput: %s calls/s", fmtRate(float64(p.Calls)/el))
		if tok := p.Metrics["output_tokens"]; tok != nil && tok.Count > 0 {
			s += fmt.Sprintf(", %s output tokens/s", fmtRate(tok.Mean*float64(tok.Count)/el))
		}
		d.add(para{plain, s + " over " + fmtSeconds(el) + "."})
	}
	if len(p.Outcomes) > 0 {
		d.add(outcomeTable(p, width))
		if charts {
			svg, ok, err := outcomeChart(name, p)
			if err != nil {
				return err
			}
			if ok {
				d.add(chart{svg, "Calls by outcome and the phase it ended in, on a log axis so that a few failures show beside many successes."})
			}
		}
	}
	if it := p.Items; it != nil {
		d.add(para{plain, fmt.Sprintf("items: %d total, %d done, %d failed, %d unprocessed.", it.Total, it.Done, it.Failed, it.Unprocessed)})
		if len(it.Outcomes) > 0 {
			rows := countRows(it.Outcomes, it.Total)
			d.add(table{header: []string{"item outcome", "count", "%"}, right: []bool{false, true, true}, rows: rows, wrap: -1, width: width})
		}
	}
	if charts {
		return d.gapCharts(name, p, r.Recommendation)
	}
	for _, m := range histogramMetrics {
		if h, ok := textHistogram(name, m, p.Metrics[m], r.Recommendation, cmp.Or(width, DefaultWidth)); ok {
			d.add(h)
		}
	}
	return nil
}

// gapCharts adds a path's gap histograms, on one shared x range.
func (d *doc) gapCharts(path string, p *report.Path, rec *report.Recommendation) error {
	var names []string
	var hs []*histo.Histogram
	for _, m := range histogramMetrics {
		if h := metricHistogram(p.Metrics[m]); h != nil {
			names, hs = append(names, m), append(hs, h)
		}
	}
	if len(hs) == 0 {
		return nil
	}
	lo, hi := gapRange(hs, rec)
	for i, h := range hs {
		svg, err := gapChart(path, names[i], h, rec, lo, hi)
		if err != nil {
			return err
		}
		d.add(chart{svg, gapCaptions[names[i]]})
	}
	return nil
}

// gapCaptions say how to read each gap chart.
var gapCaptions = map[string]string{
	histo.MetricGap: "Every gap between consecutive content deltas, in log-scale bins, counts on a log axis. " +
		"Where SplitLog finds two populations (token spacing and structural pauses such as thinking) they are blue and orange, the dashed line the valley between them. " +
		"The red line is the recommended gap deadline: a gap to its right would have ended the call.",
	histo.MetricByteGap: "Every gap between body reads that returned bytes, pings and comments included, on the same axes as the content gaps. " +
		"Where pings keep arriving, byte gaps stop at the ping interval while content gaps go on: a byte-level idle timeout cannot see a generation that stopped.",
}

// runTable lists the run's metadata, one row per fact.
func runTable(r *report.Results) table {
	run := r.Run
	t := table{header: []string{"run", ""}, right: []bool{false, false}, wrap: -1}
	add := func(k, v string) {
		if v != "" {
			t.rows = append(t.rows, []string{k, v})
		}
	}
	add("target", run.Target)
	if run.Simulated {
		add("simulated", "yes, profile "+cmp.Or(run.SimProfile, "default"))
	}
	add("api", run.API)
	add("model", run.Model)
	add("mode", run.Mode)
	add("load", loadText(run.Load))
	add("clocks", clocksText(run.Clocks))
	if !run.Started.IsZero() {
		add("started", run.Started.UTC().Format(time.RFC3339))
		add("ended", run.Ended.UTC().Format(time.RFC3339))
	}
	add("interrupted", fmt.Sprint(run.Interrupted))
	add("shards", strings.Join(run.Shards, ", "))
	add("tool", strings.TrimSpace(r.Tool.Name+" "+r.Tool.Version))
	return t
}

// metricTable is one row per metric: count, p50, p90, p99, p99.9, max.
func metricTable(p *report.Path, width int) (table, bool) {
	t := table{
		header: []string{"metric", "unit", "count", "p50", "p90", "p99", "p99.9", "max"},
		right:  []bool{false, false, true, true, true, true, true, true},
		wrap:   -1,
		width:  width,
	}
	for _, name := range metricNames(p.Metrics) {
		m := p.Metrics[name]
		f, unit := fmtNum, cmp.Or(m.Unit, report.MetricUnit(name), "count")
		if report.IsDurationMetric(name) {
			f, unit = fmtMS, report.UnitMs
		}
		t.rows = append(t.rows, []string{name, unit, fmt.Sprint(m.Count), f(m.P50), f(m.P90), f(m.P99), f(m.P999), f(m.Max)})
	}
	return t, len(t.rows) > 0
}

// metricNames orders metrics as SPEC §4 does, unknown ones last by name.
func metricNames(ms map[string]*report.Metric) []string {
	var names []string
	for _, n := range histo.Metrics {
		if ms[n] != nil {
			names = append(names, n)
		}
	}
	var rest []string
	for n, m := range ms {
		if m != nil && !report.IsKnownMetric(n) {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	return append(names, rest...)
}

// outcomeRow is one outcome class in one phase ("" when unrecorded).
type outcomeRow struct {
	class, phase string
	n            int64
}

// outcomeRows lists a path's outcomes by phase: ok first, then by count.
// Calls of a class whose phase was not recorded get a row with no phase.
func outcomeRows(p *report.Path) []outcomeRow {
	var rows []outcomeRow
	for _, c := range sortedCounts(p.Outcomes) {
		var sum int64
		for _, ph := range sortedCounts(p.Phases[c.name]) {
			rows = append(rows, outcomeRow{c.name, ph.name, ph.n})
			sum += ph.n
		}
		if rest := c.n - sum; rest > 0 || sum == 0 {
			rows = append(rows, outcomeRow{c.name, "", rest})
		}
	}
	return rows
}

// outcomeTable lists outcomes with their phase, count and share of calls.
func outcomeTable(p *report.Path, width int) table {
	t := table{
		header: []string{"outcome", "phase", "count", "%"},
		right:  []bool{false, false, true, true},
		wrap:   -1,
		width:  width,
	}
	for _, r := range outcomeRows(p) {
		t.rows = append(t.rows, []string{r.class, r.phase, fmt.Sprint(r.n), fmtPct(r.n, p.Calls)})
	}
	return t
}

type namedCount struct {
	name string
	n    int64
}

// sortedCounts orders a count map: "ok" first, then by count descending,
// then by name.
func sortedCounts(m map[string]int64) []namedCount {
	out := make([]namedCount, 0, len(m))
	for k, v := range m {
		out = append(out, namedCount{k, v})
	}
	slices.SortFunc(out, func(a, b namedCount) int {
		if (a.name == "ok") != (b.name == "ok") {
			if a.name == "ok" {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.name, b.name))
	})
	return out
}

func countRows(m map[string]int64, of int64) [][]string {
	var rows [][]string
	for _, c := range sortedCounts(m) {
		rows = append(rows, []string{c.name, fmt.Sprint(c.n), fmtPct(c.n, of)})
	}
	return rows
}
