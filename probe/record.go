package probe

import (
	"time"
)

// Path names the two ways a call is made (SPEC §4).
const (
	PathStream = "stream" // interactive: "stream": true
	PathBatch  = "batch"  // bulk: "stream": false
)

// Phases an outcome happened in (SPEC §3).
const (
	PhaseBeforeHead      = "before_head"
	PhaseBeforeFirstByte = "before_first_byte"
	PhaseBeforeContent   = "before_content"
	PhaseMidStream       = "mid_stream"
)

// Outcome classes (SPEC §3). Timeouts are "timeout." + the clock's name,
// HTTP errors "http." + the status, stream errors "stream_error." + type.
const (
	OutcomeOK        = "ok"
	OutcomeTruncated = "truncated"
	OutcomeProtocol  = "protocol"
	OutcomeTransport = "transport"
	OutcomeCanceled  = "canceled"
)

// reached is a bit set of the phase metrics a call got to.
type reached uint16

const (
	reachedConnect reached = 1 << iota
	reachedHead
	reachedFirstByte
	reachedTTFT
	reachedTotal
	// reachedContent marks a non-streaming body that held content: such a
	// call has no TTFT (nothing streams), but it did get past its content.
	reachedContent
)

// Record is everything one call attempt measured. Durations of the phase
// metrics are set only when the call reached the phase (see Has*).
//
// Every duration derives from one monotonic base, the call's start; in an
// open-loop run TTFT and Total count from the INTENDED start instead, so
// time spent queued behind a slow target is measured, not hidden.
type Record struct {
	// Path is PathStream or PathBatch.
	Path string
	// Item identifies the prompt or batch item the call was for.
	Item string
	// Attempt is 1 for a first attempt, 2 for the first retry, ...
	Attempt int
	// Warmup marks calls excluded from the statistics.
	Warmup bool

	// Final marks the last attempt of a batch item: it carries the item's
	// outcome. Warmup calls and stream calls are never Final.
	Final bool
	// ItemOutcome is the item's outcome, set on Final records only: the
	// final attempt's Outcome, or OutcomeCanceled when the job deadline or
	// an interrupt cut the item short, in flight or between attempts (then
	// Outcome may still name the attempt's own failure, e.g. http.429).
	ItemOutcome string
	// ItemTime is the item's time from its first attempt's start (intended
	// start in an open loop) to its final outcome, retries and waits
	// included; set on Final records only.
	ItemTime time.Duration
	// Waited is how long the engine waited (backoff or retry-after) before
	// this attempt; 0 for a first attempt.
	Waited time.Duration

	// Outcome is the SPEC §3 class: ok, timeout.<clock>, http.<status>, ...
	Outcome string
	// Phase is where the outcome happened (PhaseBeforeHead ...).
	Phase string
	// Status is the HTTP status, 0 when no head arrived.
	Status int
	// ErrorType is the provider's error type (HTTP error body or error event).
	ErrorType string
	// Error is a short, secret-free description of what went wrong.
	Error string
	// RetryAfter is the wait the provider asked for, 0 when none.
	RetryAfter time.Duration
	// RequestID is the provider's request id.
	RequestID string
	// Reused reports whether the call went over a pooled connection.
	Reused bool

	// Start is when the call started (wall clock, for logs and resumption).
	Start time.Time
	// Lag is how late the call started against its intended start (open loop).
	Lag time.Duration

	Connect   time.Duration
	Head      time.Duration
	FirstByte time.Duration
	TTFT      time.Duration
	Total     time.Duration
	// Gaps holds every gap between consecutive content deltas.
	Gaps []time.Duration
	// MaxGap is the largest of Gaps.
	MaxGap time.Duration
	// ByteGaps holds every gap between body reads that returned bytes.
	ByteGaps []time.Duration
	// MaxByteGap is the largest of ByteGaps.
	MaxByteGap time.Duration

	// Deltas counts content deltas.
	Deltas int
	// OutputTokens is from the provider's usage, or Deltas when the provider
	// sent none (then TokensEstimated is set); -1 when unknown.
	OutputTokens    int64
	TokensEstimated bool
	// Bytes counts body bytes read.
	Bytes int64

	reached reached
}

// HasConnect reports whether a connection became ready.
func (r *Record) HasConnect() bool { return r.reached&reachedConnect != 0 }

// HasHead reports whether the response head arrived.
func (r *Record) HasHead() bool { return r.reached&reachedHead != 0 }

// HasFirstByte reports whether a body byte arrived.
func (r *Record) HasFirstByte() bool { return r.reached&reachedFirstByte != 0 }

// HasTTFT reports whether a content delta arrived.
func (r *Record) HasTTFT() bool { return r.reached&reachedTTFT != 0 }

// HasTotal reports whether the body ended (completely or not) and Total is set.
func (r *Record) HasTotal() bool { return r.reached&reachedTotal != 0 }

// OK reports whether the call's outcome is ok.
func (r *Record) OK() bool { return r.Outcome == OutcomeOK }

// TPS is output tokens per second of generation, (total - ttft); 0 when
// not computable.
func (r *Record) TPS() float64 {
	if !r.HasTotal() || !r.HasTTFT() || r.OutputTokens <= 0 {
		return 0
	}
	gen := r.Total - r.TTFT
	if gen <= 0 {
		return 0
	}
	return float64(r.OutputTokens) / gen.Seconds()
}
