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
//
// The two paths are driven differently. The stream path is a load test: it
// makes calls, cycling through the prompts, until -n or -d is used up. The
// batch path is a job: each prompt is one item, processed once, in order,
// with retries (Attempts, RetryBudget, BackoffBase, BackoffMax) and under
// a JobDeadline; the run ends when every item has its outcome.
type RunOptions struct {
	// Caller makes the calls.
	Caller *Caller
	// Request is the template of every call: base URL, model, max tokens,
	// key and headers. Its Messages, System and Stream are set per call.
	Request wire.Request
	// Prompts is the workload. Stream calls draw from it in a seeded order;
	// on the batch path each prompt is one item (ID Prompt.ID, else its
	// 1-based position), taken in order.
	Prompts []Prompt
	// Mode is ModeStream, ModeBatch or ModeBoth (the two paths side by
	// side, sharing Concurrency; see BatchConcurrency).
	Mode string
	// Requests bounds the stream path by the number of measured calls
	// (warmup excluded) and caps the batch path's items at the first
	// Requests prompts; 0 means no bound (all items on the batch path).
	// ModeStream needs Requests or Duration.
	Requests int
	// Duration bounds when calls and items START; calls in flight at the
	// deadline finish under their own clocks, and a batch item in flight
	// finishes with its retries. Items not started by then are unprocessed.
	// 0 means no bound.
	Duration time.Duration
	// Concurrency is the number of workers in a closed loop, and the most
	// calls in flight in an open loop (0: unbounded). On the batch path a
	// worker holds an item through its retries and waits.
	Concurrency int
	// BatchConcurrency, in ModeBoth, is how many of the Concurrency workers
	// process batch items; the rest make stream calls. 0 means half
	// (rounded down); each path gets at least one worker.
	BatchConcurrency int
	// Rate, when positive, makes the run an open loop of Rate calls per
	// second (ModeStream and the stream path of ModeBoth) or Rate item
	// starts per second (ModeBatch; ModeBoth's batch path stays a closed
	// loop); latencies then count from each call's intended start.
	Rate float64
	// Arrival is ArrivalConstant or ArrivalPoisson (open loop only).
	Arrival string
	// Warmup calls are made first and marked Warmup: stream calls in
	// ModeStream and ModeBoth, non-streaming calls on the first prompts in
	// ModeBatch (they are not items and are never retried).
	Warmup int
	// Seed makes prompt order, arrivals and retry jitter reproducible.
	Seed int64
	// Shard takes a deterministic 1/N of the calls, the items and the
	// rate. A run resumed from a cursor gets that shard's items already:
	// leave Shard zero then.
	Shard shard.Shard

	// Attempts is the most calls one batch item gets, the first included;
	// 0 means DefaultAttempts, 1 means no retries.
	Attempts int
	// RetryBudget is the most time one batch item may spend WAITING
	// between attempts; a retry whose wait would exceed it is not made.
	// 0 means DefaultRetryBudget.
	RetryBudget time.Duration
	// BackoffBase and BackoffMax shape the exponential backoff with full
	// jitter between attempts (see Backoff); a provider's retry-after wins
	// when it asks for longer. 0 means DefaultBackoffBase/DefaultBackoffMax.
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// JobDeadline, counted from the run's start, ends the batch job: when it
	// passes no item starts, items in flight are canceled, no wait extends
	// past it, and the items left are reported unprocessed (Summary).
	// Warmup calls count against it. 0 means no job deadline.
	JobDeadline time.Duration
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
	case o.Mode == ModeStream && o.Requests == 0 && o.Duration == 0:
		return errors.New("run: bound the run with a number of requests or a duration")
	case o.Concurrency < 0:
		return fmt.Errorf("concurrency %d: must not be negative", o.Concurrency)
	case o.BatchConcurrency < 0:
		return fmt.Errorf("batch concurrency %d: must not be negative", o.BatchConcurrency)
	case o.Rate < 0:
		return fmt.Errorf("rate %v: must not be negative", o.Rate)
	case o.Rate == 0 && o.Concurrency == 0:
		return errors.New("run: a closed loop needs a concurrency of at least 1")
	case o.Arrival != "" && o.Arrival != ArrivalConstant && o.Arrival != ArrivalPoisson:
		return fmt.Errorf("arrival %q: want constant or poisson", o.Arrival)
	case o.Warmup < 0:
		return fmt.Errorf("warmup %d: must not be negative", o.Warmup)
	case o.Attempts < 0:
		return fmt.Errorf("attempts %d: must be at least 1 (or 0 for the default, %d)", o.Attempts, DefaultAttempts)
	case o.RetryBudget < 0:
		return fmt.Errorf("retry budget %v: must not be negative", o.RetryBudget)
	case o.BackoffBase < 0 || o.BackoffMax < 0:
		return fmt.Errorf("backoff %v..%v: must not be negative", o.BackoffBase, o.BackoffMax)
	case o.JobDeadline < 0:
		return fmt.Errorf("job deadline %v: must not be negative", o.JobDeadline)
	}
	if b := o.backoff(); b.Max < b.Base {
		return fmt.Errorf("backoff max %v is below its base %v", b.Max, b.Base)
	}
	return nil
}

// GCPercent is the garbage collector's target a probe process should run
// with (runtime/debug.SetGCPercent), unless the user set GOGC. With the
// default of 100, 2,000 in-flight streams keep the collector marking often
// enough that its assists delay the goroutine reading a stream by tens of
// milliseconds at p99, and that delay lands in the measured TTFT; at 400
// the probe's own share of the TTFT error falls under 5 ms at p99
// (docs/benchmarks.md), for a heap of up to five times the live data.
const GCPercent = 400

// openLoopCeiling bounds the calls in flight of an open loop given no
// concurrency.
const openLoopCeiling = 10000

// workers splits the run's concurrency between the paths. In ModeBoth the
// paths get separate worker pools so that a batch item holding its worker
// through minutes of retries cannot starve the stream path, and a burst of
// stream calls cannot stall the job.
func (o *RunOptions) workers() (stream, batch int) {
	switch o.Mode {
	case ModeStream:
		stream = o.Concurrency
	case ModeBatch:
		batch = o.Concurrency
	case ModeBoth:
		batch = o.BatchConcurrency
		if batch == 0 {
			batch = o.Concurrency / 2
		}
		batch = max(batch, 1)
		stream = max(o.Concurrency-batch, 1)
	}
	if o.Rate > 0 && o.Concurrency == 0 {
		stream = openLoopCeiling
		if o.Mode == ModeBatch {
			batch = openLoopCeiling
		}
	}
	return stream, batch
}

// Summary is what a run reports besides its records: above all, on the
// batch path, which items were not processed (a cursor names exactly them).
type Summary struct {
	// Started and Ended bracket the run; the job deadline counts from Started.
	Started time.Time
	Ended   time.Time
	// Interrupted reports that ctx ended (SIGINT) before the run did.
	Interrupted bool
	// Items is the number of batch items the run took (after Requests and
	// the shard); 0 in ModeStream.
	Items int
	// Unprocessed lists, in item order, the IDs of the batch items without
	// an outcome of their own: never started (the job deadline, the
	// duration or an interrupt came first) or cut short (canceled in flight
	// or between attempts). Items that failed are not in it.
	Unprocessed []string
	// DeadlineExceeded reports that the job deadline passed with items
	// unprocessed.
	DeadlineExceeded bool
}

// job is one stream call to make: which prompt, when.
type job struct {
	seq      int // 0-based over the run, warmup included
	prompt   int
	warmup   bool
	intended time.Time
}

// Run is RunWithSummary without the summary.
func Run(ctx context.Context, opts RunOptions, emit func(*Record)) error {
	_, err := RunWithSummary(ctx, opts, emit)
	return err
}

// RunWithSummary drives the load until the stream path's requests or
// duration are used up and the batch path's items all have their outcome,
// or ctx ends, and calls emit with every record (every attempt), from one
// goroutine, in completion order. Calls in flight when ctx ends are
// canceled and still emitted (outcome canceled). It returns when every
// call has been emitted, with the run's Summary.
//
// In ModeBoth with neither Requests nor Duration, the stream path runs for
// as long as the batch path does. A batch attempt that will be retried is
// emitted when its wait ends (then it is known whether it was the item's
// last), so a progress display sees it late by that wait.
func RunWithSummary(ctx context.Context, opts RunOptions, emit func(*Record)) (Summary, error) {
	if err := opts.Validate(); err != nil {
		return Summary{}, err
	}
	sum := Summary{Started: time.Now()}
	startCtx := ctx
	if opts.Duration > 0 {
		var cancel context.CancelFunc
		// The duration bounds when calls START (warmup included); calls in
		// flight at the deadline finish under their own clocks, as in k6's
		// graceful stop. Only ctx (an interrupt) cancels them.
		startCtx, cancel = context.WithTimeout(ctx, opts.Duration)
		defer cancel()
	}
	records := make(chan *Record, 256)
	streamWorkers, batchWorkers := opts.workers()
	var wg sync.WaitGroup
	var batch *batchRun
	streamStart, stopStream := context.WithCancel(startCtx)
	defer stopStream()
	if opts.Mode != ModeStream {
		batch = newBatchRun(opts, sum.Started, batchWorkers)
		wg.Add(1)
		go func() {
			defer wg.Done()
			batch.run(ctx, startCtx, records)
			if opts.Requests == 0 && opts.Duration == 0 {
				stopStream() // the stream path was bounded by the job
			}
		}()
	}
	if opts.Mode != ModeBatch {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runStream(ctx, streamStart, opts, streamWorkers, records)
		}()
	}
	go func() {
		wg.Wait()
		close(records)
	}()
	for r := range records {
		emit(r)
	}
	sum.Ended = time.Now()
	sum.Interrupted = ctx.Err() != nil
	if batch != nil {
		batch.summarize(&sum)
	}
	return sum, nil
}

// runStream is the stream path: jobs from a jobGen, handed out as fast as
// workers take them (closed loop) or at their intended starts (open loop).
// startCtx gates new calls; ctx cancels calls in flight.
func runStream(ctx, startCtx context.Context, opts RunOptions, workers int, records chan<- *Record) {
	jobs := make(chan job)
	gen := newJobGen(opts)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(jobs)
		release := func(intended time.Time) bool {
			j, ok := gen.next(intended)
			if !ok {
				return false
			}
			select {
			case jobs <- j:
				return true
			case <-startCtx.Done():
				return false
			}
		}
		if opts.Rate > 0 {
			pace(startCtx, opts, release)
			return
		}
		for release(time.Time{}) {
		}
	}()
	do := func(j job) {
		rec := opts.call(ctx, j.prompt, true, j.intended)
		rec.Warmup = j.warmup
		records <- rec
	}
	if opts.Rate > 0 {
		// An open loop starts a goroutine per call, at most workers at once:
		// its ceiling can be large without idle goroutines standing by.
		slots := make(chan struct{}, workers)
		for j := range jobs {
			slots <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				do(j)
				<-slots
			}()
		}
	} else {
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range jobs {
					do(j)
				}
			}()
		}
	}
	wg.Wait()
}

// call makes one call (attempt 1) for prompt i on the given path.
func (o *RunOptions) call(ctx context.Context, i int, stream bool, intended time.Time) *Record {
	p := o.Prompts[i]
	req := o.Request
	req.Stream = stream
	req.System = p.System
	req.Messages = p.Messages
	if p.MaxTokens > 0 {
		req.MaxTokens = p.MaxTokens
	}
	rec := o.Caller.Call(ctx, req, intended)
	rec.Item = itemID(p, i)
	rec.Attempt = 1
	return rec
}

// itemID is prompt i's ID, or its 1-based position when it has none.
func itemID(p Prompt, i int) string {
	if p.ID != "" {
		return p.ID
	}
	return strconv.Itoa(i + 1)
}

// jobGen hands out stream jobs in order; it is used by one goroutine.
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
		// A seeded draw for every sequence number, owned or not, so that a
		// shard sees the same prompts the unsplit run would have given it.
		prompt := g.rng.IntN(len(g.opts.Prompts))
		if !g.opts.Shard.IsZero() && !g.opts.Shard.Owns(seq) {
			continue
		}
		g.seq++
		return job{seq: seq, prompt: prompt, intended: intended, warmup: seq < g.opts.Warmup}, true
	}
}

// pace is the open loop: it calls release with each intended start, at
// that start, until release returns false or ctx ends; it never waits for
// calls to finish. When every worker is busy release blocks, the following
// intended starts fall into the past, and each call carries its own
// lateness (Record.Lag) — the scheduler's lag is measured rather than
// silently stretching the schedule (coordinated omission).
func pace(ctx context.Context, opts RunOptions, release func(intended time.Time) bool) {
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
		if !release(intended) {
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
