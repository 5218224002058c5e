package probe

import (
	"context"
	"hash/fnv"
	"math/rand/v2"
	"sync"
	"time"
)

// backoff is the run's backoff with the defaults filled in.
func (o *RunOptions) backoff() Backoff {
	b := Backoff{Base: o.BackoffBase, Max: o.BackoffMax}
	if b.Base == 0 {
		b.Base = DefaultBackoffBase
	}
	if b.Max == 0 {
		b.Max = max(DefaultBackoffMax, b.Base)
	}
	return b
}

// retryPolicy is the batch path's retry settings with the defaults filled in.
type retryPolicy struct {
	attempts int
	budget   time.Duration
	backoff  Backoff
}

func newRetryPolicy(o *RunOptions) retryPolicy {
	p := retryPolicy{attempts: o.Attempts, budget: o.RetryBudget, backoff: o.backoff()}
	if p.attempts == 0 {
		p.attempts = DefaultAttempts
	}
	if p.budget == 0 {
		p.budget = DefaultRetryBudget
	}
	return p
}

// next decides what follows attempt n (1-based) of an item that has waited
// `waited` so far, at time now. It returns the item's outcome when rec is
// its final attempt, or "" and the wait before the next attempt.
//
// The wait is the larger of the jittered backoff and the provider's
// retry-after: a provider that names a time is believed, and the backoff
// still spreads retries when it names none. A retry is not made when its
// wait would take the item's total waiting past the budget (the item
// fails with this attempt's outcome), nor when it would end after the
// deadline (the job is ending: the item is cut short, canceled).
func (p retryPolicy) next(rec *Record, n int, waited time.Duration, deadline, now time.Time, rng *rand.Rand) (time.Duration, string) {
	switch {
	case rec.Outcome == OutcomeCanceled:
		return 0, OutcomeCanceled
	case !Retryable(rec) || n >= p.attempts:
		return 0, rec.Outcome
	}
	wait := max(p.backoff.Wait(n, rng), rec.RetryAfter)
	if waited+wait > p.budget {
		return 0, rec.Outcome
	}
	if !deadline.IsZero() && now.Add(wait).After(deadline) {
		return 0, OutcomeCanceled
	}
	return wait, ""
}

// itemState is what became of one batch item.
type itemState uint8

const (
	itemPending  itemState = iota // never started
	itemFinished                  // ok or failed: it has its own outcome
	itemCut                       // canceled in flight or between attempts
)

// batchTask is one unit of batch work: an item (pos >= 0, its position
// in batchRun.items) or a warmup call (pos < 0).
type batchTask struct {
	pos      int
	prompt   int
	intended time.Time
}

// batchRun is the batch path of one run: every item once, with retries,
// under the job deadline.
type batchRun struct {
	opts    RunOptions
	policy  retryPolicy
	started time.Time
	workers int
	// items holds the prompt index of each item, in item order.
	items []int
	// state is written by the worker holding the item, and read by
	// summarize only after every worker has returned.
	state       []itemState
	deadlineHit bool
}

// newBatchRun takes the items: the first Requests prompts (all when 0),
// of which the shard owns its round-robin share, as the stream path's
// sharding does with call sequence numbers.
func newBatchRun(opts RunOptions, started time.Time, workers int) *batchRun {
	n := len(opts.Prompts)
	if opts.Requests > 0 {
		n = min(n, opts.Requests)
	}
	b := &batchRun{opts: opts, policy: newRetryPolicy(&opts), started: started}
	for i := 0; i < n; i++ {
		if opts.Shard.IsZero() || opts.Shard.Owns(i) {
			b.items = append(b.items, i)
		}
	}
	b.state = make([]itemState, len(b.items))
	b.workers = max(1, min(workers, len(b.items)+opts.Warmup))
	return b
}

// run processes the items. ctx is the run's (an interrupt cancels
// everything); startCtx ends when the run's duration does (no item starts
// after it, items in flight go on).
func (b *batchRun) run(ctx, startCtx context.Context, records chan<- *Record) {
	jobCtx := ctx
	if b.opts.JobDeadline > 0 {
		var cancel context.CancelFunc
		// The job deadline is a wall-clock commitment counted from the
		// run's start (not from the first item), on the monotonic clock of
		// Summary.Started. Calls and waits run under it, so it cancels
		// calls in flight and cuts waits short the moment it passes.
		jobCtx, cancel = context.WithDeadline(ctx, b.started.Add(b.opts.JobDeadline))
		defer cancel()
	}
	// gate ends when no item may start any more: the job deadline, the
	// duration or an interrupt, whichever comes first.
	gate, closeGate := context.WithCancel(jobCtx)
	defer closeGate()
	defer context.AfterFunc(startCtx, closeGate)()

	tasks := make(chan batchTask)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(tasks)
		b.feed(gate, tasks)
	}()
	for w := 0; w < b.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range tasks {
				// The feeder's select may pick a send over a closed gate:
				// check again, so that no item starts after the gate. The
				// job context is checked too: when its deadline passes it
				// is done before its children (the gate, this worker's
				// last call) are canceled one by one, so a worker freed by
				// that cancel can get here while the gate is still open.
				if gate.Err() != nil || jobCtx.Err() != nil {
					continue
				}
				if t.pos < 0 {
					rec := b.opts.call(jobCtx, t.prompt, false, time.Time{})
					rec.Warmup = true
					records <- rec
					continue
				}
				b.state[t.pos] = b.item(jobCtx, t, records)
			}
		}()
	}
	wg.Wait()
	b.deadlineHit = ctx.Err() == nil && jobCtx.Err() != nil
}

// feed hands out the warmup calls, then the items in order: as fast as
// workers take them, or at their intended starts in an open loop.
func (b *batchRun) feed(gate context.Context, tasks chan<- batchTask) {
	send := func(t batchTask) bool {
		select {
		case tasks <- t:
			return true
		case <-gate.Done():
			return false
		}
	}
	for w := 0; w < b.opts.Warmup; w++ {
		if !send(batchTask{pos: -1, prompt: w % len(b.opts.Prompts)}) {
			return
		}
	}
	if b.opts.Rate > 0 && b.opts.Mode == ModeBatch {
		k := 0
		pace(gate, b.opts, func(intended time.Time) bool {
			if k >= len(b.items) {
				return false
			}
			t := batchTask{pos: k, prompt: b.items[k], intended: intended}
			k++
			return send(t)
		})
		return
	}
	for k, p := range b.items {
		if !send(batchTask{pos: k, prompt: p}) {
			return
		}
	}
}

// item processes one item to its final outcome and emits every attempt.
//
// An attempt's record is emitted when the next attempt starts, not when
// the attempt ends: if the job ends during the wait, that attempt is the
// item's last and its record must say so (Final, ItemOutcome canceled).
func (b *batchRun) item(ctx context.Context, t batchTask, records chan<- *Record) itemState {
	id := itemID(b.opts.Prompts[t.prompt], t.prompt)
	rng := itemRand(b.opts.Seed, id)
	deadline, _ := ctx.Deadline()
	var waited, wait time.Duration
	var itemStart time.Time
	for n := 1; ; n++ {
		intended := time.Time{}
		if n == 1 {
			intended = t.intended
		}
		rec := b.opts.call(ctx, t.prompt, false, intended)
		rec.Attempt = n
		rec.Waited = wait
		if n == 1 {
			// The item's time counts from the first attempt's intended
			// start, so an open loop's queueing is part of it.
			itemStart = rec.Start.Add(-rec.Lag)
		}
		now := time.Now()
		var outcome string
		wait, outcome = b.policy.next(rec, n, waited, deadline, now, rng)
		if outcome == "" && !sleep(ctx, wait) {
			outcome, now = OutcomeCanceled, time.Now()
		}
		if outcome != "" {
			rec.Final = true
			rec.ItemOutcome = outcome
			rec.ItemTime = now.Sub(itemStart)
			records <- rec
			if outcome == OutcomeCanceled {
				return itemCut
			}
			return itemFinished
		}
		records <- rec
		waited += wait
	}
}

// itemRand is the retry-jitter source of one item: seeded by the run's
// seed and the item's ID, so an item draws the same waits whatever the
// scheduling, and again when a cursor resumes it.
func itemRand(seed int64, id string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(id))
	return rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
}

// sleep waits d, or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// summarize adds the batch path's accounting to sum.
func (b *batchRun) summarize(sum *Summary) {
	sum.Items = len(b.items)
	for k, st := range b.state {
		if st != itemFinished {
			p := b.items[k]
			sum.Unprocessed = append(sum.Unprocessed, itemID(b.opts.Prompts[p], p))
		}
	}
	sum.DeadlineExceeded = b.deadlineHit && len(sum.Unprocessed) > 0
}
