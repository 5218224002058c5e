package sim

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// call is one request being answered.
type call struct {
	srv          *Server
	w            http.ResponseWriter
	r            *http.Request
	start        time.Time
	idx          uint64
	api          string
	fault        Fault
	model        string
	stream       bool
	includeUsage bool
	inputTokens  int
	maxTokens    int

	d          dialect
	rc         *http.ResponseController
	timer      *time.Timer
	lastWrite  time.Time
	status     int
	sentTokens int
	idleBuf    []byte
}

// step is one moment of a planned stream: the bytes of plan.buf up to end
// are sent at offset at from the request; content tells a content delta.
type step struct {
	at      time.Duration
	end     int
	content bool
	mark    int
}

// plan is a whole stream, rendered before the first byte is sent.
type plan struct {
	buf   []byte
	steps []step
}

// words is the vocabulary of generated answers: one word is one token.
var words = strings.Fields(`the gateway keeps a separate clock for every phase of a call so that a
stalled stream is told apart from a slow one while pings arrive and the model thinks about
tool use before it answers with text that flows token by token until the last delta lands`)

// spacedWords are the words with their leading space, built once.
var spacedWords = func() []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = " " + w
	}
	return out
}()

// token returns the text of delta i of the answer to request idx.
func token(idx uint64, i int) string {
	k := (idx*31 + uint64(i)*7) % uint64(len(words))
	if i == 0 {
		return words[k]
	}
	return spacedWords[k]
}

// answer is what a call answers, whatever the dialect.
type answer struct {
	id           string
	reqID        string
	model        string
	created      int64
	inputTokens  int
	maxTokens    int
	includeUsage bool
	sched        *Schedule
	thinking     string
	text         string
}

// stopReason tells a cut answer from a complete one.
func (a *answer) cut() bool { return a.sched.MaxTokens }

// textTokens is the number of text deltas.
func (a *answer) textTokens() int { return a.sched.Tokens - a.sched.Thinking }

// mix is splitmix64: request ids that look random but repeat with the seed.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func (c *call) newAnswer(sched *Schedule) *answer {
	h := mix(uint64(c.srv.cfg.Seed) ^ mix(c.idx))
	a := &answer{
		reqID:        fmt.Sprintf("req_%016x%08x", h, c.idx),
		model:        c.model,
		created:      c.start.Unix(),
		inputTokens:  c.inputTokens,
		maxTokens:    c.maxTokens,
		includeUsage: c.includeUsage,
		sched:        sched,
	}
	switch c.api {
	case APIAnthropic:
		a.id = fmt.Sprintf("msg_%016x%08x", h, c.idx)
	case APIOpenAI:
		a.id = fmt.Sprintf("chatcmpl-%016x%08x", h, c.idx)
	default:
		a.id = fmt.Sprintf("resp_%016x%08x", h, c.idx)
	}
	var th, tx strings.Builder
	for i := range sched.Tokens {
		if i < sched.Thinking {
			th.WriteString(token(c.idx, i))
		} else {
			tx.WriteString(token(c.idx, i-sched.Thinking))
		}
	}
	a.thinking, a.text = th.String(), tx.String()
	return a
}

func (c *call) serve() {
	if c.fault == FaultRefuse {
		c.refuse()
		return
	}
	sched := c.srv.prof.ScheduleFor(c.srv.cfg.Seed, c.idx, c.maxTokens)
	ans := c.newAnswer(&sched)
	c.d = newWire(c.api, ans)
	c.rc = http.NewResponseController(c.w)
	c.timer = time.NewTimer(time.Hour)
	defer c.timer.Stop()
	ctx := c.r.Context()
	if c.stream {
		c.serveStream(ctx, ans)
	} else {
		c.serveBody(ctx, ans)
	}
}

// refuse drops the connection without a response byte; SO_LINGER 0 makes
// the kernel send a RST, so the client sees a reset rather than an EOF.
func (c *call) refuse() {
	c.status = 0
	conn, _, err := http.NewResponseController(c.w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// sleep waits until t. It reports false when the client went away or the
// server is closing.
func (c *call) sleep(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	c.timer.Reset(d)
	select {
	case <-c.timer.C:
		return true
	case <-ctx.Done():
		return false
	case <-c.srv.done:
		return false
	}
}

// waitUntil waits until offset at from the request. Once the head is out
// and idle > 0 it writes idle traffic (an Anthropic ping or an OpenAI
// keep-alive comment) whenever idle has passed since the last write: that is
// "pings while no content flows", and why pings never re-arm a content clock.
func (c *call) waitUntil(ctx context.Context, at, idle time.Duration) bool {
	deadline := c.start.Add(at)
	for {
		wake := deadline
		ping := false
		if idle > 0 && !c.lastWrite.IsZero() {
			if next := c.lastWrite.Add(idle); next.Before(deadline) {
				wake, ping = next, true
			}
		}
		if !c.sleep(ctx, wake) {
			return false
		}
		if !ping {
			return true
		}
		c.idleBuf = c.d.idle(c.idleBuf[:0])
		if len(c.idleBuf) == 0 {
			c.lastWrite = deadline
			continue
		}
		if !c.write(c.idleBuf) {
			return false
		}
		// Planned time, not time.Now: pings keep their period under load.
		c.lastWrite = wake
	}
}

// write sends p and flushes it to the client.
func (c *call) write(p []byte) bool {
	if _, err := c.w.Write(p); err != nil {
		return false
	}
	c.lastWrite = time.Now()
	return c.rc.Flush() == nil
}

// writeHead sends the head of a 200 answer and flushes it.
func (c *call) writeHead(contentType string, contentLength int) bool {
	h := c.w.Header()
	c.d.headers(h, http.StatusOK)
	h.Set("Content-Type", contentType)
	if contentLength >= 0 {
		h.Set("Content-Length", strconv.Itoa(contentLength))
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	c.status = http.StatusOK
	c.w.WriteHeader(http.StatusOK)
	c.lastWrite = time.Now()
	return c.rc.Flush() == nil
}

// writeHTTPError sends a provider error answer.
func (c *call) writeHTTPError(status int) {
	c.status = status
	writeErrorFault(c.w, c.d, status)
}

// stall holds the call without sending anything but idle traffic (when
// idle > 0) until the client goes away, the server closes or StallMax has
// passed; then the connection is dropped.
func (c *call) stall(ctx context.Context, idle time.Duration) {
	c.waitUntil(ctx, time.Since(c.start)+c.srv.cfg.StallMax, idle)
	c.abort(ctx)
}

// abort drops the connection unless the client already left.
func (c *call) abort(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	panic(http.ErrAbortHandler)
}

// idleInterval is how often idle traffic flows on a healthy stream.
func (c *call) idleInterval() time.Duration {
	if c.api == APIAnthropic {
		return time.Duration(c.srv.prof.PingInterval)
	}
	return time.Duration(c.srv.prof.KeepAlive)
}

// stallInterval is how often idle traffic flows during no-content and
// ping-stall: the profile's interval, or 1s when it has none.
func (c *call) stallInterval() time.Duration {
	if d := c.idleInterval(); d > 0 {
		return d
	}
	if d := time.Duration(c.srv.prof.PingInterval); d > 0 {
		return d
	}
	return time.Second
}

// buildPlan renders the whole healthy stream of ans.
func (c *call) buildPlan(ans *answer) *plan {
	s := ans.sched
	p := &plan{buf: make([]byte, 0, 512+s.Tokens*160), steps: make([]step, 0, s.Tokens+2)}
	p.buf = c.d.open(p.buf)
	p.steps = append(p.steps, step{at: s.Head, end: len(p.buf), mark: c.d.mark()})
	at := s.TTFT
	for i := range s.Tokens {
		if i > 0 {
			at += s.Gaps[i-1]
			if s.Pauses != nil {
				at += s.Pauses[i-1]
			}
		}
		thinking := i < s.Thinking
		switch {
		case i == 0:
			p.buf = c.d.blockStart(p.buf, thinking)
		case i == s.Thinking:
			p.buf = c.d.blockStop(p.buf, true)
			p.buf = c.d.blockStart(p.buf, false)
		}
		if thinking {
			p.buf = c.d.delta(p.buf, true, token(c.idx, i))
		} else {
			p.buf = c.d.delta(p.buf, false, token(c.idx, i-s.Thinking))
		}
		p.steps = append(p.steps, step{at: at, end: len(p.buf), content: true, mark: c.d.mark()})
	}
	p.buf = c.d.blockStop(p.buf, s.Tokens == s.Thinking)
	p.buf = c.d.finish(p.buf)
	p.steps = append(p.steps, step{at: at, end: len(p.buf), mark: c.d.mark()})
	return p
}

// cut keeps the steps up to the k-th content step (k = 0: the opening
// only). A stream with fewer content steps (a replayed capture without
// content) keeps its opening only, so a fault never sends the terminal event.
func (p *plan) cut(k int) {
	seen := 0
	last := 0
	for i, st := range p.steps {
		if !st.content {
			continue
		}
		seen++
		if seen > k {
			break
		}
		last = i
	}
	if seen < k {
		last = 0
	}
	p.steps = p.steps[:last+1]
	p.buf = p.buf[:p.steps[last].end]
}

// contentSteps counts the content steps of p.
func (p *plan) contentSteps() int {
	n := 0
	for _, st := range p.steps {
		if st.content {
			n++
		}
	}
	return n
}

// play sends the planned steps on time, batching the steps that are due
// together into one write and one flush.
func (c *call) play(ctx context.Context, p *plan) bool {
	idle := c.idleInterval()
	pos := 0
	for i := 0; i < len(p.steps); {
		if !c.waitUntil(ctx, p.steps[i].at, idle) {
			return false
		}
		j := i
		elapsed := time.Since(c.start)
		for j+1 < len(p.steps) && p.steps[j+1].at <= elapsed {
			j++
		}
		for k := i; k <= j; k++ {
			if p.steps[k].content {
				c.sentTokens++
			}
		}
		if !c.write(p.buf[pos:p.steps[j].end]) {
			return false
		}
		pos = p.steps[j].end
		i = j + 1
	}
	return true
}

func (c *call) serveStream(ctx context.Context, ans *answer) {
	var p *plan
	if c.srv.replay != nil {
		p = c.replayPlan(ans)
	} else {
		p = c.buildPlan(ans)
	}
	switch c.fault {
	case FaultHeadStall:
		c.stall(ctx, 0)
		return
	case FaultHTTP429, FaultHTTP529, FaultHTTP500:
		if c.waitUntil(ctx, ans.sched.Head, 0) {
			c.writeHTTPError(httpFaultStatus(c.fault))
		}
		return
	case FaultNoContent:
		p.cut(0)
	case FaultPingStall, FaultSilentStall, FaultTruncate, FaultErrorEvent, FaultMalformed:
		p.cut(max(1, p.contentSteps()/2))
	}
	if !c.waitUntil(ctx, p.steps[0].at, 0) {
		return
	}
	if !c.writeHead("text/event-stream; charset=utf-8", -1) {
		return
	}
	if c.fault == FaultFirstByteStall {
		c.stall(ctx, 0)
		return
	}
	if !c.play(ctx, p) {
		c.abort(ctx)
		return
	}
	c.d.reset(p.steps[len(p.steps)-1].mark)
	switch c.fault {
	case FaultNoContent, FaultPingStall:
		c.stall(ctx, c.stallInterval())
	case FaultSilentStall:
		c.stall(ctx, 0)
	case FaultErrorEvent:
		c.write(c.d.errorEvent(nil))
	case FaultMalformed:
		c.write(c.d.malformed(nil))
	}
}

func (c *call) serveBody(ctx context.Context, ans *answer) {
	s := ans.sched
	switch c.fault {
	case FaultHeadStall, FaultNoContent, FaultPingStall, FaultSilentStall:
		c.stall(ctx, 0)
		return
	case FaultHTTP429, FaultHTTP529, FaultHTTP500, FaultErrorEvent:
		if c.waitUntil(ctx, s.Head, 0) {
			c.writeHTTPError(httpFaultStatus(c.fault))
		}
		return
	case FaultFirstByteStall:
		if c.waitUntil(ctx, s.Head, 0) && c.writeHead("application/json", -1) {
			c.stall(ctx, 0)
		}
		return
	}
	// A non-streaming answer takes what the streamed one would have taken.
	if !c.waitUntil(ctx, s.Total(), 0) {
		return
	}
	body := c.d.body(nil)
	switch c.fault {
	case FaultTruncate:
		if c.writeHead("application/json", len(body)) && c.write(body[:len(body)/2]) {
			c.abort(ctx)
		}
		return
	case FaultMalformed:
		body = body[:len(body)/2]
	}
	if c.writeHead("application/json", len(body)) {
		if c.write(body) {
			c.sentTokens = s.Tokens
		}
	}
}

// httpFaultStatus is the status an HTTP fault answers with (error-event on
// a non-streaming call: 529 for Anthropic, 500 for OpenAI; see newWire).
func httpFaultStatus(f Fault) int {
	switch f {
	case FaultHTTP429:
		return http.StatusTooManyRequests
	case FaultHTTP529:
		return 529
	case FaultErrorEvent:
		return -1
	}
	return http.StatusInternalServerError
}
