package probe

import (
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// Defaults of the batch path's retry policy, used when the RunOptions field
// is 0. They are the bulk column of design note 002: several attempts and
// minutes of patience per item, because nobody is watching one item and the
// job deadline, not the item, bounds the total.
const (
	// DefaultAttempts is the most attempts one item gets (the first call
	// included).
	DefaultAttempts = 5
	// DefaultRetryBudget is the most time one item spends WAITING between
	// attempts (calls themselves are bounded by the clocks).
	DefaultRetryBudget = 10 * time.Minute
	// DefaultBackoffBase is the ceiling of the first retry's backoff.
	DefaultBackoffBase = time.Second
	// DefaultBackoffMax caps the backoff ceiling of any retry.
	DefaultBackoffMax = time.Minute
)

// Retryable is the batch path's retry policy: it reports whether an item
// whose attempt ended as rec may be tried again. It says only whether a
// retry is safe and useful; the attempt count, the retry budget and the job
// deadline decide whether one is made.
//
// A retry is made only when the provider cannot have produced any part of
// the answer and the failure is one that waiting can cure:
//
//   - transport failures before the response head (refused, reset, DNS):
//     the request never got an answer. A TLS certificate failure is not
//     retried: no wait fixes it.
//   - timeouts that fired before the first body byte (timeout.connect,
//     timeout.head, timeout.first_token, and a total or ttft clock that
//     fired while no byte had come): the target was slow or busy.
//   - http.429 (rate limited), http.503 (unavailable) and http.529
//     (overloaded): the provider asks us to come back later, often with a
//     retry-after that the engine honours.
//   - stream_error.overloaded_error before any content: the provider
//     admitted the call and then shed it.
//
// Never retried: ok and canceled calls; any call that received content
// (retrying it would pay for the same generation twice); every other HTTP
// status, in particular each 4xx other than 429 (400, 401, 403, 404, 413,
// 422: the same request fails the same way) and 500/502/504 (the provider
// may have done the work, and the error is often the request's own);
// truncated and protocol outcomes; timeouts after the first body byte.
func Retryable(rec *Record) bool {
	if rec == nil || rec.HasTTFT() || rec.Deltas > 0 {
		return false
	}
	switch o := rec.Outcome; {
	case o == OutcomeTransport:
		return !rec.HasHead() && !strings.Contains(rec.Error, "x509:")
	case strings.HasPrefix(o, "timeout."):
		return !rec.HasFirstByte()
	case o == "http.429", o == "http.503", o == "http.529":
		return true
	case o == "stream_error.overloaded_error":
		return true
	}
	return false
}

// Backoff is exponential backoff with full jitter: retry n (1 for the
// first retry) waits a uniform draw from [0, min(Max, Base*2^(n-1))].
// Full jitter spreads retries of items that failed together (a rate-limit
// episode hits many at once) over the whole window instead of sending them
// back in lockstep.
type Backoff struct {
	// Base is the ceiling of the first retry's wait.
	Base time.Duration
	// Max caps every ceiling; 0 caps nothing.
	Max time.Duration
}

// Ceiling is the most retry n (n >= 1) may wait: min(Max, Base*2^(n-1)).
// A Max of 0 or less caps nothing; the ceiling never overflows.
func (b Backoff) Ceiling(n int) time.Duration {
	if b.Base <= 0 || n < 1 {
		return 0
	}
	limit := b.Max
	if limit <= 0 {
		limit = math.MaxInt64
	}
	c := min(b.Base, limit)
	for i := 1; i < n && c < limit; i++ {
		if c > limit/2 {
			return limit
		}
		c *= 2
	}
	return c
}

// Wait draws the wait before retry n from rng: uniform in [0, Ceiling(n)].
// The same rng state gives the same waits, so a seeded run retries on the
// same schedule.
func (b Backoff) Wait(n int, rng *rand.Rand) time.Duration {
	c := b.Ceiling(n)
	if c <= 0 {
		return 0
	}
	if c == math.MaxInt64 {
		return time.Duration(rng.Int64N(int64(c)))
	}
	return time.Duration(rng.Int64N(int64(c) + 1))
}
