package recommend

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/tollgate-dev/tollgate/report/plan"
)

// Policy is how measurements become route timeouts. Every number in it is
// overridable from a YAML file (LoadPolicy; `--policy FILE`) whose keys are
// the yaml tags below; a key left out keeps DefaultPolicy's value.
// testdata/policy.default.yaml writes out every key with its default.
type Policy struct {
	// TargetKillRate is the false-kill rate a recommendation should be able
	// to claim: a setting whose 95% upper bound is above it gets a "too few
	// calls" warning (with none killed, that takes 3/TargetKillRate calls).
	TargetKillRate float64 `yaml:"target_kill_rate"`
	// ClearPercentile is the percentile every percentile-based deadline
	// must sit above; one at or below it is diagnosed.
	ClearPercentile float64 `yaml:"clear_percentile"`

	// Connect: timeouts.connect from the connect histogram (both paths).
	Connect Rule `yaml:"connect"`
	// FirstToken: timeouts.first_token from the stream path's first_byte.
	FirstToken Rule `yaml:"first_token"`
	// Idle: timeouts.idle from max_byte_gap (both paths).
	Idle Rule `yaml:"idle"`
	// Total: timeouts.total from total (both paths), then raised to clear
	// every bound spent inside it by a whole margin (routes.Clearance).
	Total Rule `yaml:"total"`
	// TTFT: stream.ttft from the stream path's ttft.
	TTFT Rule `yaml:"ttft"`
	// Gap: stream.gap from the stream path's max_gap (per call).
	Gap Rule `yaml:"gap"`
	// NonStreamingHead: non_streaming.head from the batch path's total
	// (the largest completion observed), never below first_token.
	NonStreamingHead Rule `yaml:"non_streaming_head"`
	// Batch holds the bulk path's retry settings and the item ceiling.
	Batch BatchPolicy `yaml:"batch"`
	// Window, when set, gives batch.job_deadline (002's arithmetic).
	Window *Window `yaml:"window"`

	// PingMaskRatio: ping masking is diagnosed when the stream's largest
	// content gap is at least this many times its largest byte gap (and at
	// least a second). Without keep-alive traffic the two are the same gap
	// (a content delta is bytes), so any ratio well above 1 means bytes
	// arrived inside the longest content pause; 1.5 is a ping at least every
	// two thirds of it.
	PingMaskRatio float64 `yaml:"ping_mask_ratio"`
	// Intermediaries are the idle limits of what commonly sits between a
	// client and a provider; healthy calls silent on the wire for longer
	// are diagnosed, naming the setting.
	Intermediaries []Intermediary `yaml:"intermediaries"`
}

// Rule turns one histogram into one deadline:
//
//	value = RoundUpHuman(max(Floor, Multiple x the histogram's Percentile))
//
// The multiple is the least clearance the deadline keeps over the
// percentile; rounding up to a number a person writes (histo.RoundUpHuman)
// only adds to it. That is how both seeds come out of one rule: a ttft p99
// of 2.1 s x 2 = 4.2 s rounds up to 5 s (2.4x, 002's "about two and a half
// times"), and a largest completion of 25,833 ms x 3 = 77.5 s rounds up to
// 90 s (3.5x, ADR-0036's "~3.5x"). Writing the seeds' own ratios as the
// multiples instead (2.5x, 3.5x) would give 5.25 s -> 10 s and 90.4 s -> 2 m,
// because the seeds rounded to the nearest round number, not up.
type Rule struct {
	// Percentile in (0, 100]; 100 is the largest value observed.
	Percentile float64 `yaml:"percentile"`
	// Multiple of that percentile, at least 1.
	Multiple float64 `yaml:"multiple"`
	// Floor is the least value recommended, whatever was measured.
	Floor time.Duration `yaml:"floor"`
}

// BatchPolicy is the bulk path's part of the policy.
type BatchPolicy struct {
	// ItemCeilingMultiple: batch.item_ceiling is this many times the
	// non-streaming head wait (002's 180 s ceiling is 2 x ADR-0036's 90 s),
	// and always clears connect + head by a whole margin.
	ItemCeilingMultiple float64 `yaml:"item_ceiling_multiple"`
	// Attempts is batch.attempts (002: five).
	Attempts int `yaml:"attempts"`
	// RetryBudget is the least batch.retry_budget (002: ten minutes).
	RetryBudget time.Duration `yaml:"retry_budget"`
	// RetryBudgetMultiple raises the retry budget to this many times the
	// longest item the run saw (item: first attempt to final outcome).
	RetryBudgetMultiple float64 `yaml:"retry_budget_multiple"`
}

// Window is the batch job's delivery window (002: results needed by 07:00,
// the job starts at 01:00, half an hour to spare).
type Window struct {
	// Start and Due are times of day, "HH:MM"; Due before Start is the
	// next day.
	Start string `yaml:"start"`
	Due   string `yaml:"due"`
	// Margin is how long before Due the job must give up.
	Margin time.Duration `yaml:"margin"`
	// Items and Workers, when set, check that the job fits its deadline at
	// the measured mean item time.
	Items   int64 `yaml:"items"`
	Workers int   `yaml:"workers"`
}

// Intermediary is one proxy or load balancer's idle limit.
type Intermediary struct {
	// Setting names what to change, e.g. "nginx proxy_read_timeout".
	Setting string `yaml:"setting"`
	// Idle is its default idle limit.
	Idle time.Duration `yaml:"idle"`
}

// DefaultPolicy is the policy of the seeds; see each field.
//
//	connect       3 x p99 of connect, at least 2 s (one lost SYN costs the
//	              1 s initial retransmission timeout of RFC 6298; a connect
//	              deadline must survive one)
//	first_token   2 x p99 of first_byte (streams); at least the
//	              non-streaming head wait on a route that also serves
//	              non-streaming calls (ADR 0016's consequence)
//	idle          2 x the largest max_byte_gap, at least 10 s (idle is also
//	              the client's write deadline, ADR 0016)
//	total         2 x the largest total, raised to clear every bound inside
//	ttft          2 x p99 of ttft (002: p99 2.1 s -> 5 s)
//	gap           2 x the largest max_gap, at least 5 s: above every
//	              structural pause the run saw (002: about 10 s)
//	head          3 x the largest batch completion (ADR-0036: 25,833 ms ->
//	              90 s), never below first_token
//	item_ceiling  2 x head (002: 180 s)
//	attempts      5, retry_budget at least 10 m and 2 x the longest item
//	              (002's right-hand column)
func DefaultPolicy() Policy {
	return Policy{
		TargetKillRate:   0.01,
		ClearPercentile:  99.9,
		Connect:          Rule{Percentile: 99, Multiple: 3, Floor: 2 * time.Second},
		FirstToken:       Rule{Percentile: 99, Multiple: 2},
		Idle:             Rule{Percentile: 100, Multiple: 2, Floor: 10 * time.Second},
		Total:            Rule{Percentile: 100, Multiple: 2},
		TTFT:             Rule{Percentile: 99, Multiple: 2},
		Gap:              Rule{Percentile: 100, Multiple: 2, Floor: 5 * time.Second},
		NonStreamingHead: Rule{Percentile: 100, Multiple: 3},
		Batch: BatchPolicy{
			ItemCeilingMultiple: 2,
			Attempts:            5,
			RetryBudget:         10 * time.Minute,
			RetryBudgetMultiple: 2,
		},
		PingMaskRatio: 1.5,
		Intermediaries: []Intermediary{
			{Setting: "nginx proxy_read_timeout", Idle: 60 * time.Second},
			{Setting: "AWS ALB idle timeout", Idle: 60 * time.Second},
			{Setting: "Envoy stream_idle_timeout", Idle: 5 * time.Minute},
		},
	}
}

// LoadPolicy reads a policy file: DefaultPolicy with the file's keys laid
// over it. Unknown keys are refused (with their line), and so is a policy
// that Validate refuses.
func LoadPolicy(path string) (Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Policy{}, fmt.Errorf("read policy %q: %w", path, err)
	}
	p, err := ParsePolicy(data)
	if err != nil {
		return Policy{}, fmt.Errorf("policy %q: %w", path, err)
	}
	return p, nil
}

// ParsePolicy is LoadPolicy on bytes.
func ParsePolicy(data []byte) (Policy, error) {
	p := DefaultPolicy()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil && !errors.Is(err, io.EOF) {
		return Policy{}, fmt.Errorf("%w (the keys are the yaml names in `go doc recommend.Policy`)", err)
	}
	if err := p.Validate(); err != nil {
		return Policy{}, err
	}
	return p, nil
}

// Validate refuses a policy that cannot give sensible deadlines.
func (p Policy) Validate() error {
	var errs []error
	for _, r := range []struct {
		key string
		r   Rule
	}{
		{"connect", p.Connect}, {"first_token", p.FirstToken}, {"idle", p.Idle}, {"total", p.Total},
		{"ttft", p.TTFT}, {"gap", p.Gap}, {"non_streaming_head", p.NonStreamingHead},
	} {
		if r.r.Percentile <= 0 || r.r.Percentile > 100 {
			errs = append(errs, fmt.Errorf("%s.percentile %g: want a percentile in (0, 100]", r.key, r.r.Percentile))
		}
		if r.r.Multiple < 1 {
			errs = append(errs, fmt.Errorf("%s.multiple %g: want at least 1 (below 1 the deadline sits under the percentile it is based on)", r.key, r.r.Multiple))
		}
		if r.r.Floor < 0 {
			errs = append(errs, fmt.Errorf("%s.floor %s: want 0 or more", r.key, r.r.Floor))
		}
	}
	if p.TargetKillRate <= 0 || p.TargetKillRate >= 1 {
		errs = append(errs, fmt.Errorf("target_kill_rate %g: want a rate in (0, 1)", p.TargetKillRate))
	}
	if p.ClearPercentile <= 0 || p.ClearPercentile > 100 {
		errs = append(errs, fmt.Errorf("clear_percentile %g: want a percentile in (0, 100]", p.ClearPercentile))
	}
	if p.Batch.ItemCeilingMultiple < 1 {
		errs = append(errs, fmt.Errorf("batch.item_ceiling_multiple %g: want at least 1 (the head wait is spent inside the ceiling)", p.Batch.ItemCeilingMultiple))
	}
	if p.Batch.Attempts < 1 {
		errs = append(errs, fmt.Errorf("batch.attempts %d: want 1 or more", p.Batch.Attempts))
	}
	if p.Batch.RetryBudget < 0 || p.Batch.RetryBudgetMultiple < 0 {
		errs = append(errs, errors.New("batch.retry_budget and batch.retry_budget_multiple: want 0 or more"))
	}
	if p.PingMaskRatio <= 1 {
		errs = append(errs, fmt.Errorf("ping_mask_ratio %g: want more than 1", p.PingMaskRatio))
	}
	for i, im := range p.Intermediaries {
		if im.Setting == "" || im.Idle <= 0 {
			errs = append(errs, fmt.Errorf("intermediaries[%d]: want a setting name and a positive idle", i))
		}
	}
	if w := p.Window; w != nil {
		if _, _, err := w.deadline(); err != nil {
			errs = append(errs, err)
		}
		if w.Items < 0 || w.Workers < 0 {
			errs = append(errs, errors.New("window.items and window.workers: want 0 or more"))
		}
	}
	return errors.Join(errs...)
}

// deadline returns the window (Due - Start, across midnight) and the job
// deadline (the window less the margin), as `tollgate plan` computes them.
func (w *Window) deadline() (window, job time.Duration, err error) {
	start, err := plan.ParseClock(w.Start)
	if err != nil {
		return 0, 0, fmt.Errorf("window.start: %w", err)
	}
	due, err := plan.ParseClock(w.Due)
	if err != nil {
		return 0, 0, fmt.Errorf("window.due: %w", err)
	}
	window = due - start
	if window <= 0 {
		window += 24 * time.Hour
	}
	if w.Margin < 0 || w.Margin >= window {
		return 0, 0, fmt.Errorf("window.margin %s: want 0 or more and less than the %s window", w.Margin, window)
	}
	return window, window - w.Margin, nil
}
