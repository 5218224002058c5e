// Package probe is tollgate's engine: it runs LLM calls under the seven
// clocks of SPEC §2, measures every phase, classifies every outcome, and
// drives load. It never prints and never exits; results flow out as
// Records to whatever consumes them.
package probe

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Clock names one of the seven clocks of SPEC §2.
type Clock uint8

// The seven clocks. Transport clocks see bytes; content clocks (TTFT, Gap)
// see only content deltas, so pings and comments never re-arm them.
const (
	ClockConnect Clock = iota
	ClockHead
	ClockFirstToken
	ClockIdle
	ClockTotal
	ClockTTFT
	ClockGap
	numClocks
)

var clockNames = [numClocks]string{"connect", "head", "first_token", "idle", "total", "ttft", "gap"}

// String returns the clock's name as used in outcomes ("timeout.<name>").
func (c Clock) String() string {
	if c < numClocks {
		return clockNames[c]
	}
	return fmt.Sprintf("clock(%d)", uint8(c))
}

// Clocks holds the limits of the seven clocks; a zero limit turns a clock off.
// Head applies to streaming calls and HeadBatch to non-streaming ones
// (ADR-0036: a non-streaming head IS the answer, so it needs a longer wait).
// ItemCeiling, when set, replaces Total for non-streaming calls (a route's
// batch.item_ceiling).
type Clocks struct {
	Connect     time.Duration
	Head        time.Duration
	HeadBatch   time.Duration
	FirstToken  time.Duration
	Idle        time.Duration
	Total       time.Duration
	TTFT        time.Duration
	Gap         time.Duration
	ItemCeiling time.Duration
}

// Validate refuses negative limits.
func (c Clocks) Validate() error {
	for _, v := range []struct {
		name string
		d    time.Duration
	}{{"connect", c.Connect}, {"head", c.Head}, {"head-batch", c.HeadBatch}, {"first-token", c.FirstToken},
		{"idle", c.Idle}, {"total", c.Total}, {"ttft", c.TTFT}, {"gap", c.Gap}, {"item-ceiling", c.ItemCeiling}} {
		if v.d < 0 {
			return fmt.Errorf("clock %s is %v: a limit must be positive, or 0 to turn the clock off", v.name, v.d)
		}
	}
	return nil
}

// TimeoutError is the cause a fired clock cancels its call with.
type TimeoutError struct {
	Clock Clock
	Limit time.Duration
}

// Error names the clock that fired and its limit.
func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s timeout (%v) fired", e.Clock, e.Limit)
}

// watchdog runs the clocks of one call on a single timer.
//
// Each clock is a deadline on the monotonic clock; the timer is set to the
// earliest armed deadline and, when it fires, cancels the call's context
// with a *TimeoutError naming the clock. Re-arming a clock to a LATER
// deadline (idle after every read, gap after every content delta) does not
// touch the timer: when the timer fires early it finds nothing expired and
// re-sets itself to the new earliest deadline. So the per-read cost on the
// hot path is one uncontended lock, and a clock fires at its deadline, not
// at the next event.
type watchdog struct {
	mu      sync.Mutex
	limits  [numClocks]time.Duration
	at      [numClocks]time.Time // zero: disarmed
	timer   *time.Timer
	timerAt time.Time
	cancel  context.CancelCauseFunc
	fired   bool
	stopped bool
}

func newWatchdog(limits [numClocks]time.Duration, cancel context.CancelCauseFunc) *watchdog {
	w := &watchdog{limits: limits, cancel: cancel}
	w.timer = time.AfterFunc(time.Hour, w.fire)
	w.timer.Stop()
	return w
}

// arm starts clock c at from; it does nothing when the clock is off.
func (w *watchdog) arm(c Clock, from time.Time) {
	limit := w.limits[c]
	if limit <= 0 {
		return
	}
	at := from.Add(limit)
	w.mu.Lock()
	if !w.fired && !w.stopped {
		w.at[c] = at
		if w.timerAt.IsZero() || at.Before(w.timerAt) {
			w.timerAt = at
			w.timer.Reset(time.Until(at))
		}
	}
	w.mu.Unlock()
}

// disarm stops clock c. The timer is left as it is (see the type's comment).
func (w *watchdog) disarm(c Clock) {
	w.mu.Lock()
	w.at[c] = time.Time{}
	w.mu.Unlock()
}

// fire runs on the timer's goroutine.
func (w *watchdog) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fired || w.stopped {
		return
	}
	now := time.Now()
	var earliest time.Time
	expired := numClocks
	for c := Clock(0); c < numClocks; c++ {
		at := w.at[c]
		if at.IsZero() {
			continue
		}
		if earliest.IsZero() || at.Before(earliest) {
			earliest = at
			if !at.After(now) {
				expired = c
			}
		}
	}
	if expired < numClocks {
		w.fired = true
		w.cancel(&TimeoutError{Clock: expired, Limit: w.limits[expired]})
		return
	}
	w.timerAt = earliest
	if !earliest.IsZero() {
		w.timer.Reset(earliest.Sub(now))
	}
}

// stop ends the watchdog; no clock fires after it returns.
func (w *watchdog) stop() {
	w.mu.Lock()
	w.stopped = true
	w.timer.Stop()
	w.mu.Unlock()
}
