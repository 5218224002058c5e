package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tollgate-dev/tollgate/report"
)

// setting is one recommended value, named as in the results file.
type setting struct {
	name  string
	value string
	zero  bool
}

// settings lists every value of a recommendation in the results file's order.
func settings(rec *report.Recommendation) []setting {
	dur := func(name string, d report.Duration) setting { return setting{name, d.String(), d == 0} }
	return []setting{
		dur("timeouts.connect", rec.Timeouts.Connect),
		dur("timeouts.first_token", rec.Timeouts.FirstToken),
		dur("timeouts.idle", rec.Timeouts.Idle),
		dur("timeouts.total", rec.Timeouts.Total),
		dur("stream.ttft", rec.Stream.TTFT),
		dur("stream.gap", rec.Stream.Gap),
		dur("batch.head", rec.Batch.Head),
		dur("batch.item_ceiling", rec.Batch.ItemCeiling),
		{"batch.attempts", fmt.Sprint(rec.Batch.Attempts), rec.Batch.Attempts == 0},
		dur("batch.retry_budget", rec.Batch.RetryBudget),
		dur("batch.job_deadline", rec.Batch.JobDeadline),
	}
}

// names reports whether a rationale's setting names s: the full name
// ("stream.gap") or its last part ("gap").
func (s setting) names(r report.Rationale) bool {
	return r.Setting == s.name || strings.HasSuffix(s.name, "."+r.Setting)
}

// recommendation adds the recommended settings with their evidence and the
// warnings. A setting with no value and no evidence (a path not run) is left
// out. width is the terminal's, 0 for formats that do not wrap (markdown,
// HTML).
func (d *doc) recommendation(rec *report.Recommendation, width int) {
	d.add(heading{2, "Recommended timeouts"})
	t := table{
		header: []string{"setting", "value", "basis", "killed/of", "95% upper", "detects stall"},
		right:  []bool{false, true, false, true, true, true},
		wrap:   2,
		width:  width,
	}
	used := make([]bool, len(rec.Rationale))
	for _, s := range settings(rec) {
		found := false
		for i, r := range rec.Rationale {
			if used[i] || !s.names(r) {
				continue
			}
			used[i], found = true, true
			t.rows = append(t.rows, rationaleRow(s.name, s.value, r))
		}
		if !found && !s.zero {
			t.rows = append(t.rows, []string{s.name, s.value, "", "", "", ""})
		}
	}
	for i, r := range rec.Rationale {
		if !used[i] {
			t.rows = append(t.rows, rationaleRow(r.Setting, r.Value, r))
		}
	}
	switch {
	case len(t.rows) > 0 && width > 0 && t.spare() < 2*minWrapWidth:
		// Too narrow for the basis to read inside the table: list it below.
		d.add(basisBelow(t))
	case len(t.rows) > 0:
		d.add(t)
	default:
		d.add(para{plain, "No setting could be recommended from these measurements."})
	}
	if len(rec.Warnings) > 0 {
		d.add(list{alarm, rec.Warnings})
	}
}

// basisBelow moves a recommendation table's basis column into a list that
// follows the table, for terminals too narrow to wrap it in a column.
func basisBelow(t table) (table, list) {
	narrow := table{wrap: -1, width: t.width}
	var bases list
	drop := func(cells []string) []string {
		return append(slices.Clone(cells[:t.wrap]), cells[t.wrap+1:]...)
	}
	narrow.header, narrow.right = drop(t.header), append(slices.Clone(t.right[:t.wrap]), t.right[t.wrap+1:]...)
	for _, r := range t.rows {
		narrow.rows = append(narrow.rows, drop(r))
		if r[t.wrap] != "" {
			bases.items = append(bases.items, r[0]+": "+r[t.wrap])
		}
	}
	return narrow, bases
}

func rationaleRow(name, value string, r report.Rationale) []string {
	if r.Value != "" {
		value = r.Value
	}
	killed, upper := "", ""
	if r.Of > 0 {
		killed = fmt.Sprintf("%d/%d", r.WouldHaveKilled, r.Of)
		upper = fmtRatio(r.FalseKillUpper95)
	}
	stall := ""
	if r.DetectsStallIn > 0 {
		stall = r.DetectsStallIn.String()
	}
	return []string{name, value, r.Basis, killed, upper, stall}
}

// twoPaths sets the two paths' deadlines side by side, as design note 002's
// "two paths, six numbers": an interactive deadline protects a person's
// attention, a batch deadline a delivery commitment, so each path has its
// own instruments and the same number is wrong on both.
func (d *doc) twoPaths(rec *report.Recommendation) {
	orNone := func(v report.Duration, none string) string {
		if v == 0 {
			return none
		}
		return v.String()
	}
	job := orNone(rec.Batch.JobDeadline, "tollgate plan")
	attempts := "-"
	if rec.Batch.Attempts > 0 {
		attempts = fmt.Sprint(rec.Batch.Attempts)
	}
	d.add(heading{2, "Two paths, different instruments"},
		table{
			header: []string{"interactive", "value", "bulk", "value"},
			right:  []bool{false, true, false, true},
			wrap:   -1,
			rows: [][]string{
				{"connect", orNone(rec.Timeouts.Connect, "-"), "item ceiling", orNone(rec.Batch.ItemCeiling, "-")},
				{"ttft", orNone(rec.Stream.TTFT, "-"), "attempts", attempts},
				{"gap", orNone(rec.Stream.Gap, "-"), "retry allowance", orNone(rec.Batch.RetryBudget, "-")},
				{"attempts", "1", "job deadline", job},
			},
		},
		para{plain, "The interactive path (stream) notices that nothing is arriving while a person waits, and leaves retrying to the caller; the bulk path (batch) tolerates slowness per item and bounds the job instead, its deadline from the window the results are needed in (tollgate plan). Swapping them fails both (design note 002)."})
}
