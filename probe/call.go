package probe

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollgate-dev/tollgate/probe/sse"
	"github.com/tollgate-dev/tollgate/probe/wire"
)

// Defaults for the byte limits of a call.
const (
	DefaultMaxEventSize = 1 << 20  // one SSE event
	DefaultMaxBodySize  = 32 << 20 // one non-streaming body
	maxErrorBodySize    = 64 << 10 // an HTTP error body, read for its error type
)

// CallerOptions configure a Caller. The zero value of every field but
// Protocol is usable.
type CallerOptions struct {
	// Protocol is the wire protocol to speak.
	Protocol wire.Protocol
	// Clocks are the limits of the seven clocks.
	Clocks Clocks
	// Client sends the requests; nil means a client on NewTransport().
	// Its Timeout must be 0: the clocks are the only deadlines.
	Client *http.Client
	// MaxEventSize bounds one SSE event (protocol error beyond it).
	MaxEventSize int
	// MaxBodySize bounds one non-streaming body (protocol error beyond it).
	MaxBodySize int64
}

// Caller runs single calls under the seven clocks. It is safe for
// concurrent use.
type Caller struct {
	// readers pools SSE readers: each holds a read buffer that would
	// otherwise be allocated, and collected, once per streamed call.
	readers  sync.Pool
	inFlight atomic.Int64
	proto    wire.Protocol
	clocks   Clocks
	client   *http.Client
	maxEvt   int
	maxBody  int64
}

// NewCaller validates opts and returns a Caller.
func NewCaller(opts CallerOptions) (*Caller, error) {
	if opts.Protocol == nil {
		return nil, errors.New("probe: no protocol given")
	}
	if err := opts.Clocks.Validate(); err != nil {
		return nil, err
	}
	c := &Caller{proto: opts.Protocol, clocks: opts.Clocks, client: opts.Client,
		maxEvt: opts.MaxEventSize, maxBody: opts.MaxBodySize}
	if c.client == nil {
		c.client = &http.Client{Transport: NewTransport()}
	}
	if c.client.Timeout != 0 {
		return nil, errors.New("probe: the http.Client must have no Timeout; the clocks are the deadlines")
	}
	if c.maxEvt <= 0 {
		c.maxEvt = DefaultMaxEventSize
	}
	if c.maxBody <= 0 {
		c.maxBody = DefaultMaxBodySize
	}
	c.readers.New = func() any { return sse.NewReader(nil, sse.Options{MaxEventSize: c.maxEvt}) }
	return c, nil
}

// NewTransport returns the transport tollgate uses by default: HTTP/2 over
// TLS when the server offers it, a pool large enough for high concurrency,
// and no timeouts of its own (the clocks are the deadlines).
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        0,
		MaxIdleConnsPerHost: 4096,
		IdleConnTimeout:     90 * time.Second,
		TLSClientConfig:     &tls.Config{MinVersion: tls.VersionTLS12},
		DisableCompression:  true, // compressed SSE would hide byte timing
		// A request is a few hundred bytes of JSON; the default 4 KiB write
		// buffer per connection is memory for nothing at 2,000 streams.
		WriteBufferSize: 1 << 10,
	}
}

// Call makes one call and returns what it measured. It never returns an
// error: every failure is an outcome in the Record.
//
// intended is when the call should have started; pass the zero time (or
// now) for a closed loop. ctx ends the call as "canceled".
func (c *Caller) Call(ctx context.Context, req wire.Request, intended time.Time) *Record {
	c.inFlight.Add(1)
	defer c.inFlight.Add(-1)
	rec := &Record{OutputTokens: -1}
	c.call(ctx, req, intended, rec)
	return rec
}

// InFlight is the number of calls in progress, for live progress.
func (c *Caller) InFlight() int64 { return c.inFlight.Load() }

// callState is the mutable state of one call, shared with httptrace hooks.
type callState struct {
	began     time.Time // the one monotonic base of the call
	intended  time.Time // the base of TTFT and Total (== began in a closed loop)
	connReady atomic.Int64
	reused    atomic.Bool
	wd        *watchdog
	rec       *Record
}

func (c *Caller) call(parent context.Context, req wire.Request, intended time.Time, rec *Record) {
	st := &callState{began: time.Now(), rec: rec}
	rec.Start = st.began
	st.intended = st.began
	if !intended.IsZero() && intended.Before(st.began) {
		st.intended = intended
		rec.Lag = st.began.Sub(intended)
	}
	rec.Path = PathBatch
	if req.Stream {
		rec.Path = PathStream
	}

	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	st.wd = newWatchdog(c.limits(req.Stream), cancel)
	defer st.wd.stop()
	st.wd.arm(ClockConnect, st.began)
	st.wd.arm(ClockTotal, st.began)
	if req.Stream {
		st.wd.arm(ClockTTFT, st.began)
	}

	trace := &httptrace.ClientTrace{
		// GotConn may run on a transport goroutine: it writes only atomics
		// and the watchdog, which has its own lock.
		GotConn: func(info httptrace.GotConnInfo) {
			now := time.Now()
			if !st.connReady.CompareAndSwap(0, int64(now.Sub(st.began))+1) {
				return
			}
			st.reused.Store(info.Reused)
			st.wd.disarm(ClockConnect)
			st.wd.arm(ClockHead, now)
			st.wd.arm(ClockFirstToken, now)
		},
	}
	httpReq, err := c.proto.NewRequest(httptrace.WithClientTrace(ctx, trace), req)
	if err != nil {
		c.finish(ctx, st, OutcomeProtocol, fmt.Errorf("build request: %w", err))
		return
	}

	resp, err := c.client.Do(httpReq)
	headAt := time.Now()
	if err != nil {
		c.finish(ctx, st, "", err)
		return
	}
	defer resp.Body.Close()
	st.wd.disarm(ClockHead)
	rec.reached |= reachedHead
	rec.Head = headAt.Sub(st.connAt())
	rec.Status = resp.StatusCode
	meta := c.proto.ReadMeta(resp.Header, headAt)
	rec.RequestID = meta.RequestID
	rec.RetryAfter = meta.RetryAfter

	body := &timedBody{r: resp.Body, st: st}
	switch {
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		c.readError(ctx, st, body, resp.StatusCode)
	case req.Stream:
		c.readStream(ctx, st, body)
	default:
		c.readBody(ctx, st, body)
	}
}

// limits maps the clocks onto the watchdog's slots for a call's mode.
func (c *Caller) limits(stream bool) [numClocks]time.Duration {
	l := [numClocks]time.Duration{
		ClockConnect:    c.clocks.Connect,
		ClockHead:       c.clocks.Head,
		ClockFirstToken: c.clocks.FirstToken,
		ClockIdle:       c.clocks.Idle,
		ClockTotal:      c.clocks.Total,
	}
	if stream {
		l[ClockTTFT] = c.clocks.TTFT
		l[ClockGap] = c.clocks.Gap
	} else {
		l[ClockHead] = c.clocks.HeadBatch
		if c.clocks.ItemCeiling > 0 {
			l[ClockTotal] = c.clocks.ItemCeiling
		}
	}
	return l
}

// noteConn copies the connection metrics the trace hooks recorded.
func (st *callState) noteConn() {
	if v := st.connReady.Load(); v != 0 {
		st.rec.reached |= reachedConnect
		st.rec.Connect = time.Duration(v - 1)
		st.rec.Reused = st.reused.Load()
	}
}

// connAt is when the connection became ready (the start of the head and
// first_token clocks); the call's start when no connection was seen.
func (st *callState) connAt() time.Time {
	if v := st.connReady.Load(); v != 0 {
		return st.began.Add(time.Duration(v - 1))
	}
	return st.began
}

// timedBody wraps a response body: every read that returns bytes is a
// byte-level event. It stops the first_token clock, re-arms idle, and
// records byte gaps. It runs on the call's own goroutine only.
type timedBody struct {
	r    io.Reader
	st   *callState
	last time.Time
}

// Read reads from the body and notes the bytes' arrival (see timedBody).
func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		now := time.Now()
		st, rec := b.st, b.st.rec
		rec.Bytes += int64(n)
		if b.last.IsZero() {
			rec.reached |= reachedFirstByte
			rec.FirstByte = now.Sub(st.connAt())
			st.wd.disarm(ClockFirstToken)
		} else {
			g := now.Sub(b.last)
			rec.ByteGaps = append(rec.ByteGaps, g)
			if g > rec.MaxByteGap {
				rec.MaxByteGap = g
			}
		}
		b.last = now
		st.wd.arm(ClockIdle, now) // returns before its lock when idle is off
	}
	return n, err
}

// readStream consumes an SSE body, running the content clocks.
func (c *Caller) readStream(ctx context.Context, st *callState, body *timedBody) {
	rec := st.rec
	rd := c.readers.Get().(*sse.Reader)
	rd.Reset(body)
	defer func() {
		rd.Reset(nil) // drop the body, keep the buffers
		c.readers.Put(rd)
	}()
	var lastContent time.Time
	for {
		item, err := rd.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				c.finish(ctx, st, OutcomeTruncated, truncatedError(rd))
				return
			}
			if errors.Is(err, sse.ErrEventTooLarge) {
				c.finish(ctx, st, OutcomeProtocol, err)
				return
			}
			c.finish(ctx, st, "", err)
			return
		}
		if item.Kind != sse.KindEvent {
			continue // comments are bytes (idle saw them), never content
		}
		v := c.proto.Classify(item)
		if v.OutputTokens >= 0 {
			rec.OutputTokens = v.OutputTokens
		}
		switch v.Kind {
		case wire.Content:
			// Content clocks run on the arrival time of the read that
			// completed the event, not on when we got round to parsing it.
			at := item.At
			rec.Deltas++
			if lastContent.IsZero() {
				rec.reached |= reachedTTFT
				rec.TTFT = at.Sub(st.intended)
				st.wd.disarm(ClockTTFT)
			} else {
				g := at.Sub(lastContent)
				rec.Gaps = append(rec.Gaps, g)
				if g > rec.MaxGap {
					rec.MaxGap = g
				}
			}
			lastContent = at
			st.wd.arm(ClockGap, at)
		case wire.Terminal:
			c.drain(st, rd, item.At)
			c.finish(ctx, st, OutcomeOK, nil)
			return
		case wire.Error:
			rec.ErrorType = v.ErrorType
			c.finish(ctx, st, "stream_error."+errorClass(v.ErrorType), fmt.Errorf("error event: %s", sanitize(v.ErrorMessage)))
			return
		case wire.Invalid:
			c.finish(ctx, st, OutcomeProtocol, fmt.Errorf("invalid %q event", sanitize(string(item.Type))))
			return
		}
	}
}

// drain reads what follows the terminal event so that the body ends (and
// an HTTP/1 connection can return to the pool). Total is the body's end, or
// the terminal event when the body does not end cleanly.
func (c *Caller) drain(st *callState, rd *sse.Reader, terminalAt time.Time) {
	for {
		if _, err := rd.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				st.setTotal(time.Now())
			}
			st.setTotal(terminalAt)
			return
		}
	}
}

func (st *callState) setTotal(end time.Time) {
	if st.rec.HasTotal() {
		return
	}
	st.rec.reached |= reachedTotal
	st.rec.Total = end.Sub(st.intended)
}

// truncatedError says how a stream ended without its terminal event.
func truncatedError(rd *sse.Reader) error {
	if d := rd.Discarded(); d != nil {
		return fmt.Errorf("stream ended inside a %q event (no blank line after it)", sanitize(string(d.Type)))
	}
	return errors.New("stream ended without the terminal event")
}

// readBody reads a complete non-streaming body.
func (c *Caller) readBody(ctx context.Context, st *callState, body *timedBody) {
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(body, c.maxBody+1))
	if err != nil {
		c.finish(ctx, st, "", err)
		return
	}
	if n > c.maxBody {
		c.finish(ctx, st, OutcomeProtocol, fmt.Errorf("body larger than %d bytes", c.maxBody))
		return
	}
	st.setTotal(time.Now())
	b, err := c.proto.ParseBody(buf.Bytes())
	if err != nil {
		c.finish(ctx, st, OutcomeProtocol, fmt.Errorf("parse body: %w", err))
		return
	}
	if b.OutputTokens >= 0 {
		st.rec.OutputTokens = b.OutputTokens
	}
	if b.HasContent {
		st.rec.reached |= reachedContent
	}
	c.finish(ctx, st, OutcomeOK, nil)
}

// readError reads a non-2xx body for the provider's error type.
func (c *Caller) readError(ctx context.Context, st *callState, body *timedBody, status int) {
	data, err := io.ReadAll(io.LimitReader(body, maxErrorBodySize))
	if err == nil {
		st.setTotal(time.Now())
	}
	pe := c.proto.ParseError(data)
	st.rec.ErrorType = pe.Type
	c.finish(ctx, st, "http."+strconv.Itoa(status), fmt.Errorf("HTTP %d %s: %s", status, pe.Type, sanitize(pe.Message)))
}

// finish sets the outcome and phase. An empty outcome means "classify err":
// a fired clock wins over whatever error the cancellation caused.
func (c *Caller) finish(ctx context.Context, st *callState, outcome string, err error) {
	rec := st.rec
	st.noteConn()
	var te *TimeoutError
	switch cause := context.Cause(ctx); {
	case errors.As(cause, &te) && (outcome == "" || outcome == OutcomeTruncated):
		outcome = "timeout." + te.Clock.String()
		err = te
	case outcome == "" && ctx.Err() != nil:
		outcome = OutcomeCanceled
	case outcome == "":
		outcome = classifyTransport(err)
	}
	rec.Outcome = outcome
	rec.Phase = phaseOf(rec)
	if err != nil {
		rec.Error = sanitize(err.Error())
	}
	if rec.OutputTokens < 0 && rec.Deltas > 0 {
		rec.OutputTokens = int64(rec.Deltas)
		rec.TokensEstimated = true
	}
}

// phaseOf says how far the call got. An HTTP error is decided by its head,
// so it happened before the first (body) byte whatever body came with it.
func phaseOf(rec *Record) string {
	switch {
	case rec.Status != 0 && (rec.Status < 200 || rec.Status > 299):
		return PhaseBeforeFirstByte
	case rec.HasTTFT(), rec.reached&reachedContent != 0:
		return PhaseMidStream
	case rec.HasFirstByte():
		return PhaseBeforeContent
	case rec.HasHead():
		return PhaseBeforeFirstByte
	default:
		return PhaseBeforeHead
	}
}

// classifyTransport sorts an error that no clock caused.
func classifyTransport(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return OutcomeTruncated // the connection closed inside the body framing
	}
	return OutcomeTransport // refused, reset, DNS, TLS
}

// errorClass keeps a provider error type usable as an outcome suffix.
func errorClass(t string) string {
	if t == "" {
		return "unknown"
	}
	return sanitize(t)
}

// sanitize keeps an error string short and on one line.
func sanitize(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
