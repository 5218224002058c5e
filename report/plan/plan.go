// Package plan does the batch job's capacity arithmetic: how much work a
// job is, how long it takes on a fleet of workers (or under a provider's
// request-per-minute limit), how much of the window that leaves, the job
// deadline to set, and what the per-item retry allowance would cost with
// no job deadline at all. Every step is kept so the renderers can show it
// as the 002 article does ("50,000 items x 8 s = 400,000 s of work").
package plan

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/histo"
	"github.com/tollgate-dev/tollgate/report"
)

// Input is what `tollgate plan` is given. Errors from Compute name the
// flag a field comes from.
type Input struct {
	// Items is the number of items in the job (--items).
	Items int64
	// Mean is the mean time one item takes, retries included (--mean).
	// Leave it zero when Measured gives it.
	Mean time.Duration
	// Workers is the number of items processed at once (--workers).
	Workers int
	// Start and Due are clock times, as time since midnight (--start,
	// --due; see ParseClock). A Due before Start is on the next day.
	Start, Due time.Duration
	// Margin is how long before Due the job must stop (--margin).
	Margin time.Duration
	// RetryAllowance is the most one item may spend retrying
	// (--retry-allowance).
	RetryAllowance time.Duration
	// RPM is the provider's request-per-minute limit; 0 for none (--rpm).
	RPM int
	// Measured, when set, gives the item time from a batch run (--from).
	Measured *Measured
}

// Measured is the item time of a measured batch run.
type Measured struct {
	// Source names where the numbers came from (the results file).
	Source string
	// Items is how many items the run measured.
	Items int64
	// Mean, P50, P99 and Max are the item time's.
	Mean, P50, P99, Max time.Duration
}

// Scenario is the wall clock of the job at one item time.
type Scenario struct {
	// ItemTime is the time per item the scenario assumes.
	ItemTime time.Duration
	// Work is Items x ItemTime, the worker time the job needs.
	Work time.Duration
	// WallByWorkers is Work / Workers.
	WallByWorkers time.Duration
	// WallByRPM is Items / RPM minutes; 0 without an RPM limit.
	WallByRPM time.Duration
	// Wall is the larger of the two: the job's wall clock.
	Wall time.Duration
	// Bound names the bound that sets Wall: BoundWorkers or BoundRPM.
	Bound string
	// Slack is Window - Wall; negative when the job does not fit.
	Slack time.Duration
	// FitsDeadline is whether Wall fits inside the job deadline.
	FitsDeadline bool
}

// Bounds on the wall clock.
const (
	BoundWorkers = "workers"
	BoundRPM     = "rpm"
)

// Plan is every step of the arithmetic.
type Plan struct {
	Input Input
	// Mean is the scenario at the mean item time (Input.Mean, or the
	// measured mean).
	Mean Scenario
	// P99 is the scenario at the measured p99 item time ("what a bad night
	// costs"); nil without a measured run.
	P99 *Scenario
	// Window is Due - Start, across midnight when Due is earlier.
	Window time.Duration
	// CrossesMidnight is whether Due is on the day after Start.
	CrossesMidnight bool
	// JobDeadline is Window - Margin: when the job must give up.
	JobDeadline time.Duration
	// WorkersNeeded is the fewest workers whose wall clock fits the job
	// deadline at the mean item time (ignoring any RPM limit).
	WorkersNeeded int64
	// RetryItemsInSlack is how many items could spend their whole retry
	// allowance inside the slack at the mean (0 when there is no slack).
	RetryItemsInSlack int64
	// WorstCase is Items x RetryAllowance: the worker time the job could
	// spend with no job deadline, every item retrying to its allowance.
	WorstCase time.Duration
	// WorstCaseWorkerDays is WorstCase in days of one worker.
	WorstCaseWorkerDays float64
	// Warnings say what a person must act on, with the numbers.
	Warnings []string
}

// maxDuration is the longest time.Duration (about 292 years).
const maxDuration = time.Duration(math.MaxInt64)

// Compute checks in and does the arithmetic. A job that does not fit its
// window is not an error: the plan carries warnings that say so.
func Compute(in Input) (Plan, error) {
	mean := in.Mean
	var p99 time.Duration
	if in.Measured != nil {
		if in.Mean != 0 {
			return Plan{}, errors.New("--mean and --from both give the item time; use one")
		}
		mean, p99 = in.Measured.Mean, in.Measured.P99
	}
	switch {
	case in.Items < 1:
		return Plan{}, fmt.Errorf("--items must be at least 1, got %d", in.Items)
	case mean <= 0 && in.Measured != nil:
		return Plan{}, fmt.Errorf("--from %s: the measured mean item time is %v; need a run that completed items", in.Measured.Source, mean)
	case mean <= 0:
		return Plan{}, fmt.Errorf("--mean must be positive, got %v", mean)
	case in.Workers < 1:
		return Plan{}, fmt.Errorf("--workers must be at least 1, got %d", in.Workers)
	case in.Start < 0 || in.Start >= 24*time.Hour:
		return Plan{}, fmt.Errorf("--start must be a time of day (00:00 to 23:59), got %v", in.Start)
	case in.Due < 0 || in.Due >= 24*time.Hour:
		return Plan{}, fmt.Errorf("--due must be a time of day (00:00 to 23:59), got %v", in.Due)
	case in.Due == in.Start:
		return Plan{}, fmt.Errorf("--start and --due are both %s: the window is empty", FormatClock(in.Start))
	case in.Margin < 0:
		return Plan{}, fmt.Errorf("--margin must not be negative, got %v", in.Margin)
	case in.RetryAllowance < 0:
		return Plan{}, fmt.Errorf("--retry-allowance must not be negative, got %v", in.RetryAllowance)
	case in.RPM < 0:
		return Plan{}, fmt.Errorf("--rpm must not be negative, got %d", in.RPM)
	}
	for _, f := range []struct {
		flag string
		d    time.Duration
	}{{"--mean", mean}, {"--retry-allowance", in.RetryAllowance}, {"the measured p99", p99}} {
		if f.d > 0 && in.Items > int64(maxDuration/f.d) {
			return Plan{}, fmt.Errorf("--items %d x %s %v is more than 292 years of work", in.Items, f.flag, f.d)
		}
	}

	p := Plan{Input: in}
	p.Window = in.Due - in.Start
	if p.Window < 0 {
		p.Window += 24 * time.Hour
		p.CrossesMidnight = true
	}
	if in.Margin >= p.Window {
		return Plan{}, fmt.Errorf("--margin %v leaves no time in the %v window from %s to %s",
			in.Margin, p.Window, FormatClock(in.Start), FormatClock(in.Due))
	}
	p.JobDeadline = p.Window - in.Margin
	p.Mean = p.scenario(mean)
	if p99 > 0 {
		s := p.scenario(p99)
		p.P99 = &s
	}
	work := float64(p.Mean.Work)
	p.WorkersNeeded = int64(math.Ceil(work / float64(p.JobDeadline)))
	if p.Mean.Slack > 0 && in.RetryAllowance > 0 {
		p.RetryItemsInSlack = int64(float64(p.Mean.Slack) * float64(in.Workers) / float64(in.RetryAllowance))
	}
	p.WorstCase = time.Duration(in.Items) * in.RetryAllowance
	p.WorstCaseWorkerDays = p.WorstCase.Hours() / 24
	p.Warnings = p.warnings()
	return p, nil
}

// scenario works out the wall clock at one item time.
func (p *Plan) scenario(item time.Duration) Scenario {
	in := p.Input
	s := Scenario{ItemTime: item, Work: time.Duration(in.Items) * item}
	s.WallByWorkers = s.Work / time.Duration(in.Workers)
	s.Wall, s.Bound = s.WallByWorkers, BoundWorkers
	if in.RPM > 0 {
		s.WallByRPM = time.Duration(float64(in.Items) / float64(in.RPM) * float64(time.Minute))
		if s.WallByRPM > s.Wall {
			s.Wall, s.Bound = s.WallByRPM, BoundRPM
		}
	}
	s.Slack = p.Window - s.Wall
	s.FitsDeadline = s.Wall <= p.JobDeadline
	return s
}

// warnings says what does not fit, and what would.
func (p *Plan) warnings() []string {
	var w []string
	m := p.Mean
	if !m.FitsDeadline {
		unprocessed := p.Input.Items - int64(float64(p.Input.Items)*float64(p.JobDeadline)/float64(m.Wall))
		what := fmt.Sprintf("the job needs %s of wall clock but the job deadline is %s: it will stop with about %s items unprocessed",
			Hours(m.Wall), Hours(p.JobDeadline), Thousands(unprocessed))
		if m.Bound == BoundRPM {
			need := int64(math.Ceil(float64(p.Input.Items) / p.JobDeadline.Minutes()))
			what += fmt.Sprintf("; the %d rpm limit binds: it needs at least %s rpm, or an earlier start", p.Input.RPM, Thousands(need))
		} else {
			what += fmt.Sprintf("; it needs at least %s workers, or an earlier start", Thousands(p.WorkersNeeded))
		}
		w = append(w, what)
	}
	if m.Slack < 0 {
		w = append(w, fmt.Sprintf("the job does not fit its window at all: %s of wall clock in a %s window", Hours(m.Wall), Hours(p.Window)))
	}
	if p.P99 != nil && m.FitsDeadline && !p.P99.FitsDeadline {
		w = append(w, fmt.Sprintf("on a bad night, with every item at the measured p99 of %s, the job needs %s and misses the %s job deadline",
			Short(p.P99.ItemTime), Hours(p.P99.Wall), Hours(p.JobDeadline)))
	}
	if p.Input.Measured != nil && p.Input.Measured.Items < 100 {
		w = append(w, fmt.Sprintf("the item time comes from only %d measured items; the mean and p99 are rough", p.Input.Measured.Items))
	}
	return w
}

// MeasuredFrom reads the batch path's item histogram of a results file:
// its mean and tail become the plan's item time. source names the file in
// errors and in the plan.
func MeasuredFrom(r *report.Results, source string) (*Measured, error) {
	path := r.Paths[report.PathBatch]
	if path == nil {
		return nil, fmt.Errorf("%s has no batch path (measure one with probe --mode batch)", source)
	}
	m := path.Metrics["item"]
	if m == nil {
		return nil, fmt.Errorf("%s: paths.batch.metrics has no item histogram", source)
	}
	h, err := histo.Decode(m.HDR)
	if err != nil {
		return nil, fmt.Errorf("%s: paths.batch.metrics.item.hdr: %w", source, err)
	}
	if h.Count() == 0 {
		return nil, fmt.Errorf("%s: the batch run measured no items", source)
	}
	us := func(v float64) time.Duration { return time.Duration(v * float64(time.Microsecond)) }
	return &Measured{
		Source: source,
		Items:  h.Count(),
		Mean:   us(h.Mean()),
		P50:    h.QuantileDuration(50),
		P99:    h.QuantileDuration(99),
		Max:    us(float64(h.Max())),
	}, nil
}

// ParseClock reads a time of day "HH:MM" (24-hour, "7:00" accepted) as
// the time since midnight.
func ParseClock(s string) (time.Duration, error) {
	hh, mm, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok || len(mm) != 2 || hh == "" || len(hh) > 2 || !digits(hh) || !digits(mm) {
		return 0, fmt.Errorf("%q is not a time of day HH:MM", s)
	}
	h, err1 := strconv.Atoi(hh)
	m, err2 := strconv.Atoi(mm)
	if err1 != nil || err2 != nil || h < 0 || h > 23 || m < 0 || m > 59 {
		return 0, fmt.Errorf("%q is not a time of day HH:MM (00:00 to 23:59)", s)
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute, nil
}

// FormatClock writes a time since midnight as HH:MM.
func FormatClock(d time.Duration) string {
	return fmt.Sprintf("%02d:%02d", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// digits reports whether s is all ASCII digits.
func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
