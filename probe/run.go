package probe

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/tollgate-dev/tollgate/probe/shard"
	"github.com/tollgate-dev/tollgate/probe/wire"
)

// Modes of a run.
const (
	ModeStream = "stream"
	ModeBatch  = "batch"
	ModeBoth   = "both"
)

// Arrival processes of an open-loop run.
const (
	ArrivalConstant = "constant"
	ArrivalPoisson  = "poisson"
)

// Prompt is one workload item: one call on the stream path, one item on
// the batch path.
type Prompt struct {
	// ID names the item; empty means its position (1-based) in the set.
	ID string `json:"id,omitempty"`
	// System is an optional system prompt.
	System string `json:"system,omitempty"`
	// Messages is the conversation.
	Messages []wire.Message `json:"messages"`
	// MaxTokens overrides the run's max tokens when positive.
	MaxTokens int `json:"max_tokens,omitempty"`
}

// RunOptions configure a load run. Validate checks them once.
type RunOptions struct {
	// Caller makes the calls.
	Caller *Caller
	// Request is the template of every call: base URL, model, max tokens,
	// key and headers. Its Messages, System and Stream are set per call.
	Request wire.Request
	// Prompts is the workload; calls cycle through it (in a seeded order
	// on the stream path, in file order on the batch path).
	Prompts []Prompt
	// Mode is ModeStream, ModeBatch or ModeBoth (calls alternate).
	Mode string
	// Requests bounds the run by the number of measured calls (warmup
	// excluded); 0 means no bound, and then Duration must be set.
	Requests int
	// Duration bounds the run by time; 0 means no bound.
	Duration time.Duration
	// Concurrency is the number of workers in a closed loop, and the most
	// calls in flight in an open loop (0: unbounded).
	Concurrency int
	// Rate, when positive, makes the run an open loop of Rate calls per
	// second; latencies then count from each call's intended start.
	Rate float64
	// Arrival is ArrivalConstant or ArrivalPoisson (open loop only).
	Arrival string
	// Warmup calls are made first and marked Warmup.
	Warmup int
	// Seed makes prompt order and arrivals reproducible.
	Seed int64
	// Shard takes a deterministic 1/N of the calls and of the rate.
	Shard shard.Shard
}

// Validate refuses options that cannot run, naming the option.
func (o *RunOptions) Validate() error {
	switch {
	case o.Caller == nil:
		return errors.New("run: no caller")
	case len(o.Prompts) == 0:
		return errors.New("run: no prompts")
	case o.Mode != ModeStream && o.Mode != ModeBatch && o.Mode != ModeBoth:
		return fmt.Errorf("mode %q: want stream, batch or both", o.Mode)
	case o.Requests < 0:
		return fmt.Errorf("requests %d: must not be negative", o.Requests)
	case o.Duration < 0:
		return fmt.Errorf("duration %v: must not be negative", o.Duration)
	case o.Requests == 0 && o.Duration == 0:
		return errors.New("run: bound the run with a number of requests or a duration")
	case o.Concurrency < 0:
		return fmt.Errorf("concurrency %d: must not be negative", o.Concurrency)
	case o.Rate < 0:
		return fmt.Errorf("rate %v: must not be negative", o.Rate)
	case o.Rate == 0 && o.Concurrency == 0:
		return errors.New("run: a closed loop needs a concurrency of at least 1")
	case o.Arrival != "" && o.Arrival != ArrivalConstant && o.Arrival != ArrivalPoisson:
		return fmt.Errorf("arrival %q: want constant or poisson", o.Arrival)
	case o.Warmup < 0:
		return fmt.Errorf("warmup %d: must not be negative", o.Warmup)
	}
	return nil
}

// job is one call to make: which prompt, which path, when.
type job struct {
	seq      int // 0-based over the run, warmup included
	prompt   int
	stream   bool
	warmup   bool
	intended time.Time
}

// Run drives the load until the requests or the duration are used up or
// ctx ends, and calls emit with every record, from one goroutine, in
// completion order. Calls in flight when ctx ends are canceled and still
// emitted (outcome canceled). Run returns when every call has been emitted.
func Run(ctx context.Context, opts RunOptions, emit func(*Record)) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	runCtx := ctx
	if opts.Duration > 0 {
		var cancel context.CancelFunc
		// The duration ends the run, not the calls in it: new calls stop at
		// the deadline and calls in flight are canceled then.
		runCtx, cancel = context.WithTimeout(ctx, opts.Duration) // warmup counts against it
		defer cancel()
	}
	jobs := make(chan job)
	records := make(chan *Record, 256)
	var wg sync.WaitGroup
	gen := newJobGen(opts)

	if opts.Rate > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pace(runCtx, opts, gen, jobs)
		}()
	} else {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(jobs)
			for {
				j, ok := gen.next(time.Time{})
				if !ok {
					return
				}
				select {
				case jobs <- j:
				case <-runCtx.Done():
					return
				}
			}
		}()
	}

	workers := opts.Concurrency
	if opts.Rate > 0 && workers == 0 {
		workers = 10000 // an open loop's ceiling on calls in flight
	}
	var wwg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			for j := range jobs {
				records <- runJob(runCtx, opts, j)
			}
		}()
	}
	go func() {
		wwg.Wait()
		wg.Wait()
		close(records)
	}()
	for r := range records {
		emit(r)
	}
	return nil
}

func runJob(ctx context.Context, opts RunOptions, j job) *Record {
	p := opts.Prompts[j.prompt]
	req := opts.Request
	req.Stream = j.stream
	req.System = p.System
	req.Messages = p.Messages
	if p.MaxTokens > 0 {
		req.MaxTokens = p.MaxTokens
	}
	rec := opts.Caller.Call(ctx, req, j.intended)
	rec.Item = p.ID
	if rec.Item == "" {
		rec.Item = strconv.Itoa(j.prompt + 1)
	}
	rec.Attempt = 1
	rec.Warmup = j.warmup
	return rec
}

// jobGen hands out jobs in order; it is used by one goroutine.
type jobGen struct {
	opts  RunOptions
	rng   *rand.Rand
	seq   int // jobs handed out, warmup included
	taken int // sequence numbers considered, for sharding
	limit int // warmup + requests for this shard; 0: unbounded
}

func newJobGen(opts RunOptions) *jobGen {
	g := &jobGen{opts: opts, rng: rand.New(rand.NewPCG(uint64(opts.Seed), 0x746f6c6c67617465))}
	if opts.Requests > 0 {
		g.limit = opts.Warmup + opts.Requests
	}
	return g
}

// next returns the next job of this shard, or false when the run's count is
// used up. Sharding keeps every N-th job of the unsplit sequence, so the
// shards of one probe together make exactly the calls of the unsplit run.
func (g *jobGen) next(intended time.Time) (job, bool) {
	for {
		if g.limit > 0 && g.taken >= g.limit {
			return job{}, false
		}
		seq := g.taken
		g.taken++
		prompt := g.pick(seq)
		if !g.opts.Shard.IsZero() && !g.opts.Shard.Owns(seq) {
			continue
		}
		g.seq++
		j := job{seq: seq, prompt: prompt, intended: intended, warmup: seq < g.opts.Warmup}
		switch g.opts.Mode {
		case ModeStream:
			j.stream = true
		case ModeBoth:
			j.stream = seq%2 == 0
		}
		return j, true
	}
}

// pick chooses the prompt of call seq: a seeded shuffle-free random draw on
// the stream path (reproducible for a seed), file order on the batch path.
// It draws for every sequence number, owned or not, so that a shard sees
// the same prompts the unsplit run would have given it.
func (g *jobGen) pick(seq int) int {
	n := len(g.opts.Prompts)
	if g.opts.Mode == ModeBatch {
		return seq % n
	}
	return g.rng.IntN(n)
}

// pace is the open loop: it hands out jobs at their intended starts and
// never waits for calls to finish. When every worker is busy the send
// blocks, the following intended starts fall into the past, and each call
// carries its own lateness (Record.Lag) — the scheduler's lag is measured
// rather than silently stretching the schedule (coordinated omission).
func pace(ctx context.Context, opts RunOptions, gen *jobGen, jobs chan<- job) {
	defer close(jobs)
	rate := opts.Shard.Rate(opts.Rate)
	rng := rand.New(rand.NewPCG(uint64(opts.Seed), 0x61727269766c))
	start := time.Now()
	var offset time.Duration
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for {
		intended := start.Add(offset)
		if wait := time.Until(intended); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return
			}
		}
		j, ok := gen.next(intended)
		if !ok {
			return
		}
		select {
		case jobs <- j:
		case <-ctx.Done():
			return
		}
		offset += interarrival(opts.Arrival, rate, rng)
	}
}

// interarrival is the time to the next intended start: 1/rate for a
// constant arrival, an exponential draw of mean 1/rate for Poisson.
func interarrival(arrival string, rate float64, rng *rand.Rand) time.Duration {
	mean := float64(time.Second) / rate
	if arrival == ArrivalPoisson {
		return time.Duration(rng.ExpFloat64() * mean)
	}
	return time.Duration(mean)
}
