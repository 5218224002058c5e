package cmd

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/tollgate-dev/tollgate/histo"
	"github.com/tollgate-dev/tollgate/probe"
)

// Progress refresh: a terminal is redrawn often; a log (CI) gets a plain
// line every few seconds so that it stays readable.
const (
	progressTTYEvery = 250 * time.Millisecond
	progressLogEvery = 5 * time.Second
	// progressWindow is the span of the rolling p99 TTFT.
	progressWindow = 10 * time.Second
)

// progress shows a live view of a run on stderr. Records arrive on the
// run's emit goroutine; the view is drawn on its own ticker goroutine, so
// both sides go through mu.
type progress struct {
	w        io.Writer
	tty      bool
	off      bool
	requests int
	duration time.Duration
	inFlight func() int64

	mu      sync.Mutex
	began   time.Time
	done    int64
	errors  int64
	windows [2]*histo.Histogram // TTFT of the current and previous half-window
	turned  time.Time

	stopc chan struct{}
	wg    sync.WaitGroup
}

func newProgress(w io.Writer, quiet bool, requests int, duration time.Duration, inFlight func() int64) *progress {
	return &progress{w: w, tty: isTerminal(w), off: quiet, requests: requests, duration: duration, inFlight: inFlight,
		windows: [2]*histo.Histogram{histo.New(), histo.New()}, stopc: make(chan struct{})}
}

func (p *progress) start() {
	p.began = time.Now()
	p.turned = p.began
	if p.off {
		return
	}
	every := progressLogEvery
	if p.tty {
		every = progressTTYEvery
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.draw(false)
			case <-p.stopc:
				return
			}
		}
	}()
}

// add counts one record.
func (p *progress) add(r *probe.Record) {
	if p.off || r.Warmup {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if !r.OK() {
		p.errors++
	}
	if r.HasTTFT() {
		p.rotate(time.Now())
		p.windows[0].Record(r.TTFT)
	}
}

// rotate starts a new half-window when the current one is full, so the
// p99 shown covers between half a window and a whole one of recent calls.
func (p *progress) rotate(now time.Time) {
	if now.Sub(p.turned) < progressWindow/2 {
		return
	}
	p.windows[1], p.windows[0] = p.windows[0], p.windows[1]
	p.windows[0].Reset()
	p.turned = now
}

func (p *progress) stop() {
	if p.off {
		return
	}
	close(p.stopc)
	p.wg.Wait()
	p.draw(true)
}

// draw writes one progress line; on a terminal it overwrites the last one.
func (p *progress) draw(final bool) {
	p.mu.Lock()
	now := time.Now()
	p.rotate(now)
	elapsed := now.Sub(p.began)
	done, errs := p.done, p.errors
	recent := p.windows[0].Clone()
	recent.Merge(p.windows[1])
	p.mu.Unlock()

	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(done) / s
	}
	ttft := "-"
	if recent.Count() > 0 {
		ttft = recent.QuantileDuration(99).Round(time.Millisecond).String()
	}
	var of string
	var frac float64
	switch {
	case p.requests > 0:
		of = fmt.Sprintf("%d/%d calls", done, p.requests)
		frac = float64(done) / float64(p.requests)
	case p.duration > 0:
		of = fmt.Sprintf("%d calls, %s/%s", done, elapsed.Round(time.Second), p.duration)
		frac = elapsed.Seconds() / p.duration.Seconds()
	}
	if of == "" {
		of = fmt.Sprintf("%d calls", done)
	}
	line := fmt.Sprintf("%s  in flight %d  %.1f calls/s  errors %d  p99 ttft %s", of, p.inFlight(), rate, errs, ttft)
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s %s", bar(frac, 24), line)
		if final {
			fmt.Fprintln(p.w)
		}
		return
	}
	fmt.Fprintf(p.w, "progress: %s (%s)\n", line, elapsed.Round(time.Second))
}

// bar draws frac (0..1) as a text bar of width cells.
func bar(frac float64, width int) string {
	frac = min(max(frac, 0), 1)
	n := int(frac * float64(width))
	return "[" + strings.Repeat("=", n) + strings.Repeat(" ", width-n) + "]"
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminalWidth is w's width in columns, 0 when unknown.
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return width
}
