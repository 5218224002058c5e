package recommend

import (
	"time"

	"github.com/tollgate-dev/tollgate/report"
	"github.com/tollgate-dev/tollgate/report/routes"
)

// ToRoutes turns rec into a route config with one route called name, for
// `probe --config-out` and `recommend -o` to write with routes.Write.
// Settings rec leaves at zero (not recommended) are left out.
func ToRoutes(rec *report.Recommendation, name string) *routes.Config {
	t, s, b := rec.Timeouts, rec.Stream, rec.Batch
	return &routes.Config{Routes: []routes.Route{{
		Name: name,
		Timeouts: routes.Timeouts{
			Connect:    time.Duration(t.Connect),
			FirstToken: time.Duration(t.FirstToken),
			Idle:       time.Duration(t.Idle),
			Total:      time.Duration(t.Total),
		},
		Stream:       routes.Stream{TTFT: time.Duration(s.TTFT), Gap: time.Duration(s.Gap)},
		NonStreaming: routes.NonStreaming{Head: time.Duration(b.Head)},
		Batch: routes.Batch{
			ItemCeiling: time.Duration(b.ItemCeiling),
			Attempts:    b.Attempts,
			RetryBudget: time.Duration(b.RetryBudget),
			JobDeadline: time.Duration(b.JobDeadline),
		},
	}}}
}
