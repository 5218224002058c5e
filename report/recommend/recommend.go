// Package recommend turns a run's histograms into the route timeouts a
// gateway should run with, and shows why each number is right.
//
// A deadline is a classifier with two ways to be wrong (002): too low and it
// kills healthy calls, too high and it notices a dead one late. Every
// recommended value therefore comes with its evidence (report.Rationale):
// the percentile and multiple it came from, how many of the N healthy calls
// measured it would have killed, a 95% upper bound on its false-kill rate
// given N (the rule of three when none were killed), and how long a stall
// goes unnoticed under it. Diagnoses that the numbers alone do not show —
// ping masking, intermediaries that cut silent calls, a mixed-mode route, a
// deadline at or below a percentile it should clear, too few calls — come
// back as warnings with their numbers.
//
// # Healthy calls
//
// The results file holds, for each metric, a histogram of every call that
// completed the phase the metric measures (a ttft is recorded when the
// first content delta arrives, a max_gap only from gaps that ended in a
// delta). A call that completed a phase was healthy in that phase, whatever
// happened to it later, and a call that died inside it is not in the
// histogram. So the N of each rationale ("of") is the count of the histogram
// the setting is judged on, and would_have_killed is the number of those
// values strictly above the setting (histo.CountAbove) — exact to the
// histogram's 0.1% buckets. What the histograms cannot hold is a healthy
// call that the run's own clock cut; that is diagnosed from the run's
// clocks and outcomes (see the censoring warning).
//
// # The rules
//
// See Policy, Rule and DefaultPolicy for each setting's rule and the seeds
// its defaults reproduce.
package recommend

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/histo"
	"github.com/tollgate-dev/tollgate/report"
	"github.com/tollgate-dev/tollgate/report/plan"
	"github.com/tollgate-dev/tollgate/report/routes"
)

// Setting names, as the route config writes the keys.
const (
	SettingConnect    = "timeouts.connect"
	SettingFirstToken = "timeouts.first_token"
	SettingIdle       = "timeouts.idle"
	SettingTotal      = "timeouts.total"
	SettingTTFT       = "stream.ttft"
	SettingGap        = "stream.gap"
	// SettingHead is the results file's batch.head, which the route
	// config writes as non_streaming.head.
	SettingHead        = "batch.head"
	SettingItemCeiling = "batch.item_ceiling"
	SettingAttempts    = "batch.attempts"
	SettingRetryBudget = "batch.retry_budget"
	SettingJobDeadline = "batch.job_deadline"
)

// Recommend derives the route timeouts r's measurements justify under p.
// It needs at least one path with calls that reached the target; a path
// that is missing leaves its settings out, with a warning. The result
// always passes routes validation (check-config); Recommend checks that
// before it returns.
func Recommend(r *report.Results, p Policy) (*report.Recommendation, error) {
	if r == nil {
		return nil, errors.New("recommend: no results")
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("recommend: policy: %w", err)
	}
	m, err := load(r)
	if err != nil {
		return nil, fmt.Errorf("recommend: %w", err)
	}
	if !m.stream && !m.batch {
		return nil, errors.New("recommend: no path has calls that reached the target; nothing to recommend from")
	}
	b := &builder{p: p, m: m, rec: &report.Recommendation{Rationale: []report.Rationale{}, Warnings: []string{}},
		judged: map[string]*histo.Histogram{}}
	b.derive()
	b.diagnose()
	if err := ToRoutes(b.rec, "default").Validate(); err != nil {
		return nil, fmt.Errorf("recommend: the recommendation does not pass check-config: %w", err)
	}
	return b.rec, nil
}

// measured holds the decoded histograms of one results file.
type measured struct {
	r               *report.Results
	stream, batch   bool
	streamH, batchH map[string]*histo.Histogram
}

// h returns the path's histogram of metric, or nil when it has none.
func (m *measured) h(path, metric string) *histo.Histogram {
	set := m.streamH
	if path == report.PathBatch {
		set = m.batchH
	}
	if h := set[metric]; h != nil && h.Count() > 0 {
		return h
	}
	return nil
}

// both merges a metric over the two paths (exact: one geometry).
func (m *measured) both(metric string) *histo.Histogram {
	a, b := m.h(report.PathStream, metric), m.h(report.PathBatch, metric)
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	out := a.Clone()
	out.Merge(b)
	return out
}

// used are the metrics the rules and diagnoses read; only these are
// decoded (each dense histogram is about 230 KB).
var used = map[string]bool{
	histo.MetricConnect: true, histo.MetricHead: true, histo.MetricFirstByte: true, histo.MetricTTFT: true,
	histo.MetricGap: true, histo.MetricMaxGap: true, histo.MetricMaxByteGap: true, histo.MetricTotal: true,
	histo.MetricItem: true, histo.MetricAttempts: true,
}

func load(r *report.Results) (*measured, error) {
	m := &measured{r: r, streamH: map[string]*histo.Histogram{}, batchH: map[string]*histo.Histogram{}}
	for _, path := range []string{report.PathStream, report.PathBatch} {
		pp := r.Paths[path]
		if pp == nil {
			continue
		}
		set := m.streamH
		if path == report.PathBatch {
			set = m.batchH
		}
		for name, met := range pp.Metrics {
			if met == nil || met.HDR == "" || !used[name] {
				continue
			}
			h, err := met.Histogram()
			if err != nil {
				return nil, fmt.Errorf("paths.%s.metrics.%s: %w", path, name, err)
			}
			set[name] = h
		}
		// A path counts when some call got as far as a connection.
		reached := m.h(path, histo.MetricConnect) != nil || m.h(path, histo.MetricHead) != nil || m.h(path, histo.MetricTotal) != nil
		if path == report.PathStream {
			m.stream = reached
		} else {
			m.batch = reached
		}
	}
	return m, nil
}

// builder accumulates one recommendation.
type builder struct {
	p   Policy
	m   *measured
	rec *report.Recommendation
	// judged maps a setting to the histogram its kills were counted on.
	judged map[string]*histo.Histogram
}

// derivation is one setting's number and how it came about.
type derivation struct {
	value time.Duration
	// steps read like "2 x p99 ttft (2.1s)", "at least ...": short, for a
	// table column; the value itself is rounded up (histo.RoundUpHuman).
	steps []string
}

// rule applies r to h: max(Floor, Multiple x Percentile), not yet rounded.
func rule(r Rule, h *histo.Histogram, metric string) derivation {
	var d derivation
	if h != nil {
		q := h.QuantileDuration(r.Percentile)
		d.value = time.Duration(math.Ceil(r.Multiple * float64(q)))
		d.steps = append(d.steps, fmt.Sprintf("%s x %s %s (%s)", num(r.Multiple), pctName(r.Percentile), metric, human(q)))
	}
	if r.Floor > 0 && d.value < r.Floor {
		if h != nil {
			d.steps = append(d.steps, "floor "+human(r.Floor))
		} else {
			d.steps = append(d.steps, fmt.Sprintf("floor %s (no %s measured)", human(r.Floor), metric))
		}
		d.value = r.Floor
	}
	return d
}

// atLeast raises d to v when v is larger, saying what v is.
func (d *derivation) atLeast(v time.Duration, what string) {
	if v > d.value {
		d.value = v
		d.steps = append(d.steps, "at least "+what)
	}
}

// round rounds d up to a number a person writes.
func (d *derivation) round() time.Duration {
	d.value = histo.RoundUpHuman(d.value)
	return d.value
}

func (d *derivation) basis() string { return strings.Join(d.steps, "; ") }

// derive computes every setting in dependency order: the streaming bounds
// first, then the head wait that must not be below them, then first_token
// (which on a mixed route must wait for the head), then the caps that must
// clear what is spent inside them.
func (b *builder) derive() {
	p, m, rec := b.p, b.m, b.rec
	stream, batch := report.PathStream, report.PathBatch

	connectH := m.both(histo.MetricConnect)
	connect := rule(p.Connect, connectH, "connect")
	rec.Timeouts.Connect = report.Duration(connect.round())

	var ftStream derivation
	var ftH *histo.Histogram
	if m.stream {
		ftH = m.h(stream, histo.MetricFirstByte)
		ftStream = rule(p.FirstToken, ftH, "stream first_byte")
		ftStream.round()

		ttftH := m.h(stream, histo.MetricTTFT)
		if ttftH != nil {
			ttft := rule(p.TTFT, ttftH, "ttft")
			rec.Stream.TTFT = report.Duration(ttft.round())
			b.explain(SettingTTFT, ttft, ttftH, true)
		} else {
			b.warnf("stream.ttft not recommended: no stream call received a content delta")
		}
		b.gap()
	} else {
		b.warnf("stream.ttft and stream.gap not recommended: no stream calls measured (probe --mode both or stream)")
	}

	var head derivation
	if m.batch {
		completion := m.h(batch, histo.MetricTotal)
		head = rule(p.NonStreamingHead, completion, "batch total")
		head.atLeast(ftStream.value, fmt.Sprintf("first_token %s (ADR-0036 D3)", human(ftStream.value)))
		rec.Batch.Head = report.Duration(head.round())
		b.explain(SettingHead, head, m.h(batch, histo.MetricHead), true)
	} else {
		b.warnf("non_streaming.head and the batch settings not recommended: no batch calls measured (probe --mode both or batch)")
	}

	// first_token: from the streams' first body byte; on a route that also
	// serves non-streaming calls, whose first body byte is the whole
	// answer, at least the head wait (ADR 0016's consequence).
	ft := ftStream
	judged := ftH
	if m.batch {
		if !m.stream {
			ft = derivation{}
		}
		ft.atLeast(time.Duration(rec.Batch.Head), fmt.Sprintf("non_streaming.head %s (mixed route, ADR 0016)", human(time.Duration(rec.Batch.Head))))
		judged = m.both(histo.MetricFirstByte)
	}
	if ft.value == 0 {
		ft = derivation{value: time.Second, steps: []string{"1s: no first body byte measured"}}
	}
	rec.Timeouts.FirstToken = report.Duration(ft.round())
	b.explain(SettingConnect, connect, connectH, true)
	b.explain(SettingFirstToken, ft, judged, true)

	idleH := m.both(histo.MetricMaxByteGap)
	idle := rule(p.Idle, idleH, "max_byte_gap")
	rec.Timeouts.Idle = report.Duration(idle.round())
	b.explain(SettingIdle, idle, idleH, true)

	if m.batch {
		b.batchSettings(connect.value)
	}

	b.total()
	b.order()
}

// gap sets stream.gap above every structural pause, judged per call.
func (b *builder) gap() {
	m := b.m
	maxGap := m.h(report.PathStream, histo.MetricMaxGap)
	if maxGap == nil {
		b.warnf("stream.gap not recommended: no stream call had two content deltas")
		return
	}
	g := rule(b.p.Gap, maxGap, "max_gap")
	var split string
	if gaps := m.h(report.PathStream, histo.MetricGap); gaps != nil {
		if s, ok := histo.SplitLog(gaps); ok {
			// Why the basis is the upper population and not the p99 of all
			// gaps: a deadline near token spacing classifies every pause as
			// death. Say what it would have cost, per call.
			tokenP99 := time.Duration(s.Lower.P99) * time.Microsecond
			split = fmt.Sprintf("pauses %s–%s above a %s split; 2 x token p99 (%s) kills %d/%d",
				human(time.Duration(s.Upper.Min)*time.Microsecond), human(time.Duration(s.Upper.Max)*time.Microsecond),
				human(time.Duration(s.At)*time.Microsecond), human(2*tokenP99),
				maxGap.CountAbove(int64(2*tokenP99/time.Microsecond)), maxGap.Count())
		} else {
			b.warnf("stream.gap: the gaps are one population (no structural pauses: no thinking, tool use or provider batching in this run); %s is above token spacing only — if the route serves extended thinking or tools, measure prompts that use them",
				routes.FormatDuration(histo.RoundUpHuman(g.value)))
		}
	}
	b.rec.Stream.Gap = report.Duration(g.round())
	if split != "" {
		g.steps = append(g.steps, split)
	}
	b.explain(SettingGap, g, maxGap, true)
}

// batchSettings sets the item ceiling, attempts, retry budget and job
// deadline.
func (b *builder) batchSettings(connect time.Duration) {
	p, m, rec := b.p, b.m, b.rec
	batch := report.PathBatch
	head := time.Duration(rec.Batch.Head)

	ceil := derivation{value: time.Duration(math.Ceil(p.Batch.ItemCeilingMultiple * float64(head)))}
	ceil.steps = []string{fmt.Sprintf("%s x non_streaming.head (%s)", num(p.Batch.ItemCeilingMultiple), human(head))}
	inside := connect + head
	ceil.atLeast(inside+routes.Clearance(inside), fmt.Sprintf("connect + head (%s) + %s margin", human(inside), human(routes.Clearance(inside))))
	rec.Batch.ItemCeiling = report.Duration(ceil.round())
	b.explain(SettingItemCeiling, ceil, m.h(batch, histo.MetricTotal), true)

	rec.Batch.Attempts = p.Batch.Attempts
	att := m.h(batch, histo.MetricAttempts)
	r := report.Rationale{Setting: SettingAttempts, Value: fmt.Sprint(p.Batch.Attempts),
		Basis: fmt.Sprintf("policy %d (002)", p.Batch.Attempts)}
	if att != nil {
		r.Basis += fmt.Sprintf("; items took at most %d", att.Max())
		r.Of = att.Count()
		r.WouldHaveKilled = att.CountAbove(int64(p.Batch.Attempts))
	}
	if items := m.r.Paths[batch].Items; items != nil && items.Failed > 0 {
		r.Basis += fmt.Sprintf("; %d of %d items failed", items.Failed, items.Total)
	}
	r.FalseKillUpper95 = histo.UpperBound95(r.WouldHaveKilled, r.Of)
	rec.Rationale = append(rec.Rationale, r)

	item := m.h(batch, histo.MetricItem)
	rb := derivation{value: p.Batch.RetryBudget, steps: []string{"policy " + human(p.Batch.RetryBudget) + " (002)"}}
	if item != nil && p.Batch.RetryBudgetMultiple > 0 {
		longest := item.QuantileDuration(100)
		rb.atLeast(time.Duration(math.Ceil(p.Batch.RetryBudgetMultiple*float64(longest))),
			fmt.Sprintf("%s x max item (%s)", num(p.Batch.RetryBudgetMultiple), human(longest)))
	}
	rec.Batch.RetryBudget = report.Duration(rb.round())
	// Judged on item (first attempt to final outcome, waits included): an
	// item that took longer than the budget would have run out of it. It
	// overstates the kills — the item time includes the calls themselves,
	// not only the waiting — so the count is an upper bound.
	b.explain(SettingRetryBudget, rb, item, false)

	if p.Window != nil {
		b.jobDeadline()
	}
}

// jobDeadline is 002's arithmetic: the window less the margin; with the
// job's items and workers, `tollgate plan`'s whole plan at the measured
// item time, whose warnings (a job that cannot finish) become ours.
func (b *builder) jobDeadline() {
	w := b.p.Window
	window, job, _ := w.deadline() // validated with the policy
	ceil := time.Duration(b.rec.Batch.ItemCeiling)
	if need := ceil + routes.Clearance(ceil); job < need {
		b.warnf("batch.job_deadline not recommended: the window %s to %s less %s leaves %s, less than one item under batch.item_ceiling %s and a margin (%s)",
			w.Start, w.Due, human(w.Margin), human(job), routes.FormatDuration(ceil), human(need))
		return
	}
	b.rec.Batch.JobDeadline = report.Duration(job)
	r := report.Rationale{Setting: SettingJobDeadline, Value: routes.FormatDuration(job),
		Basis: fmt.Sprintf("window %s to %s (%s) less %s to spare", w.Start, w.Due, human(window), human(w.Margin))}
	defer func() { b.rec.Rationale = append(b.rec.Rationale, r) }()
	if w.Items <= 0 || w.Workers <= 0 {
		return
	}
	measured, err := plan.MeasuredFrom(b.m.r, "the run")
	if err != nil {
		b.warnf("batch.job_deadline: cannot check that %d items fit: %v", w.Items, err)
		return
	}
	start, _ := plan.ParseClock(w.Start)
	due, _ := plan.ParseClock(w.Due)
	pl, err := plan.Compute(plan.Input{Items: w.Items, Workers: w.Workers, Start: start, Due: due, Margin: w.Margin,
		RetryAllowance: time.Duration(b.rec.Batch.RetryBudget), Measured: measured})
	if err != nil {
		b.warnf("batch.job_deadline: cannot check that %d items fit: %v", w.Items, err)
		return
	}
	r.Basis += fmt.Sprintf("; %d items x %s / %d workers = %s of wall clock", w.Items, human(pl.Mean.ItemTime), w.Workers, human(pl.Mean.Wall))
	for _, pw := range pl.Warnings {
		b.warnf("batch.job_deadline (tollgate plan): %s", pw)
	}
}

// total sets timeouts.total from the tail of total and raises it to clear
// every bound spent inside it by a whole margin (routes.Clearance).
func (b *builder) total() {
	rec := b.rec
	h := b.m.both(histo.MetricTotal)
	t := rule(b.p.Total, h, "total")
	connect, ft := time.Duration(rec.Timeouts.Connect), time.Duration(rec.Timeouts.FirstToken)
	// A bound that is not recommended (0) adds only connect, which the
	// first entry already covers.
	for _, in := range []struct {
		what  string
		bound time.Duration
	}{
		{"connect + first_token", connect + ft},
		{"stream.ttft", time.Duration(rec.Stream.TTFT)},
		{"connect + non_streaming.head", connect + time.Duration(rec.Batch.Head)},
	} {
		t.atLeast(in.bound+routes.Clearance(in.bound), fmt.Sprintf("%s (%s) + %s margin", in.what, human(in.bound), human(routes.Clearance(in.bound))))
	}
	t.atLeast(time.Duration(rec.Batch.ItemCeiling), "batch.item_ceiling "+human(time.Duration(rec.Batch.ItemCeiling)))
	rec.Timeouts.Total = report.Duration(t.round())
	b.explain(SettingTotal, t, h, true)
}

// explain appends the rationale of a duration setting judged on h.
func (b *builder) explain(setting string, d derivation, h *histo.Histogram, detects bool) {
	r := report.Rationale{Setting: setting, Value: routes.FormatDuration(d.value), Basis: d.basis()}
	if h != nil {
		r.Of = h.Count()
		r.WouldHaveKilled = h.CountAbove(int64(d.value / time.Microsecond))
		b.judged[setting] = h
	}
	r.FalseKillUpper95 = histo.UpperBound95(r.WouldHaveKilled, r.Of)
	if detects {
		r.DetectsStallIn = report.Duration(d.value)
	}
	b.rec.Rationale = append(b.rec.Rationale, r)
}

// order sorts the rationale as the route config writes the keys.
func (b *builder) order() {
	rank := map[string]int{}
	for i, s := range []string{SettingConnect, SettingFirstToken, SettingIdle, SettingTotal, SettingTTFT, SettingGap,
		SettingHead, SettingItemCeiling, SettingAttempts, SettingRetryBudget, SettingJobDeadline} {
		rank[s] = i
	}
	rs := b.rec.Rationale
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && rank[rs[j].Setting] < rank[rs[j-1].Setting]; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

func (b *builder) warnf(format string, a ...any) {
	b.rec.Warnings = append(b.rec.Warnings, fmt.Sprintf(format, a...))
}

// human writes a measured duration to three significant digits, as a
// person reads it: "2.1s", "406ms", "25.8s", "1m17.5s".
func human(d time.Duration) string {
	if d <= 0 {
		return routes.FormatDuration(d)
	}
	unit := time.Duration(1)
	for v := d; v >= 1000; v /= 10 {
		unit *= 10
	}
	return routes.FormatDuration(d.Round(unit))
}

// num writes a multiple without trailing zeros: 2, 3.5.
func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// pctName writes a percentile as the tables do: p99, p99.9, max.
func pctName(p float64) string {
	if p >= 100 {
		return "max"
	}
	return "p" + strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", p), "0"), ".")
}
