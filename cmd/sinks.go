package cmd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/tollgate-dev/tollgate/histo"
	"github.com/tollgate-dev/tollgate/probe"
)

// hlogInterval is the length of one interval of the --hlog log.
const hlogInterval = 5 * time.Second

// sinks are the per-call outputs of a probe: --calls and --hlog. They are
// opened before the first call, so that a path that cannot be written
// stops the run before anything is sent.
type sinks struct {
	calls    *os.File
	callsBuf *bufio.Writer
	enc      *json.Encoder

	hlogFile *os.File
	hlogBuf  *bufio.Writer
	hlog     *histo.LogWriter
	interval *probe.Tally
	from     time.Time
}

func openSinks(o *ProbeOptions) (*sinks, error) {
	s := &sinks{}
	if o.Calls != "" {
		f, err := os.Create(o.Calls)
		if err != nil {
			return nil, fmt.Errorf("--calls: %w", err)
		}
		s.calls, s.callsBuf = f, bufio.NewWriter(f)
		s.enc = json.NewEncoder(s.callsBuf)
	}
	if o.HLog != "" {
		f, err := os.Create(o.HLog)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("--hlog: %w", err)
		}
		s.hlogFile, s.hlogBuf = f, bufio.NewWriter(f)
		s.from = time.Now()
		if s.hlog, err = histo.NewLogWriter(s.hlogBuf, s.from); err != nil {
			s.close()
			return nil, fmt.Errorf("--hlog: %w", err)
		}
		s.interval = probe.NewTally()
	}
	return s, nil
}

// add writes one record to the open sinks.
func (s *sinks) add(rec *probe.Record) error {
	if s.enc != nil {
		if err := s.enc.Encode(newCallLine(rec)); err != nil {
			return fmt.Errorf("--calls: %w", err)
		}
	}
	if s.hlog != nil {
		now := time.Now()
		if now.Sub(s.from) >= hlogInterval {
			if err := s.flushInterval(now); err != nil {
				return err
			}
		}
		s.interval.Add(rec)
	}
	return nil
}

// flushInterval writes the interval that ends at now and starts the next.
func (s *sinks) flushInterval(now time.Time) error {
	paths := make([]string, 0, len(s.interval.Paths))
	for p := range s.interval.Paths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := s.hlog.WriteSet(p, s.from, now, s.interval.Paths[p].Metrics); err != nil {
			return fmt.Errorf("--hlog: %w", err)
		}
	}
	s.interval = probe.NewTally()
	s.from = now
	return nil
}

// finish writes what is buffered: the last interval of the log.
func (s *sinks) finish(_ *probe.Tally, end time.Time) error {
	if s.hlog != nil {
		if err := s.flushInterval(end); err != nil {
			return err
		}
	}
	return s.close()
}

// close flushes and closes the files, returning the first error.
func (s *sinks) close() error {
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	if s.calls != nil {
		keep(s.callsBuf.Flush())
		keep(s.calls.Close())
		s.calls = nil
	}
	if s.hlogFile != nil {
		keep(s.hlogBuf.Flush())
		keep(s.hlogFile.Close())
		s.hlogFile = nil
	}
	return first
}

// callLine is one line of --calls: a call attempt with each metric of
// SPEC §4 it reached, durations in milliseconds.
type callLine struct {
	Path            string    `json:"path"`
	Item            string    `json:"item"`
	Attempt         int       `json:"attempt"`
	Warmup          bool      `json:"warmup,omitempty"`
	Start           time.Time `json:"start"`
	Outcome         string    `json:"outcome"`
	Phase           string    `json:"phase"`
	Status          int       `json:"status"`
	ErrorType       string    `json:"error_type,omitempty"`
	Error           string    `json:"error,omitempty"`
	RetryAfter      *float64  `json:"retry_after,omitempty"`
	RequestID       string    `json:"request_id,omitempty"`
	Reused          bool      `json:"reused"`
	Lag             *float64  `json:"lag,omitempty"`
	Connect         *float64  `json:"connect,omitempty"`
	Head            *float64  `json:"head,omitempty"`
	FirstByte       *float64  `json:"first_byte,omitempty"`
	TTFT            *float64  `json:"ttft,omitempty"`
	Gaps            int       `json:"gaps"`
	MaxGap          *float64  `json:"max_gap,omitempty"`
	ByteGaps        int       `json:"byte_gaps"`
	MaxByteGap      *float64  `json:"max_byte_gap,omitempty"`
	Total           *float64  `json:"total,omitempty"`
	OutputTokens    *int64    `json:"output_tokens,omitempty"`
	TokensEstimated bool      `json:"tokens_estimated,omitempty"`
	TPS             *float64  `json:"tps,omitempty"`
	Bytes           int64     `json:"bytes"`
}

func newCallLine(r *probe.Record) callLine {
	ms := func(ok bool, d time.Duration) *float64 {
		if !ok {
			return nil
		}
		v := float64(d.Microseconds()) / 1000
		return &v
	}
	l := callLine{
		Path: r.Path, Item: r.Item, Attempt: r.Attempt, Warmup: r.Warmup, Start: r.Start.UTC(),
		Outcome: r.Outcome, Phase: r.Phase, Status: r.Status, ErrorType: r.ErrorType, Error: r.Error,
		RetryAfter: ms(r.RetryAfter > 0, r.RetryAfter), RequestID: r.RequestID, Reused: r.Reused,
		Lag: ms(r.Lag > 0, r.Lag), Connect: ms(r.HasConnect(), r.Connect), Head: ms(r.HasHead(), r.Head),
		FirstByte: ms(r.HasFirstByte(), r.FirstByte), TTFT: ms(r.HasTTFT(), r.TTFT),
		Gaps: len(r.Gaps), MaxGap: ms(len(r.Gaps) > 0, r.MaxGap),
		ByteGaps: len(r.ByteGaps), MaxByteGap: ms(len(r.ByteGaps) > 0, r.MaxByteGap),
		Total: ms(r.HasTotal(), r.Total), TokensEstimated: r.TokensEstimated, Bytes: r.Bytes,
	}
	if r.OutputTokens >= 0 {
		l.OutputTokens = &r.OutputTokens
	}
	if tps := r.TPS(); tps > 0 {
		l.TPS = &tps
	}
	return l
}
