package gate

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/tollgate-dev/tollgate/histo"
	"github.com/tollgate-dev/tollgate/report"
)

// Defaults of CompareOptions.
const (
	// DefaultMaxRegression is the --max-regression default: 10%.
	DefaultMaxRegression = 10.0
	// DefaultMinTail is how many samples must lie beyond a percentile, in
	// the smaller run, for it to be compared (see CompareOptions.MinTail).
	DefaultMinTail = 10
	// DefaultMinDelta is the smallest change of a duration that can be a
	// regression or an improvement.
	DefaultMinDelta = time.Millisecond
	// DefaultMaxErrorRateIncrease is how many percentage points the error
	// rate may rise before it is a regression.
	DefaultMaxErrorRateIncrease = 1.0
)

// CompareOptions tune Compare. The zero value of every field but
// MaxRegression means its default.
type CompareOptions struct {
	// MaxRegression is how much worse, in percent of the base value, a
	// percentile may get before it is a regression: 10 allows +10%. It is
	// taken as given (0 allows no worsening beyond MinDelta); use
	// DefaultMaxRegression when the user gave none.
	MaxRegression float64 `json:"max_regression_pct"`
	// MinTail is the least number of samples that must lie beyond a
	// percentile for it to be compared: percentile q of a run with n samples
	// is compared only when n*(1-q) >= MinTail in both runs. With the
	// default 10, p50 needs 20 samples, p90 100, p99 1,000 and p999 10,000.
	// Below that the percentile is the largest few samples — noise — and
	// the row says "too few samples" instead of passing or failing.
	MinTail int `json:"min_tail"`
	// MinDelta is the smallest change of a duration that can count: below
	// it (default 1 ms) a change is noise of the machine, not of the
	// target, whatever its percentage (a 0.1 ms connect that becomes
	// 0.2 ms is +100% and nothing).
	MinDelta time.Duration `json:"min_delta"`
	// MaxErrorRateIncrease is how many percentage points the error rate
	// may rise (default 1). A larger rise is a regression only when it is
	// also significant (a one-sided two-proportion z-test at 95%); a rise
	// that is not is reported as "too few samples".
	MaxErrorRateIncrease float64 `json:"max_error_rate_increase_pp"`
	// FailOn are --fail-on expressions to judge on the new run alongside
	// the comparison.
	FailOn []Expr `json:"fail_on,omitempty"`
	// BaseLabel and NewLabel name the two runs in output (file names);
	// "base" and "new" when empty.
	BaseLabel string `json:"base_label"`
	NewLabel  string `json:"new_label"`
}

// withDefaults fills the zero fields.
func (o CompareOptions) withDefaults() CompareOptions {
	if o.MinTail <= 0 {
		o.MinTail = DefaultMinTail
	}
	if o.MinDelta <= 0 {
		o.MinDelta = DefaultMinDelta
	}
	if o.MaxErrorRateIncrease <= 0 {
		o.MaxErrorRateIncrease = DefaultMaxErrorRateIncrease
	}
	if o.BaseLabel == "" {
		o.BaseLabel = "base"
	}
	if o.NewLabel == "" {
		o.NewLabel = "new"
	}
	return o
}

// Percentile is one compared percentile: Name as in the results file and
// Q in percent.
type Percentile struct {
	Name string
	Q    float64
	// per10k is Q in hundredths of a percent, for exact tail arithmetic.
	per10k int64
}

// ComparedPercentiles are the percentiles Compare compares. The max is not
// among them: it is one sample, never comparable; min and mean neither
// show a tail nor resist one outlier.
var ComparedPercentiles = []Percentile{
	{"p50", 50, 5000}, {"p90", 90, 9000}, {"p99", 99, 9900}, {"p999", 99.9, 9990},
}

// Status is a compared row's verdict.
type Status string

// Statuses of a Row. Only StatusRegression and StatusMissing are breaches.
const (
	StatusOK         Status = "ok"
	StatusImproved   Status = "improved"
	StatusRegression Status = "regression"
	// StatusTooFew: the percentile rests on too few samples (MinTail) or
	// an error-rate change is not significant; neither passed nor failed.
	StatusTooFew Status = "too_few_samples"
	// StatusNotJudged: the metric has no better or worse direction
	// (output_tokens); shown, never judged.
	StatusNotJudged Status = "not_judged"
	// StatusMissing: the base run measured it, the new run did not.
	StatusMissing Status = "missing"
	// StatusOnlyNew: the new run measured it, the base run did not.
	StatusOnlyNew Status = "only_in_new"
)

// Breach reports whether s fails the comparison.
func (s Status) Breach() bool { return s == StatusRegression || s == StatusMissing }

// Row compares one statistic of one metric on one path.
type Row struct {
	Path   string `json:"path"`
	Metric string `json:"metric"`
	// Stat is the percentile name ("p99"), or "rate" for errors.rate.
	Stat string `json:"stat"`
	// Unit of Base, New and Delta: "ms", "%" (error rate), or plain.
	Unit string  `json:"unit"`
	Base float64 `json:"base"`
	New  float64 `json:"new"`
	// BaseCount and NewCount are the samples (calls, for the error rate)
	// behind the two values.
	BaseCount int64 `json:"base_count"`
	NewCount  int64 `json:"new_count"`
	// BaseCI95 and NewCI95 are the 95% confidence intervals of Base and
	// New (percentiles only): a change is judged only when they do not
	// overlap.
	BaseCI95 [2]float64 `json:"base_ci95"`
	NewCI95  [2]float64 `json:"new_ci95"`
	// Delta is New - Base, in Unit (percentage points for the error rate).
	Delta float64 `json:"delta"`
	// ChangePct is Delta in percent of Base; 0 when Base is 0.
	ChangePct float64 `json:"change_pct"`
	Status    Status  `json:"status"`
	// Note says why a row is what it is, when the status alone does not.
	Note string `json:"note,omitempty"`
}

// RunInfo identifies one of the compared runs in output.
type RunInfo struct {
	Label   string    `json:"label"`
	Started time.Time `json:"started"`
	API     string    `json:"api"`
	Model   string    `json:"model"`
	Mode    string    `json:"mode"`
	Calls   int64     `json:"calls"`
}

// Comparison is the result of Compare: every compared row, the --fail-on
// verdicts on the new run, and warnings about runs that differ.
type Comparison struct {
	Options  CompareOptions `json:"options"`
	Base     RunInfo        `json:"base"`
	New      RunInfo        `json:"new"`
	Rows     []Row          `json:"rows"`
	Gates    []Verdict      `json:"gates,omitempty"`
	Warnings []string       `json:"warnings,omitempty"`
	// Breached is true when any row is a breach or any gate failed: exit 1.
	Breached bool `json:"breached"`
}

// Count returns how many rows have status s.
func (c *Comparison) Count(s Status) int {
	n := 0
	for _, r := range c.Rows {
		if r.Status == s {
			n++
		}
	}
	return n
}

// direction says which way a metric gets worse.
type direction int

const (
	higherIsWorse direction = iota
	lowerIsWorse
	noDirection
)

func directionOf(metric string) direction {
	switch metric {
	case histo.MetricTPS:
		return lowerIsWorse
	case histo.MetricOutputTokens:
		return noDirection
	}
	return higherIsWorse
}

// Compare compares the new run cur against base, path by path, metric by
// metric, percentile by percentile (ComparedPercentiles), and the error
// rate of each path, and judges opt.FailOn on cur.
//
// Percentiles are recomputed from the decoded HdrHistograms, not read from
// the rounded summaries (a file without histograms falls back to its
// summaries, and the row says so). A percentile is a regression when it
// is worse than base by more than opt.MaxRegression percent, by at least
// opt.MinDelta (durations), and by more than noise: the 95% confidence
// intervals of the two values (order statistics, distribution-free) do not
// overlap. It is an improvement when better by as much. It is "too few
// samples" when either run has fewer than opt.MinTail samples beyond it,
// or when the change exceeds the allowance but the intervals overlap. A metric the base run has and the new run lacks is a breach.
// Runs that differ in target, api, model, mode, load or clocks are still
// compared (comparing two models is a use), with a warning for each
// difference. The error is a histogram that does not decode.
func Compare(base, cur *report.Results, opt CompareOptions) (*Comparison, error) {
	opt = opt.withDefaults()
	c := &Comparison{
		Options:  opt,
		Base:     runInfo(opt.BaseLabel, base),
		New:      runInfo(opt.NewLabel, cur),
		Warnings: runDifferences(base, cur),
	}
	paths := map[string]bool{}
	for name := range base.Paths {
		paths[name] = true
	}
	for name := range cur.Paths {
		paths[name] = true
	}
	for _, name := range orderedPaths(paths) {
		rows, err := comparePath(name, base.Paths[name], cur.Paths[name], opt)
		if err != nil {
			return nil, err
		}
		c.Rows = append(c.Rows, rows...)
	}
	c.Gates = Evaluate(cur, opt.FailOn)
	for _, r := range c.Rows {
		c.Breached = c.Breached || r.Status.Breach()
	}
	c.Breached = c.Breached || AnyFailed(c.Gates)
	return c, nil
}

// comparePath compares one path's metrics and error rate; b or n may be
// nil when only one run has the path.
func comparePath(name string, b, n *report.Path, opt CompareOptions) ([]Row, error) {
	var rows []Row
	for _, metric := range orderedMetrics(b, n) {
		var bm, nm *report.Metric
		if b != nil {
			bm = b.Metrics[metric]
		}
		if n != nil {
			nm = n.Metrics[metric]
		}
		switch {
		case nm == nil:
			rows = append(rows, Row{Path: name, Metric: metric, Unit: report.MetricUnit(metric), BaseCount: bm.Count,
				Status: StatusMissing, Note: fmt.Sprintf("measured in %s, not in %s", opt.BaseLabel, opt.NewLabel)})
			continue
		case bm == nil:
			rows = append(rows, Row{Path: name, Metric: metric, Unit: report.MetricUnit(metric), NewCount: nm.Count,
				Status: StatusOnlyNew, Note: fmt.Sprintf("not measured in %s", opt.BaseLabel)})
			continue
		}
		mr, err := compareMetric(name, metric, bm, nm, opt)
		if err != nil {
			return nil, err
		}
		rows = append(rows, mr...)
	}
	if b != nil && n != nil {
		rows = append(rows, compareErrorRate(name, b, n, opt))
	}
	return rows, nil
}

// orderedMetrics lists the metrics of either path in histo.Metrics order,
// unknown names last, sorted.
func orderedMetrics(paths ...*report.Path) []string {
	seen := map[string]bool{}
	for _, p := range paths {
		if p == nil {
			continue
		}
		for m := range p.Metrics {
			seen[m] = true
		}
	}
	var out []string
	for _, m := range histo.Metrics {
		if seen[m] {
			out = append(out, m)
			delete(seen, m)
		}
	}
	return append(out, slices.Sorted(maps.Keys(seen))...)
}

// quantiles gives a metric's value at each compared percentile, and its
// 95% confidence interval, in its summary unit, from its histogram, or
// from its summary when it has none (the interval is then the value).
type quantiles struct {
	count    int64
	at       func(Percentile) float64
	interval func(Percentile) [2]float64
	summary  bool
}

func quantilesOf(path, metric, label string, m *report.Metric) (quantiles, error) {
	if m.HDR == "" {
		at := func(p Percentile) float64 { return stat(m, p.Name) }
		return quantiles{count: m.Count, summary: true, at: at,
			interval: func(p Percentile) [2]float64 { return [2]float64{at(p), at(p)} }}, nil
	}
	h, err := histo.Decode(m.HDR)
	if err != nil {
		return quantiles{}, fmt.Errorf("%s: paths.%s.metrics.%s.hdr: %w", label, path, metric, err)
	}
	scale := 1.0
	if report.IsDurationMetric(metric) {
		scale = 1000 // the histogram holds µs; rows are in ms
	}
	n := h.Count()
	atRank := func(r int64) float64 { return float64(h.Quantile(100*float64(r)/float64(n))) / scale }
	return quantiles{
		count: n,
		at:    func(p Percentile) float64 { return float64(h.Quantile(p.Q)) / scale },
		interval: func(p Percentile) [2]float64 {
			lo, hi := rankInterval(n, p.Q/100)
			return [2]float64{atRank(lo), atRank(hi)}
		},
	}, nil
}

// rankInterval is the distribution-free 95% confidence interval of
// quantile q of n samples, as ranks of order statistics: the true
// quantile lies between the samples of ranks nq ± 1.96·sqrt(nq(1-q))
// (the normal approximation to the binomial count of samples below it).
func rankInterval(n int64, q float64) (lo, hi int64) {
	if n <= 0 {
		return 0, 0
	}
	nq := float64(n) * q
	half := 1.96 * math.Sqrt(nq*(1-q))
	lo = max(1, int64(math.Floor(nq-half)))
	hi = min(n, int64(math.Ceil(nq+half))+1)
	return lo, hi
}

// compareMetric compares the percentiles of one metric.
func compareMetric(path, metric string, bm, nm *report.Metric, opt CompareOptions) ([]Row, error) {
	bq, err := quantilesOf(path, metric, opt.BaseLabel, bm)
	if err != nil {
		return nil, err
	}
	nq, err := quantilesOf(path, metric, opt.NewLabel, nm)
	if err != nil {
		return nil, err
	}
	unit := report.MetricUnit(metric)
	floor := 0.0
	if report.IsDurationMetric(metric) {
		floor = float64(opt.MinDelta) / float64(time.Millisecond)
	}
	dir := directionOf(metric)
	rows := make([]Row, 0, len(ComparedPercentiles))
	for _, p := range ComparedPercentiles {
		r := Row{
			Path: path, Metric: metric, Stat: p.Name, Unit: unit,
			Base: bq.at(p), New: nq.at(p), BaseCount: bq.count, NewCount: nq.count,
			BaseCI95: bq.interval(p), NewCI95: nq.interval(p),
		}
		r.Delta = r.New - r.Base
		if r.Base != 0 {
			r.ChangePct = 100 * r.Delta / r.Base
		}
		n := min(bq.count, nq.count)
		switch {
		case !enoughTail(n, p, opt.MinTail):
			r.Status = StatusTooFew
			r.Note = fmt.Sprintf("%d samples; %s needs %d for %d beyond it", n, p.Name, needed(p, opt.MinTail), opt.MinTail)
		case dir == noDirection:
			r.Status = StatusNotJudged
			r.Note = "neither more nor less is worse"
		default:
			r.Status, r.Note = judgeChange(r, dir, floor, opt.MaxRegression)
		}
		if bq.summary || nq.summary {
			r.Note = joinNote(r.Note, "from the summary: no histogram")
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// enoughTail reports n*(1-q) >= minTail, in exact integer arithmetic
// (1000*(1-0.999) is 0.9999999 in floating point).
func enoughTail(n int64, p Percentile, minTail int) bool {
	return n*(10000-p.per10k) >= int64(minTail)*10000
}

// needed is the least sample count with minTail samples beyond p.
func needed(p Percentile, minTail int) int64 {
	tail := 10000 - p.per10k
	return (int64(minTail)*10000 + tail - 1) / tail
}

// judgeChange decides regression, improvement or ok for a judged row. A
// change beyond maxPct (and floor) counts only when the two values' 95%
// confidence intervals do not overlap; otherwise the samples cannot tell
// it from noise and the row is "too few samples".
func judgeChange(r Row, dir direction, floor, maxPct float64) (Status, string) {
	worse, worsePct := r.Delta, r.ChangePct
	// worseApart: the new interval lies wholly on the worse side of the
	// base interval; betterApart: wholly on the better side.
	worseApart, betterApart := r.NewCI95[0] > r.BaseCI95[1], r.NewCI95[1] < r.BaseCI95[0]
	if dir == lowerIsWorse {
		worse, worsePct = -worse, -worsePct
		worseApart, betterApart = betterApart, worseApart
	}
	beyond := func(d, pct float64) bool {
		return d > 0 && d >= floor && (r.Base == 0 || pct > maxPct)
	}
	noise := func() string {
		return fmt.Sprintf("within noise: the 95%% intervals overlap (%s %s–%s, %s %s–%s)",
			"base", formatValue(r.BaseCI95[0], r.Unit), formatValue(r.BaseCI95[1], r.Unit),
			"new", formatValue(r.NewCI95[0], r.Unit), formatValue(r.NewCI95[1], r.Unit))
	}
	switch {
	case r.Base == 0 && r.New == 0:
		return StatusOK, ""
	case beyond(worse, worsePct) && !worseApart:
		return StatusTooFew, fmt.Sprintf("worse by %s%%, but %s", sig(math.Abs(worsePct)), noise())
	case beyond(worse, worsePct):
		if r.Base == 0 {
			return StatusRegression, "base was 0"
		}
		return StatusRegression, fmt.Sprintf("worse by %s%%, more than the %s%% allowed", sig(math.Abs(worsePct)), sig(maxPct))
	case beyond(-worse, -worsePct) && betterApart:
		return StatusImproved, ""
	case floor > 0 && math.Abs(r.Delta) < floor && math.Abs(r.ChangePct) > maxPct:
		return StatusOK, fmt.Sprintf("change under %s, below the noise floor", formatValue(floor, report.UnitMs))
	}
	return StatusOK, ""
}

// compareErrorRate compares the share of calls that did not end ok.
func compareErrorRate(path string, b, n *report.Path, opt CompareOptions) Row {
	r := Row{
		Path: path, Metric: "errors", Stat: "rate", Unit: "%",
		Base: ErrorRate(b), New: ErrorRate(n), BaseCount: b.Calls, NewCount: n.Calls,
	}
	r.Delta = r.New - r.Base
	if r.Base != 0 {
		r.ChangePct = 100 * r.Delta / r.Base
	}
	if b.Calls <= 0 || n.Calls <= 0 {
		r.Status, r.Note = StatusTooFew, "no calls"
		return r
	}
	z := twoProportionZ(b.Calls-b.Outcomes["ok"], b.Calls, n.Calls-n.Outcomes["ok"], n.Calls)
	// One-sided test at 95%: a rise is significant when z > 1.645.
	const z95 = 1.645
	switch {
	case r.Delta > opt.MaxErrorRateIncrease && z > z95:
		r.Status = StatusRegression
		r.Note = fmt.Sprintf("up %s points, more than the %s allowed", sig(r.Delta), sig(opt.MaxErrorRateIncrease))
	case r.Delta > opt.MaxErrorRateIncrease:
		r.Status = StatusTooFew
		r.Note = fmt.Sprintf("up %s points, but not significant at 95%% with these call counts", sig(r.Delta))
	case -r.Delta > opt.MaxErrorRateIncrease && z < -z95:
		r.Status = StatusImproved
	default:
		r.Status = StatusOK
	}
	return r
}

// twoProportionZ is the z statistic of the rise from e1/n1 to e2/n2 under
// the pooled null hypothesis that both come from one rate.
func twoProportionZ(e1, n1, e2, n2 int64) float64 {
	p1, p2 := float64(e1)/float64(n1), float64(e2)/float64(n2)
	p := float64(e1+e2) / float64(n1+n2)
	se := math.Sqrt(p * (1 - p) * (1/float64(n1) + 1/float64(n2)))
	if se == 0 {
		return 0
	}
	return (p2 - p1) / se
}

// joinNote joins two notes with "; ", either may be empty.
func joinNote(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// runInfo summarizes a run for output.
func runInfo(label string, r *report.Results) RunInfo {
	info := RunInfo{Label: label, Started: r.Run.Started, API: r.Run.API, Model: r.Run.Model, Mode: r.Run.Mode}
	for _, p := range r.Paths {
		info.Calls += p.Calls
	}
	return info
}

// runDifferences lists what differs between the runs' set-ups, which a
// reader must weigh before blaming the target.
func runDifferences(b, n *report.Results) []string {
	var out []string
	diffs := append(report.ProbeDifferences(b.Run, n.Run), report.LoadDifferences(b.Run, n.Run)...)
	for _, d := range diffs {
		out = append(out, fmt.Sprintf("runs differ in %s: %s (base) vs %s (new)", d.Field, d.A, d.B))
	}
	if b.Run.Interrupted || n.Run.Interrupted {
		out = append(out, "a run was interrupted: its results cover part of its load")
	}
	return out
}
