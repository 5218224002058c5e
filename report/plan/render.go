package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Steps returns the plan's arithmetic as rows of {step, arithmetic,
// result}, in the order the article walks it.
func (p Plan) Steps() [][3]string {
	in, m := p.Input, p.Mean
	items := Thousands(in.Items) + " items"
	rows := [][3]string{
		{"work", items + " x " + Short(m.ItemTime), Seconds(m.Work) + " of work"},
		{"wall clock", Seconds(m.Work) + " / " + Thousands(int64(in.Workers)) + " workers",
			Seconds(m.WallByWorkers) + " = " + Hours(m.WallByWorkers) + " of wall clock" + binds(p, m, BoundWorkers)},
	}
	if in.RPM > 0 {
		rows = append(rows, [3]string{"rpm limit", items + " / " + Thousands(int64(in.RPM)) + " rpm",
			oneDecimal(m.WallByRPM.Minutes()) + " min = " + Hours(m.WallByRPM) + " of wall clock" + binds(p, m, BoundRPM)})
	}
	window := FormatClock(in.Start) + " to " + FormatClock(in.Due)
	if p.CrossesMidnight {
		window += " (next day)"
	}
	rows = append(rows,
		[3]string{"window", window, Hours(p.Window)},
		[3]string{"slack", Hours(p.Window) + " - " + Hours(m.Wall), Hours(m.Slack) + " of slack" + fits(m.Slack >= 0, "does not fit the window")},
		[3]string{"job deadline", Hours(p.Window) + " - " + Short(in.Margin) + " margin",
			Hours(p.JobDeadline) + " (stop at " + FormatClock((in.Start+p.JobDeadline)%(24*time.Hour)) + ")" +
				fits(m.FitsDeadline, "the wall clock does not fit")},
	)
	if p.P99 != nil {
		s := p.P99
		rows = append(rows, [3]string{"a bad night (p99)",
			items + " x p99 " + Short(s.ItemTime) + " / " + Thousands(int64(in.Workers)) + " workers",
			Seconds(s.Wall) + " = " + Hours(s.Wall) + " of wall clock, " + Hours(s.Slack) + " of slack" +
				fits(s.FitsDeadline, "misses the job deadline")})
	}
	if p.RetryItemsInSlack > 0 {
		rows = append(rows, [3]string{"retry room",
			Hours(m.Slack) + " x " + Thousands(int64(in.Workers)) + " workers / " + Short(in.RetryAllowance),
			Thousands(p.RetryItemsInSlack) + " items could use their whole retry allowance"})
	}
	if in.RetryAllowance > 0 {
		rows = append(rows, [3]string{"worst case without a job deadline",
			items + " x " + Short(in.RetryAllowance) + " retry allowance",
			Thousands(int64(math.Round(p.WorstCase.Minutes()))) + " min = " +
				Thousands(int64(math.Round(p.WorstCase.Hours()))) + " h = " +
				oneDecimal(p.WorstCaseWorkerDays) + " worker-days"})
	}
	return rows
}

// binds marks the row of the bound that sets the wall clock, when an RPM
// limit makes there be two.
func binds(p Plan, s Scenario, bound string) string {
	if p.Input.RPM > 0 && s.Bound == bound {
		return " (binds)"
	}
	return ""
}

// fits adds a warning mark to a result when ok is false.
func fits(ok bool, why string) string {
	if ok {
		return ""
	}
	return " ! " + why
}

// WriteTable writes the plan as a table of its steps, the item time it
// used, and its warnings.
func WriteTable(w io.Writer, p Plan) error {
	var buf bytes.Buffer
	if ms := p.Input.Measured; ms != nil {
		fmt.Fprintf(&buf, "Item time measured in %s over %s items: mean %s, p50 %s, p99 %s, max %s\n\n",
			ms.Source, Thousands(ms.Items), Short(ms.Mean), Short(ms.P50), Short(ms.P99), Short(ms.Max))
	}
	align := tw.Alignment{tw.AlignLeft, tw.AlignLeft, tw.AlignLeft}
	tb := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleLight)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
	)
	tb.Header([]string{"step", "arithmetic", "result"})
	for _, r := range p.Steps() {
		if err := tb.Append(r[:]); err != nil {
			return fmt.Errorf("plan table: %w", err)
		}
	}
	if err := tb.Render(); err != nil {
		return fmt.Errorf("plan table: %w", err)
	}
	if len(p.Warnings) > 0 {
		buf.WriteString("\nWarnings:\n")
		for _, warn := range p.Warnings {
			fmt.Fprintf(&buf, "  - %s\n", warn)
		}
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write plan: %w", err)
	}
	return nil
}

// jsonScenario is a Scenario in the JSON output, in seconds.
type jsonScenario struct {
	ItemSeconds          float64 `json:"item_seconds"`
	WorkSeconds          float64 `json:"work_seconds"`
	WallByWorkersSeconds float64 `json:"wall_by_workers_seconds"`
	WallByRPMSeconds     float64 `json:"wall_by_rpm_seconds,omitempty"`
	WallSeconds          float64 `json:"wall_seconds"`
	Bound                string  `json:"bound"`
	SlackSeconds         float64 `json:"slack_seconds"`
	FitsJobDeadline      bool    `json:"fits_job_deadline"`
}

func newJSONScenario(s Scenario) jsonScenario {
	return jsonScenario{
		ItemSeconds:          s.ItemTime.Seconds(),
		WorkSeconds:          s.Work.Seconds(),
		WallByWorkersSeconds: s.WallByWorkers.Seconds(),
		WallByRPMSeconds:     s.WallByRPM.Seconds(),
		WallSeconds:          s.Wall.Seconds(),
		Bound:                s.Bound,
		SlackSeconds:         s.Slack.Seconds(),
		FitsJobDeadline:      s.FitsDeadline,
	}
}

// jsonMeasured is Measured in the JSON output, in seconds.
type jsonMeasured struct {
	Source      string  `json:"source"`
	Items       int64   `json:"items"`
	MeanSeconds float64 `json:"mean_seconds"`
	P50Seconds  float64 `json:"p50_seconds"`
	P99Seconds  float64 `json:"p99_seconds"`
	MaxSeconds  float64 `json:"max_seconds"`
}

// jsonPlan is the plan in the JSON output: SPEC §5's keys at the top
// level, the mean scenario's numbers among them.
type jsonPlan struct {
	Items                 int64         `json:"items"`
	Workers               int           `json:"workers"`
	RPM                   int           `json:"rpm,omitempty"`
	Start                 string        `json:"start"`
	Due                   string        `json:"due"`
	MarginSeconds         float64       `json:"margin_seconds"`
	RetryAllowanceSeconds float64       `json:"retry_allowance_seconds"`
	Measured              *jsonMeasured `json:"measured,omitempty"`
	jsonScenario
	WindowSeconds       float64       `json:"window_seconds"`
	CrossesMidnight     bool          `json:"crosses_midnight"`
	JobDeadlineSeconds  float64       `json:"job_deadline_seconds"`
	WorkersNeeded       int64         `json:"workers_needed"`
	RetryItemsInSlack   int64         `json:"retry_items_in_slack"`
	WorstCaseSeconds    float64       `json:"worst_case_seconds"`
	WorstCaseWorkerDays float64       `json:"worst_case_worker_days"`
	P99                 *jsonScenario `json:"p99,omitempty"`
	Warnings            []string      `json:"warnings"`
}

// WriteJSON writes the plan as one JSON object (durations in seconds).
func WriteJSON(w io.Writer, p Plan) error {
	in := p.Input
	out := jsonPlan{
		Items:                 in.Items,
		Workers:               in.Workers,
		RPM:                   in.RPM,
		Start:                 FormatClock(in.Start),
		Due:                   FormatClock(in.Due),
		MarginSeconds:         in.Margin.Seconds(),
		RetryAllowanceSeconds: in.RetryAllowance.Seconds(),
		jsonScenario:          newJSONScenario(p.Mean),
		WindowSeconds:         p.Window.Seconds(),
		CrossesMidnight:       p.CrossesMidnight,
		JobDeadlineSeconds:    p.JobDeadline.Seconds(),
		WorkersNeeded:         p.WorkersNeeded,
		RetryItemsInSlack:     p.RetryItemsInSlack,
		WorstCaseSeconds:      p.WorstCase.Seconds(),
		WorstCaseWorkerDays:   p.WorstCaseWorkerDays,
		Warnings:              p.Warnings,
	}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	if ms := in.Measured; ms != nil {
		out.Measured = &jsonMeasured{Source: ms.Source, Items: ms.Items, MeanSeconds: ms.Mean.Seconds(),
			P50Seconds: ms.P50.Seconds(), P99Seconds: ms.P99.Seconds(), MaxSeconds: ms.Max.Seconds()}
	}
	if p.P99 != nil {
		s := newJSONScenario(*p.P99)
		out.P99 = &s
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write plan json: %w", err)
	}
	return nil
}
