package probe

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestRetryable is the retry policy, case by case: what a batch item may
// be tried again after, and what never.
func TestRetryable(t *testing.T) {
	head := reachedConnect | reachedHead
	body := head | reachedFirstByte
	cases := []struct {
		name string
		rec  Record
		want bool
	}{
		// The connection was refused: nothing reached the provider.
		{"refused", Record{Outcome: OutcomeTransport, Error: "dial tcp: connection refused"}, true},
		// Reset after connecting, before the head: no answer came.
		{"reset before head", Record{Outcome: OutcomeTransport, reached: reachedConnect, Error: "read: connection reset by peer"}, true},
		// A bad certificate does not fix itself while we wait.
		{"tls certificate", Record{Outcome: OutcomeTransport, Error: "tls: failed to verify certificate: x509: unknown authority"}, false},
		// A reset after the head: the provider was answering.
		{"reset after head", Record{Outcome: OutcomeTransport, Status: 200, reached: head}, false},
		{"timeout.connect", Record{Outcome: "timeout.connect"}, true},
		{"timeout.head", Record{Outcome: "timeout.head", reached: reachedConnect}, true},
		{"timeout.first_token", Record{Outcome: "timeout.first_token", Status: 200, reached: head}, true},
		// The per-item ceiling fired while the head was still awaited.
		{"timeout.total before a byte", Record{Outcome: "timeout.total", reached: reachedConnect}, true},
		// The ceiling fired while the body was coming: the work was done.
		{"timeout.total mid body", Record{Outcome: "timeout.total", Status: 200, reached: body}, false},
		{"timeout.idle", Record{Outcome: "timeout.idle", Status: 200, reached: body}, false},
		{"timeout.gap after content", Record{Outcome: "timeout.gap", Status: 200, Deltas: 3, reached: body | reachedTTFT}, false},
		{"http.429", Record{Outcome: "http.429", Status: 429, reached: head, RetryAfter: time.Second}, true},
		{"http.503", Record{Outcome: "http.503", Status: 503, reached: head}, true},
		{"http.529", Record{Outcome: "http.529", Status: 529, reached: head}, true},
		// Every other 4xx fails the same way again.
		{"http.400", Record{Outcome: "http.400", Status: 400, reached: head}, false},
		{"http.401", Record{Outcome: "http.401", Status: 401, reached: head}, false},
		{"http.403", Record{Outcome: "http.403", Status: 403, reached: head}, false},
		{"http.404", Record{Outcome: "http.404", Status: 404, reached: head}, false},
		{"http.413", Record{Outcome: "http.413", Status: 413, reached: head}, false},
		{"http.422", Record{Outcome: "http.422", Status: 422, reached: head}, false},
		// 500 is not in the list: the provider may have done the work.
		{"http.500", Record{Outcome: "http.500", Status: 500, reached: head}, false},
		// Shed after admission, before any content.
		{"overloaded before content", Record{Outcome: "stream_error.overloaded_error", Status: 200, reached: body}, true},
		// Shed after content: a retry would pay for the generation twice.
		{"overloaded after content", Record{Outcome: "stream_error.overloaded_error", Status: 200, Deltas: 2, reached: body | reachedTTFT}, false},
		{"server_error event", Record{Outcome: "stream_error.server_error", Status: 200, reached: body}, false},
		{"ok", Record{Outcome: OutcomeOK, Status: 200, reached: body}, false},
		// The run is ending: never retry a canceled call.
		{"canceled", Record{Outcome: OutcomeCanceled}, false},
		{"truncated", Record{Outcome: OutcomeTruncated, Status: 200, reached: body}, false},
		{"protocol", Record{Outcome: OutcomeProtocol, Status: 200, reached: body}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Retryable(&tc.rec); got != tc.want {
				t.Errorf("Retryable(%s) = %v, want %v", tc.rec.Outcome, got, tc.want)
			}
		})
	}
	if Retryable(nil) {
		t.Error("Retryable(nil) = true")
	}
}

// TestBackoffFullJitter: every wait lies in [0, min(max, base*2^(n-1))],
// the draws use the whole window, and a seed reproduces them.
func TestBackoffFullJitter(t *testing.T) {
	b := Backoff{Base: 100 * time.Millisecond, Max: 3 * time.Second}
	ceilings := []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond,
		800 * time.Millisecond, 1600 * time.Millisecond, 3 * time.Second, 3 * time.Second}
	for n, want := range ceilings {
		if got := b.Ceiling(n); got != want {
			t.Errorf("Ceiling(%d) = %v, want %v", n, got, want)
		}
	}
	if got := b.Ceiling(1000); got != b.Max {
		t.Errorf("Ceiling(1000) = %v, want the max %v (no overflow)", got, b.Max)
	}
	if got := (Backoff{Base: time.Hour}).Ceiling(200); got <= 0 {
		t.Errorf("uncapped Ceiling(200) = %v, want positive (no overflow)", got)
	}

	draw := func(seed uint64) []time.Duration {
		rng := rand.New(rand.NewPCG(seed, 1))
		var out []time.Duration
		for n := 1; n <= 7; n++ {
			for range 200 {
				out = append(out, b.Wait(n, rng))
			}
		}
		return out
	}
	a := draw(42)
	var lowHalf, highHalf int
	for i, w := range a {
		n := i/200 + 1
		c := b.Ceiling(n)
		if w < 0 || w > c {
			t.Fatalf("retry %d waited %v, want within [0, %v]", n, w, c)
		}
		if w < c/2 {
			lowHalf++
		} else {
			highHalf++
		}
	}
	// Full jitter, not "half jitter" or a fixed wait: both halves of the
	// window are used (1400 draws; each half expects about 700).
	if lowHalf < 500 || highHalf < 500 {
		t.Errorf("draws in the low/high half of the window: %d/%d, want both near 700", lowHalf, highHalf)
	}
	bb := draw(42)
	for i := range a {
		if a[i] != bb[i] {
			t.Fatalf("draw %d: %v then %v with the same seed", i, a[i], bb[i])
		}
	}
	c := draw(43)
	same := 0
	for i := range a {
		if a[i] == c[i] {
			same++
		}
	}
	if same == len(a) {
		t.Error("seeds 42 and 43 drew the same waits")
	}
}

// TestRetryPolicyNext: what follows an attempt — the wait (retry-after
// wins when longer), and when the attempts, the budget or the deadline
// stop the retries.
func TestRetryPolicyNext(t *testing.T) {
	now := time.Now()
	p := retryPolicy{attempts: 3, budget: 5 * time.Second, backoff: Backoff{Base: 10 * time.Millisecond, Max: 10 * time.Millisecond}}
	rl := &Record{Outcome: "http.429", Status: 429, reached: reachedConnect | reachedHead, RetryAfter: time.Second}
	bad := &Record{Outcome: "http.400", Status: 400, reached: reachedConnect | reachedHead}
	busy := &Record{Outcome: "http.503", Status: 503, reached: reachedConnect | reachedHead}
	cases := []struct {
		name     string
		rec      *Record
		n        int
		waited   time.Duration
		deadline time.Time
		wantWait time.Duration // exact, or the most when wantMax
		wantMax  bool
		outcome  string
	}{
		// retry-after asks for longer than the backoff: it wins.
		{name: "retry-after wins", rec: rl, n: 1, wantWait: time.Second},
		// No retry-after: the jittered backoff.
		{name: "backoff", rec: busy, n: 1, wantWait: 10 * time.Millisecond, wantMax: true},
		// The third attempt of three is the last.
		{name: "attempts used up", rec: rl, n: 3, outcome: "http.429"},
		// 4.5s waited, 1s more would pass the 5s budget: stop, failed.
		{name: "budget", rec: rl, n: 2, waited: 4500 * time.Millisecond, outcome: "http.429"},
		// Exactly the budget is allowed.
		{name: "budget exactly", rec: rl, n: 2, waited: 4 * time.Second, wantWait: time.Second},
		// The wait would end after the job deadline: the item is cut short.
		{name: "deadline", rec: rl, n: 1, deadline: now.Add(500 * time.Millisecond), outcome: OutcomeCanceled},
		{name: "deadline later", rec: rl, n: 1, deadline: now.Add(2 * time.Second), wantWait: time.Second},
		{name: "not retryable", rec: bad, n: 1, outcome: "http.400"},
		{name: "canceled", rec: &Record{Outcome: OutcomeCanceled}, n: 1, outcome: OutcomeCanceled},
		{name: "ok", rec: &Record{Outcome: OutcomeOK}, n: 1, outcome: OutcomeOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wait, outcome := p.next(tc.rec, tc.n, tc.waited, tc.deadline, now, rand.New(rand.NewPCG(1, 2)))
			if outcome != tc.outcome {
				t.Fatalf("outcome %q, want %q", outcome, tc.outcome)
			}
			if outcome != "" {
				return
			}
			if tc.wantMax && (wait < 0 || wait > tc.wantWait) || !tc.wantMax && wait != tc.wantWait {
				t.Errorf("wait %v, want %v (max: %v)", wait, tc.wantWait, tc.wantMax)
			}
		})
	}
}
