package gate

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// Headline is the one-line outcome of a comparison, as the first line of
// every rendering: "REGRESSION: ..." or "OK: ...".
func (c *Comparison) Headline() string {
	regressions, missing := c.Count(StatusRegression), c.Count(StatusMissing)
	failedGates := 0
	for _, g := range c.Gates {
		if g.Failed {
			failedGates++
		}
	}
	judged := len(c.Rows) - c.Count(StatusTooFew) - c.Count(StatusNotJudged) - c.Count(StatusOnlyNew)
	if !c.Breached {
		s := fmt.Sprintf("OK: nothing worse than %s by more than %s%% (%d compared", c.Options.BaseLabel, sig(c.Options.MaxRegression), judged)
		if n := c.Count(StatusTooFew); n > 0 {
			s += fmt.Sprintf(", %d with too few samples to judge", n)
		}
		s += ")"
		if len(c.Gates) > 0 {
			s += fmt.Sprintf("; %d %s held", len(c.Gates), plural(len(c.Gates), "gate", "gates"))
		}
		return s
	}
	var parts []string
	if regressions > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d compared %s worse than %s by more than allowed", regressions, judged, plural(judged, "value", "values"), c.Options.BaseLabel))
	}
	if missing > 0 {
		parts = append(parts, fmt.Sprintf("%d %s measured in %s missing in %s", missing, plural(missing, "metric", "metrics"), c.Options.BaseLabel, c.Options.NewLabel))
	}
	if failedGates > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d %s failed", failedGates, len(c.Gates), plural(len(c.Gates), "gate", "gates")))
	}
	return "REGRESSION: " + strings.Join(parts, "; ")
}

// WriteCompareTable writes c for a terminal: the verdict line, a table of
// every compared row (path, metric, stat, both values, change, verdict and
// note), the gates, and the warnings. It returns the first write error.
func WriteCompareTable(w io.Writer, c *Comparison) error {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%s\n\n", c.Headline())
	fmt.Fprintf(&buf, "%s: %s\n%s: %s\n\n", c.Options.BaseLabel, describeRun(c.Base), c.Options.NewLabel, describeRun(c.New))
	t := tablewriter.NewTable(&buf,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: []tw.Align{
			tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignLeft, tw.AlignLeft,
		}}),
	)
	t.Header("path", "metric", "stat", c.Options.BaseLabel, c.Options.NewLabel, "change", "verdict", "note")
	for _, r := range c.Rows {
		if err := t.Append(r.Path, r.Metric, r.Stat, rowValue(r, r.Base, r.BaseCount), rowValue(r, r.New, r.NewCount),
			rowChange(r), statusWord(r.Status), r.Note); err != nil {
			return fmt.Errorf("compare table: %w", err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("compare table: %w", err)
	}
	if len(c.Gates) > 0 {
		buf.WriteString("\ngates on " + c.Options.NewLabel + ":\n")
		for _, g := range c.Gates {
			word := "held  "
			if g.Failed {
				word = "FAILED"
			}
			fmt.Fprintf(&buf, "  %s  %s\n", word, g.Message)
		}
	}
	for _, warn := range c.Warnings {
		fmt.Fprintf(&buf, "warning: %s\n", warn)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write comparison: %w", err)
	}
	return nil
}

// WriteCompareMarkdown writes c as GitHub-flavoured markdown that reads
// well in a CI step summary ($GITHUB_STEP_SUMMARY): a heading with the
// verdict, a line naming both runs, a table whose first column marks each
// row (❌ breach, ✅ held, ➖ not judged), the gates and the warnings.
func WriteCompareMarkdown(w io.Writer, c *Comparison) error {
	var b strings.Builder
	mark := "✅"
	if c.Breached {
		mark = "❌"
	}
	fmt.Fprintf(&b, "### %s tollgate compare\n\n**%s**\n\n", mark, mdEscape(c.Headline()))
	fmt.Fprintf(&b, "%s: %s  \n%s: %s\n\n", mdCode(c.Options.BaseLabel), mdEscape(describeRun(c.Base)),
		mdCode(c.Options.NewLabel), mdEscape(describeRun(c.New)))
	fmt.Fprintf(&b, "| | path | metric | stat | %s | %s | change | note |\n", mdEscape(c.Options.BaseLabel), mdEscape(c.Options.NewLabel))
	b.WriteString("|:-:|---|---|---|--:|--:|--:|---|\n")
	for _, r := range c.Rows {
		note := r.Note
		if r.Status == StatusImproved || r.Status == StatusRegression || r.Status == StatusMissing {
			note = joinNote(string(r.Status), note)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", statusMark(r.Status), r.Path, r.Metric, r.Stat,
			rowValue(r, r.Base, r.BaseCount), rowValue(r, r.New, r.NewCount), rowChange(r), mdEscape(note))
	}
	if len(c.Gates) > 0 {
		fmt.Fprintf(&b, "\n#### Gates on %s\n\n| | gate | result |\n|:-:|---|---|\n", mdCode(c.Options.NewLabel))
		for _, g := range c.Gates {
			m := "✅"
			if g.Failed {
				m = "❌"
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", m, mdCode(g.Expr.Text), mdEscape(g.Message))
		}
	}
	if len(c.Warnings) > 0 {
		b.WriteString("\n")
		for _, warn := range c.Warnings {
			fmt.Fprintf(&b, "> ⚠️ %s\n", mdEscape(warn))
		}
	}
	fmt.Fprintf(&b, "\n<sub>A percentile is judged only with at least %d samples beyond it in both runs; changes under %s are noise; the error rate may rise by %s %s.</sub>\n",
		c.Options.MinTail, c.Options.MinDelta, sig(c.Options.MaxErrorRateIncrease),
		pointWord(c.Options.MaxErrorRateIncrease))
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write comparison: %w", err)
	}
	return nil
}

// WriteVerdicts writes one line per verdict, "FAILED" or "held" first, for
// probe --fail-on output. It returns the first write error.
func WriteVerdicts(w io.Writer, vs []Verdict) error {
	var b strings.Builder
	for _, v := range vs {
		word := "held  "
		if v.Failed {
			word = "FAILED"
		}
		fmt.Fprintf(&b, "gate %s  %s\n", word, v.Message)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write gate verdicts: %w", err)
	}
	return nil
}

// describeRun is a run's one-line identity: label, api, model, mode, calls
// and start.
func describeRun(r RunInfo) string {
	var parts []string
	for _, s := range []string{r.API, r.Model, r.Mode} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	parts = append(parts, fmt.Sprintf("%d calls", r.Calls))
	if !r.Started.IsZero() {
		parts = append(parts, "started "+r.Started.UTC().Format("2006-01-02 15:04 MST"))
	}
	return strings.Join(parts, " · ")
}

// rowValue formats one side of a row; a side that was not measured is "—".
func rowValue(r Row, v float64, count int64) string {
	if r.Stat == "" {
		if count > 0 {
			return fmt.Sprintf("n=%d", count)
		}
		return "—"
	}
	return formatValue(v, r.Unit)
}

// rowChange formats the change: percentage points for the error rate, a
// signed percentage otherwise.
func rowChange(r Row) string {
	switch {
	case r.Stat == "":
		return ""
	case r.Unit == "%":
		return signed(r.Delta) + " pts"
	case r.Base == 0 && r.New == 0:
		return "0%"
	case r.Base == 0:
		return "new"
	}
	return signed(r.ChangePct) + "%"
}

func signed(v float64) string {
	if v > 0 {
		return "+" + sig(v)
	}
	if v == 0 {
		return "0"
	}
	return sig(v)
}

// statusWord is a status for a terminal table.
func statusWord(s Status) string {
	switch s {
	case StatusRegression:
		return "REGRESSION"
	case StatusMissing:
		return "MISSING"
	case StatusTooFew:
		return "too few samples"
	case StatusNotJudged:
		return "not judged"
	case StatusOnlyNew:
		return "new metric"
	}
	return string(s)
}

// statusMark is a status for a markdown table.
func statusMark(s Status) string {
	switch {
	case s.Breach():
		return "❌"
	case s == StatusOK || s == StatusImproved:
		return "✅"
	}
	return "➖"
}

// pointWord is "percentage point" or "percentage points" for v of them.
func pointWord(v float64) string {
	if v == 1 {
		return "percentage point"
	}
	return "percentage points"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// mdEscape keeps text from breaking a markdown table or turning into
// markup.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`).Replace(s)
}

// mdCode writes s as inline code.
func mdCode(s string) string { return "`" + strings.ReplaceAll(s, "`", "'") + "`" }
