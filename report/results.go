// Package report turns measurements into what people and machines read:
// the results file, recommendations, route configuration, plans,
// comparisons, and the table, markdown, JSON and HTML renderers.
package report

import (
	"fmt"
	"time"
)

// Schema is the value of the results file's "schema" key.
const Schema = "tollgate.results/v1"

// Path names, as used in results, tables and --fail-on.
const (
	PathStream = "stream"
	PathBatch  = "batch"
)

// Results is the results file of SPEC §6. It round-trips through JSON:
// Load(Save(r)) holds the same values and the same histograms.
type Results struct {
	Schema         string           `json:"schema"`
	Tool           Tool             `json:"tool"`
	Run            Run              `json:"run"`
	Paths          map[string]*Path `json:"paths"`
	Recommendation *Recommendation  `json:"recommendation,omitempty"`
}

// Tool identifies the program that wrote the file.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Run describes how the measurements were taken.
type Run struct {
	Started     time.Time `json:"started"`
	Ended       time.Time `json:"ended"`
	Target      string    `json:"target"`
	Simulated   bool      `json:"simulated"`
	SimProfile  string    `json:"sim_profile,omitempty"`
	API         string    `json:"api"`
	Model       string    `json:"model"`
	Mode        string    `json:"mode"`
	Load        Load      `json:"load"`
	Clocks      Clocks    `json:"clocks"`
	Interrupted bool      `json:"interrupted"`
	// Shards lists the shards merged into this file ("1/4", ...); empty for one run.
	Shards []string `json:"shards,omitempty"`
	// SchedulerLag is how far the open-loop pacer fell behind intended starts.
	SchedulerLag *Metric `json:"scheduler_lag,omitempty"`
}

// Load is the load the run applied.
type Load struct {
	Requests    int      `json:"requests,omitempty"`
	Duration    Duration `json:"duration,omitempty"`
	Concurrency int      `json:"concurrency,omitempty"`
	Rate        float64  `json:"rate,omitempty"`
	Arrival     string   `json:"arrival,omitempty"`
	Warmup      int      `json:"warmup,omitempty"`
	Seed        int64    `json:"seed"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
	Shard       string   `json:"shard,omitempty"`
}

// Clocks are the seven clocks of SPEC §2 the run was measured under; 0 is off.
type Clocks struct {
	Connect    Duration `json:"connect"`
	Head       Duration `json:"head"`
	HeadBatch  Duration `json:"head_batch"`
	FirstToken Duration `json:"first_token"`
	Idle       Duration `json:"idle"`
	Total      Duration `json:"total"`
	TTFT       Duration `json:"ttft"`
	Gap        Duration `json:"gap"`
	// ItemCeiling replaces Total for non-streaming calls when set (a
	// route's batch.item_ceiling).
	ItemCeiling Duration `json:"item_ceiling,omitempty"`
}

// Path holds one path's (stream or batch) counts and metrics.
type Path struct {
	// Calls is the number of call attempts measured (warmup excluded).
	Calls int64 `json:"calls"`
	// Outcomes counts attempts by outcome class ("ok", "timeout.gap", "http.429").
	Outcomes map[string]int64 `json:"outcomes"`
	// Phases counts attempts by outcome class and then by phase.
	Phases map[string]map[string]int64 `json:"phases,omitempty"`
	// Items is the batch path's per-item accounting; nil on the stream path.
	Items *Items `json:"items,omitempty"`
	// Metrics maps a SPEC §4 metric name to its summary and histogram.
	Metrics map[string]*Metric `json:"metrics"`
}

// Items is the batch path's accounting by item rather than by attempt.
type Items struct {
	Total       int64            `json:"total"`
	Done        int64            `json:"done"`
	Failed      int64            `json:"failed"`
	Unprocessed int64            `json:"unprocessed"`
	Outcomes    map[string]int64 `json:"outcomes"`
}

// Metric is one metric's summary, in milliseconds for durations (plain
// numbers for counts such as output_tokens and attempts), and its full
// HdrHistogram (V2 compressed, base64; durations in microseconds).
type Metric struct {
	Count int64   `json:"count"`
	Min   float64 `json:"min"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	Max   float64 `json:"max"`
	Unit  string  `json:"unit"`
	HDR   string  `json:"hdr"`
}

// Recommendation is the set of route timeouts the measurements justify.
type Recommendation struct {
	Timeouts  RouteTimeouts       `json:"timeouts"`
	Stream    StreamTimeouts      `json:"stream"`
	Batch     BatchRecommendation `json:"batch"`
	Rationale []Rationale         `json:"rationale"`
	Warnings  []string            `json:"warnings"`
}

// RouteTimeouts are ADR 0016's four.
type RouteTimeouts struct {
	Connect    Duration `json:"connect" yaml:"connect"`
	FirstToken Duration `json:"first_token" yaml:"first_token"`
	Idle       Duration `json:"idle" yaml:"idle"`
	Total      Duration `json:"total" yaml:"total"`
}

// StreamTimeouts are the content-level deadlines that pings do not reset.
type StreamTimeouts struct {
	TTFT Duration `json:"ttft" yaml:"ttft"`
	Gap  Duration `json:"gap" yaml:"gap"`
}

// BatchRecommendation is the bulk path's set (002's right-hand column).
type BatchRecommendation struct {
	Head        Duration `json:"head"`
	ItemCeiling Duration `json:"item_ceiling"`
	Attempts    int      `json:"attempts"`
	RetryBudget Duration `json:"retry_budget"`
	JobDeadline Duration `json:"job_deadline,omitempty"`
}

// Rationale is the evidence for one recommended setting.
type Rationale struct {
	Setting string `json:"setting"`
	Value   string `json:"value"`
	Basis   string `json:"basis"`
	// WouldHaveKilled is how many of the Of observed healthy calls the
	// value would have ended.
	WouldHaveKilled int64 `json:"would_have_killed"`
	Of              int64 `json:"of"`
	// FalseKillUpper95 is a 95% upper bound on the false-kill rate given Of
	// (the rule of three, 3/Of, when none were killed).
	FalseKillUpper95 float64 `json:"false_kill_upper95"`
	// DetectsStallIn is how long a stall goes unnoticed under this value.
	DetectsStallIn Duration `json:"detects_stall_in,omitempty"`
}

// Duration is a time.Duration written as a Go duration string ("10s") in
// JSON and YAML.
type Duration time.Duration

// String formats d as Go does ("1m30s"); 0 is "0s".
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText writes d as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("duration %q: %w", b, err)
	}
	*d = Duration(v)
	return nil
}
