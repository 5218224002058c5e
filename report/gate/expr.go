package gate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/histo"
	"github.com/tollgate-dev/tollgate/report"
)

// Kind is what an expression gates on.
type Kind int

// Kinds of expression.
const (
	// KindMetric gates a statistic of a metric: [PATH.]METRIC.STAT.
	KindMetric Kind = iota
	// KindErrorRate gates the share of calls whose outcome is not ok:
	// [PATH.]errors.rate.
	KindErrorRate
	// KindOutcome gates the count of one outcome class:
	// [PATH.]outcome.CLASS.count.
	KindOutcome
)

// Op is a comparison operator. An expression states the failure: the gate
// fails when "observed Op value" holds.
type Op string

// Operators of SPEC §5.
const (
	OpGT Op = ">"
	OpGE Op = ">="
	OpLT Op = "<"
	OpLE Op = "<="
)

// holds reports whether "a op b" is true.
func (o Op) holds(a, b float64) bool {
	switch o {
	case OpGT:
		return a > b
	case OpGE:
		return a >= b
	case OpLT:
		return a < b
	case OpLE:
		return a <= b
	}
	return false
}

// negation is the word for "not op" in a passing verdict ("<=" for ">").
func (o Op) negation() string {
	switch o {
	case OpGT:
		return "<="
	case OpGE:
		return "<"
	case OpLT:
		return ">="
	case OpLE:
		return ">"
	}
	return "?"
}

// Stats lists the statistics an expression may name, in the order of the
// results file.
var Stats = []string{"p50", "p90", "p95", "p99", "p999", "max", "min", "mean", "count"}

// Expr is one parsed --fail-on expression.
type Expr struct {
	// Text is the expression as written.
	Text string
	// Kind says which of Metric+Stat, errors.rate or Class is gated.
	Kind Kind
	// Path is "stream", "batch" or "" for every path that has the data.
	Path string
	// Metric and Stat are set for KindMetric ("ttft", "p99").
	Metric string
	Stat   string
	// Class is the outcome class of KindOutcome ("timeout.gap", "http.429").
	Class string
	// Op is the operator; the gate fails when "observed Op Value" holds.
	Op Op
	// Value is the threshold in the unit the observed value is compared in
	// (Unit): milliseconds for a duration statistic, percent for
	// errors.rate, and a plain number otherwise.
	Value float64
	// Unit is Value's unit: "ms", "%", or the metric's plain unit.
	Unit string
	// ValueText is the threshold as written ("2s", "1%").
	ValueText string
}

// String returns the expression as written.
func (e Expr) String() string { return e.Text }

// MarshalText writes the expression as written, so that JSON output shows
// the gate a user typed.
func (e Expr) MarshalText() ([]byte, error) { return []byte(e.Text), nil }

// subject is the left-hand side with path, as shown in verdicts:
// "stream.ttft.p99", "errors.rate", "batch.outcome.http.429.count".
func (e Expr) subject(path string) string {
	var s string
	switch e.Kind {
	case KindErrorRate:
		s = "errors.rate"
	case KindOutcome:
		s = "outcome." + e.Class + ".count"
	default:
		s = e.Metric + "." + e.Stat
	}
	if path != "" {
		return path + "." + s
	}
	return s
}

// outcomeClasses are the first components of SPEC §3's outcome classes.
var outcomeClasses = []string{"ok", "timeout", "http", "stream_error", "truncated", "protocol", "transport", "canceled"}

// ParseExpr parses one --fail-on expression of SPEC §5:
//
//	[PATH.]METRIC.STAT OP VALUE     stream.ttft.p99>2s, gap.p999 >= 150ms, batch.attempts.max > 3
//	[PATH.]errors.rate OP PCT       errors.rate>1%, stream.errors.rate > 0.5%
//	[PATH.]outcome.CLASS.count OP N outcome.timeout.gap.count>0, batch.outcome.http.429.count >= 10
//
// PATH is stream or batch; without it the gate applies to every path that
// has the data. STAT is one of Stats; OP one of > >= < <=, with optional
// whitespace around it. A duration statistic takes a Go duration (2s,
// 150ms, 1m, 1.5s) and refuses a bare number (is "2" seconds or ms?); a
// count statistic, a count metric (output_tokens, attempts, tps) and an
// outcome count take a plain number; errors.rate takes a percentage with
// "%". Errors quote the expression, name the bad part and say what is
// valid.
func ParseExpr(s string) (Expr, error) {
	e := Expr{Text: strings.TrimSpace(s)}
	fail := func(format string, a ...any) (Expr, error) {
		return Expr{}, fmt.Errorf("--fail-on %q: %s", s, fmt.Sprintf(format, a...))
	}
	i := strings.IndexAny(e.Text, "<>")
	if i < 0 {
		if j := strings.IndexAny(e.Text, "=!"); j >= 0 {
			k := j
			for k < len(e.Text) && strings.ContainsRune("=!", rune(e.Text[k])) {
				k++
			}
			return fail("operator %q is not supported: use one of > >= < <=", e.Text[j:k])
		}
		return fail("no operator: write SUBJECT OP VALUE with OP one of > >= < <=, e.g. stream.ttft.p99>2s")
	}
	e.Op = Op(e.Text[i : i+1])
	rest := e.Text[i+1:]
	if strings.HasPrefix(rest, "=") {
		e.Op += "="
		rest = rest[1:]
	}
	left, right := strings.TrimSpace(e.Text[:i]), strings.TrimSpace(rest)
	if strings.ContainsAny(right, "<>=") {
		return fail("more than one operator: write one SUBJECT OP VALUE per --fail-on")
	}
	if left == "" {
		return fail("nothing before %q: write e.g. stream.ttft.p99%s2s", e.Op, e.Op)
	}
	if right == "" {
		return fail("no value after %q: write e.g. %s%s2s", e.Op, left, e.Op)
	}
	e.ValueText = right
	if err := e.parseSubject(left); err != nil {
		return fail("%v", err)
	}
	if err := e.parseValue(right); err != nil {
		return fail("%v", err)
	}
	return e, nil
}

// parseSubject fills Kind, Path, Metric, Stat and Class from the left-hand
// side.
func (e *Expr) parseSubject(left string) error {
	parts := strings.Split(left, ".")
	for _, p := range parts {
		if p == "" || strings.ContainsAny(p, " \t") {
			return fmt.Errorf("subject %q is malformed: write [PATH.]METRIC.STAT, errors.rate or outcome.CLASS.count", left)
		}
	}
	if parts[0] == report.PathStream || parts[0] == report.PathBatch {
		e.Path, parts = parts[0], parts[1:]
		if len(parts) == 0 {
			return fmt.Errorf("subject %q names a path but no metric: write e.g. %s.ttft.p99", left, e.Path)
		}
	}
	switch parts[0] {
	case "errors":
		if len(parts) != 2 || parts[1] != "rate" {
			return fmt.Errorf("subject %q: the errors gate is errors.rate (e.g. errors.rate>1%%)", left)
		}
		e.Kind = KindErrorRate
		e.Unit = "%"
		return nil
	case "outcome":
		if len(parts) < 3 || parts[len(parts)-1] != "count" {
			return fmt.Errorf("subject %q: an outcome gate is outcome.CLASS.count (e.g. outcome.timeout.gap.count>0)", left)
		}
		e.Kind = KindOutcome
		e.Class = strings.Join(parts[1:len(parts)-1], ".")
		if !slices.Contains(outcomeClasses, parts[1]) {
			return fmt.Errorf("unknown outcome class %q: classes start with one of %s (e.g. timeout.gap, http.429)", e.Class, strings.Join(outcomeClasses, " "))
		}
		return nil
	}
	if len(parts) == 1 {
		if report.IsKnownMetric(parts[0]) {
			return fmt.Errorf("subject %q has no statistic: write %s.p99 (stats: %s)", left, parts[0], strings.Join(Stats, " "))
		}
		return fmt.Errorf("unknown metric %q: use one of %s", parts[0], strings.Join(histo.Metrics, " "))
	}
	if len(parts) != 2 {
		if !report.IsKnownMetric(parts[0]) && report.IsKnownMetric(parts[1]) {
			return fmt.Errorf("unknown path %q: use %s or %s", parts[0], report.PathStream, report.PathBatch)
		}
		return fmt.Errorf("subject %q is malformed: write [PATH.]METRIC.STAT, e.g. stream.ttft.p99", left)
	}
	e.Kind = KindMetric
	e.Metric, e.Stat = parts[0], parts[1]
	if !report.IsKnownMetric(e.Metric) {
		return fmt.Errorf("unknown metric %q: use one of %s", e.Metric, strings.Join(histo.Metrics, " "))
	}
	if !slices.Contains(Stats, e.Stat) {
		return fmt.Errorf("unknown stat %q: use one of %s", e.Stat, strings.Join(Stats, " "))
	}
	return nil
}

// parseValue reads the threshold in the unit that Kind, Metric and Stat
// call for.
func (e *Expr) parseValue(v string) error {
	switch {
	case e.Kind == KindErrorRate:
		num, ok := strings.CutSuffix(v, "%")
		if !ok {
			return fmt.Errorf("value %q: errors.rate takes a percentage such as 1%% or 0.5%%", v)
		}
		f, err := parseNumber(strings.TrimSpace(num))
		if err != nil || f > 100 {
			return fmt.Errorf("value %q: errors.rate takes a percentage from 0%% to 100%%, such as 1%% or 0.5%%", v)
		}
		e.Value = f
		return nil
	case e.Kind == KindOutcome || e.Stat == "count":
		f, err := parseNumber(v)
		if err != nil {
			return fmt.Errorf("value %q: a count takes a plain number such as 10", v)
		}
		e.Value, e.Unit = f, ""
		return nil
	case report.IsDurationMetric(e.Metric):
		d, err := time.ParseDuration(v)
		if err != nil {
			if _, nerr := parseNumber(v); nerr == nil {
				return fmt.Errorf("value %q for %s.%s needs a unit: write e.g. %sms or %ss", v, e.Metric, e.Stat, v, v)
			}
			return fmt.Errorf("value %q for %s.%s is not a duration: write e.g. 2s, 150ms or 1m", v, e.Metric, e.Stat)
		}
		if d < 0 {
			return fmt.Errorf("value %q: a duration cannot be negative", v)
		}
		e.Value = float64(d) / float64(time.Millisecond)
		e.Unit = report.UnitMs
		return nil
	default:
		f, err := parseNumber(v)
		if err != nil {
			return fmt.Errorf("value %q: %s is a number (%s), not a duration: write a plain number such as 500", v, e.Metric, report.MetricUnit(e.Metric))
		}
		e.Value, e.Unit = f, report.MetricUnit(e.Metric)
		return nil
	}
}

// parseNumber reads a finite, non-negative decimal number.
func parseNumber(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("not a number: %w", err)
	}
	if f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return f, nil
}

// ParsePercent reads a percentage for --max-regression: "10", "10%" or
// "2.5%" are 10, 10 and 2.5. It refuses negative numbers.
func ParsePercent(s string) (float64, error) {
	num := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	f, err := parseNumber(num)
	if err != nil {
		return 0, fmt.Errorf("percentage %q: want a number such as 10 or 10%%", s)
	}
	return f, nil
}
