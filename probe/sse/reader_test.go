package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// got is an Item copied out of the Reader's buffers, with the fields a test
// compares. At is left out: timing has its own tests.
type got struct {
	Kind    Kind
	Type    string
	Data    string
	ID      string
	Comment string
	Retry   time.Duration
}

func (g got) String() string {
	if g.Kind == KindComment {
		return fmt.Sprintf("comment(%q)", g.Comment)
	}
	return fmt.Sprintf("event(type=%q data=%q id=%q retry=%v)", g.Type, g.Data, g.ID, g.Retry)
}

func ev(typ, data, id string) got {
	return got{Kind: KindEvent, Type: typ, Data: data, ID: id}
}

func comment(text string) got {
	return got{Kind: KindComment, Comment: text}
}

func copyItem(it *Item) got {
	return got{
		Kind:    it.Kind,
		Type:    string(it.Type),
		Data:    string(it.Data),
		ID:      string(it.ID),
		Comment: string(it.Comment),
		Retry:   it.Retry,
	}
}

// readAll drains a Reader built on src and returns its items, the error that
// ended it and what it discarded.
func readAll(src io.Reader, opts Options) ([]got, *got, error) {
	r := NewReader(src, opts)
	var items []got
	for {
		it, err := r.Next()
		if err != nil {
			var d *got
			if di := r.Discarded(); di != nil {
				c := copyItem(di)
				d = &c
			}
			return items, d, err
		}
		items = append(items, copyItem(it))
	}
}

// splitReader returns its input in pieces cut at the given offsets, so a
// test can place a read boundary anywhere (inside a CRLF, a BOM, a field).
type splitReader struct {
	data []byte
	cuts []int
	off  int
}

func (s *splitReader) Read(p []byte) (int, error) {
	if s.off >= len(s.data) {
		return 0, io.EOF
	}
	end := len(s.data)
	for len(s.cuts) > 0 && s.cuts[0] <= s.off {
		s.cuts = s.cuts[1:]
	}
	if len(s.cuts) > 0 {
		end = min(s.cuts[0], end)
	}
	n := copy(p, s.data[s.off:end])
	s.off += n
	return n, nil
}

// Each case is one WHATWG rule; the stream is read four ways (whole, one
// byte per Read, with io.EOF on the last bytes' Read, and split at every
// single offset) and must give the same items every time.
func TestReaderRules(t *testing.T) {
	const bom = "\xEF\xBB\xBF"
	tests := []struct {
		name      string
		in        string
		want      []got
		discarded *got
	}{
		// The plain case: one event, LF line ends, default type "message".
		{"lf", "data: hello\n\n", []got{ev("message", "hello", "")}, nil},
		// CRLF line ends count once each: no phantom blank line between.
		{"crlf", "data: a\r\ndata: b\r\n\r\n", []got{ev("message", "a\nb", "")}, nil},
		// A lone CR ends a line too (old Mac line ends).
		{"lone cr", "data: a\rdata: b\r\r", []got{ev("message", "a\nb", "")}, nil},
		// Line ends may be mixed within one stream.
		{"mixed ends", "data: a\r\ndata: b\rdata: c\n\r\n", []got{ev("message", "a\nb\nc", "")}, nil},
		// CR CR is two line ends: the second is the blank line that dispatches.
		{"cr cr dispatches", "data: x\r\rdata: y\r\n\r\n", []got{ev("message", "x", ""), ev("message", "y", "")}, nil},
		// LF CR is two line ends, not one.
		{"lf cr", "data: x\n\rdata: y\n\n", []got{ev("message", "x", ""), ev("message", "y", "")}, nil},
		// A BOM at the very start of the stream is stripped.
		{"bom at start", bom + "data: a\n\n", []got{ev("message", "a", "")}, nil},
		// Only one BOM is stripped: a second one is part of the field name,
		// which is then unknown and ignored.
		{"two boms", bom + bom + "data: a\n\ndata: b\n\n", []got{ev("message", "b", "")}, nil},
		// A BOM later in the stream is not stripped: here it is data.
		{"bom later", "data: a\n\ndata: " + bom + "b\n\n", []got{ev("message", "a", ""), ev("message", bom+"b", "")}, nil},
		// A stream that is only part of a BOM is not an error.
		{"partial bom only", "\xEF\xBB", nil, nil},
		// Bytes that start like a BOM but are not one are kept.
		{"not a bom", "\xEFdata: a\n\ndata: b\n\n", []got{ev("message", "b", "")}, nil},
		// A comment line is returned with its text, one leading space stripped.
		{"comment", ": keep-alive\n", []got{comment("keep-alive")}, nil},
		// A bare colon is a comment with empty text.
		{"bare colon", ":\n", []got{comment("")}, nil},
		// Only one space is stripped from a comment; tabs are kept.
		{"comment spaces", ":  two\n:\tx\n", []got{comment(" two"), comment("\tx")}, nil},
		// Comments inside an event come out at once and do not end the event.
		{"comment inside event", "data: a\n: ping\ndata: b\n\n", []got{comment("ping"), ev("message", "a\nb", "")}, nil},
		// The field value starts after the first colon, one space stripped.
		{"value colons", "data: a: b:c\n\n", []got{ev("message", "a: b:c", "")}, nil},
		// Without a space after the colon, nothing is stripped.
		{"no space", "data:a\n\n", []got{ev("message", "a", "")}, nil},
		// Only one leading space is stripped from a value.
		{"two spaces", "data:  a \n\n", []got{ev("message", " a ", "")}, nil},
		// A line with no colon is a field name with an empty value.
		{"no colon data", "data\n\n", []got{ev("message", "", "")}, nil},
		// Empty data lines still count: two of them join to one LF.
		{"empty data lines", "data\ndata\n\n", []got{ev("message", "\n", "")}, nil},
		// Data lines are joined with LF, no trailing LF.
		{"multi data", "data: 1\ndata: 2\ndata: 3\n\n", []got{ev("message", "1\n2\n3", "")}, nil},
		// The event field sets the type.
		{"event type", "event: ping\ndata: {}\n\n", []got{ev("ping", "{}", "")}, nil},
		// An empty event field leaves the default type.
		{"empty type", "event:\ndata: x\n\n", []got{ev("message", "x", "")}, nil},
		// The type does not carry over to the next event.
		{"type resets", "event: a\ndata: 1\n\ndata: 2\n\n", []got{ev("a", "1", ""), ev("message", "2", "")}, nil},
		// The last event field wins.
		{"last type wins", "event: a\nevent: b\ndata: 1\n\n", []got{ev("b", "1", "")}, nil},
		// A block with no data is not dispatched, but its type is reset.
		{"no data resets type", "event: a\n\ndata: 1\n\n", []got{ev("message", "1", "")}, nil},
		// Blank lines alone dispatch nothing.
		{"only blank lines", "\n\n\r\n\r\r", nil, nil},
		// The id persists across events until changed.
		{"id persists", "id: 7\ndata: a\n\ndata: b\n\nid: 8\ndata: c\n\n",
			[]got{ev("message", "a", "7"), ev("message", "b", "7"), ev("message", "c", "8")}, nil},
		// An id set in a block without data still sets the last event ID.
		{"id without data", "id: 5\n\ndata: a\n\n", []got{ev("message", "a", "5")}, nil},
		// An empty id resets the last event ID.
		{"empty id", "id: 1\ndata: a\n\nid\ndata: b\n\n", []got{ev("message", "a", "1"), ev("message", "b", "")}, nil},
		// An id containing NUL is ignored: the previous one stays.
		{"id with nul", "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n", []got{ev("message", "a", "1"), ev("message", "b", "1")}, nil},
		// retry with digits sets the reconnection time, in milliseconds.
		{"retry", "retry: 1500\ndata: a\n\n", []got{{Kind: KindEvent, Type: "message", Data: "a", Retry: 1500 * time.Millisecond}}, nil},
		// retry with anything but digits is ignored.
		{"retry not digits", "retry: 1500\nretry: 15s\nretry: -1\nretry: \nretry: 1.5\ndata: a\n\n",
			[]got{{Kind: KindEvent, Type: "message", Data: "a", Retry: 1500 * time.Millisecond}}, nil},
		// A retry too large for a time.Duration is ignored.
		{"retry overflow", "retry: 99999999999999999999\ndata: a\n\n", []got{ev("message", "a", "")}, nil},
		// Unknown fields are ignored, and field names are case-sensitive.
		{"unknown fields", "foo: bar\nData: x\nDATA: y\ndata: z\n\n", []got{ev("message", "z", "")}, nil},
		// A field name with a leading space is not "data".
		{"space before name", " data: x\ndata: y\n\n", []got{ev("message", "y", "")}, nil},
		// The last event is discarded when the stream ends without a blank line.
		{"no final blank line", "data: a\n\ndata: b\n", []got{ev("message", "a", "")}, &got{Kind: KindEvent, Type: "message", Data: "b"}},
		// A last line without any line end goes into the discarded event.
		{"no final line end", "event: message_stop\ndata: {}", nil, &got{Kind: KindEvent, Type: "message_stop", Data: "{}"}},
		// A last comment without a line end is not returned.
		{"unterminated comment", ": ping", nil, nil},
		// A type without data is nothing to discard.
		{"discard needs data", "data: a\n\nevent: x\n", []got{ev("message", "a", "")}, nil},
		// A final CR is a line end: it completes the line, the event is still discarded.
		{"final cr", "data: a\r", nil, &got{Kind: KindEvent, Type: "message", Data: "a"}},
		// An empty stream ends at once.
		{"empty", "", nil, nil},
		// NUL bytes in data pass through.
		{"nul in data", "data: a\x00b\n\n", []got{ev("message", "a\x00b", "")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			readers := map[string]func() io.Reader{
				"whole":    func() io.Reader { return strings.NewReader(tt.in) },
				"one byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(tt.in)) },
				"data+EOF": func() io.Reader { return iotest.DataErrReader(strings.NewReader(tt.in)) },
			}
			for cut := 1; cut < len(tt.in); cut++ {
				readers[fmt.Sprintf("cut at %d", cut)] = func() io.Reader {
					return &splitReader{data: []byte(tt.in), cuts: []int{cut}}
				}
			}
			for how, mk := range readers {
				items, disc, err := readAll(mk(), Options{})
				if err != io.EOF {
					t.Fatalf("%s: Next error = %v, want io.EOF", how, err)
				}
				if !reflect.DeepEqual(items, tt.want) {
					t.Errorf("%s: items\n got %v\nwant %v", how, items, tt.want)
				}
				if !reflect.DeepEqual(disc, tt.discarded) {
					t.Errorf("%s: Discarded() = %v, want %v", how, disc, tt.discarded)
				}
			}
		})
	}
}

// errReader returns its data, then a non-EOF error.
type errReader struct {
	data []byte
	err  error
}

func (e *errReader) Read(p []byte) (int, error) {
	if len(e.data) == 0 {
		return 0, e.err
	}
	n := copy(p, e.data)
	e.data = e.data[n:]
	return n, nil
}

func TestReaderSourceError(t *testing.T) {
	boom := errors.New("connection reset")
	r := NewReader(&errReader{data: []byte("data: a\n\ndata: b\n"), err: boom}, Options{})
	it, err := r.Next()
	if err != nil || string(it.Data) != "a" {
		t.Fatalf("first Next = %v, %v; want event a", it, err)
	}
	_, err = r.Next()
	if !errors.Is(err, boom) {
		t.Fatalf("second Next error = %v, want it to wrap %v", err, boom)
	}
	if _, again := r.Next(); again != err {
		t.Errorf("Next after the error = %v, want the same error %v", again, err)
	}
	d := r.Discarded()
	if d == nil || string(d.Data) != "b" {
		t.Errorf("Discarded() = %v, want the event with data b", d)
	}
	if r.BytesRead() != int64(len("data: a\n\ndata: b\n")) {
		t.Errorf("BytesRead() = %d, want %d", r.BytesRead(), len("data: a\n\ndata: b\n"))
	}
}

// zeroReader returns (0, nil) for ever: a broken io.Reader.
type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

func TestReaderNoProgress(t *testing.T) {
	_, err := NewReader(zeroReader{}, Options{}).Next()
	if !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("Next on a reader that never returns bytes = %v, want io.ErrNoProgress", err)
	}
}

func TestReaderMaxEventSize(t *testing.T) {
	tests := []struct {
		name  string
		max   int
		in    string
		items int  // items returned before the end
		large bool // the end is ErrEventTooLarge, not io.EOF
	}{
		// An event exactly at the limit passes: "data: 12345" is 11 bytes.
		{"at limit", 11, "data: 12345\n\n", 1, false},
		// One byte more is too large.
		{"over limit", 11, "data: 123456\n\n", 0, true},
		// The limit is on the event's lines together, not each line.
		{"lines add up", 20, "data: 12345\ndata: 12345\n\n", 0, true},
		// Each event starts counting afresh.
		{"per event", 11, "data: 12345\n\ndata: 12345\n\n", 2, false},
		// A huge line with no line end fails without waiting for the end.
		{"unterminated line", 100, "data: " + strings.Repeat("x", 1000), 0, true},
		// A comment line is bounded alike.
		{"long comment", 10, ": " + strings.Repeat("x", 20) + "\n", 0, true},
		// Items before the large event are still returned.
		{"after good ones", 11, "data: 1\n\n: c\ndata: " + strings.Repeat("y", 50) + "\n\n", 2, true},
		// The default limit (1 MiB) takes a 600 KiB line, larger than the read buffer.
		{"default allows big line", 0, "data: " + strings.Repeat("z", 600<<10) + "\n\n", 1, false},
		// The default limit stops a 2 MiB line.
		{"default stops", 0, "data: " + strings.Repeat("z", 2<<20) + "\n\n", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items, _, err := readAll(strings.NewReader(tt.in), Options{MaxEventSize: tt.max})
			if len(items) != tt.items {
				t.Errorf("got %d items, want %d", len(items), tt.items)
			}
			if tt.large != errors.Is(err, ErrEventTooLarge) || (!tt.large && err != io.EOF) {
				t.Errorf("error = %v, want too large: %v", err, tt.large)
			}
		})
	}
}

// A line far longer than the read buffer is read whole.
func TestReaderLongLine(t *testing.T) {
	long := strings.Repeat("0123456789", 10000)
	in := "data: " + long + "\r\ndata: tail\n\n"
	items, _, err := readAll(iotest.HalfReader(strings.NewReader(in)), Options{})
	if err != io.EOF || len(items) != 1 || items[0].Data != long+"\ntail" {
		t.Fatalf("got %d items (err %v), want one event with the 100 kB line", len(items), err)
	}
}

// fakeClock returns the times it is given, one per call, so each Read gets
// its own reading.
type fakeClock struct {
	t     time.Time
	calls int
}

func (c *fakeClock) now() time.Time {
	c.calls++
	return c.t.Add(time.Duration(c.calls) * time.Second)
}

// Each item is stamped with the clock reading of the Read that completed it,
// not the one that started it; LastRead follows every Read with bytes.
func TestReaderAt(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	// Read 1: "data: a\n" (no event yet); read 2: "\n: p" (completes the
	// event, comment pending); read 3: "ing\n" (completes the comment).
	src := &splitReader{data: []byte("data: a\n\n: ping\n"), cuts: []int{8, 12}}
	r := NewReader(src, Options{Now: clock.now})
	if !r.LastRead().IsZero() {
		t.Fatalf("LastRead() before any read = %v, want zero", r.LastRead())
	}
	it, err := r.Next()
	if err != nil || it.Kind != KindEvent {
		t.Fatalf("Next = %v, %v; want the event", it, err)
	}
	if want := clock.t.Add(2 * time.Second); !it.At.Equal(want) {
		t.Errorf("event At = %v, want the second read's %v", it.At, want)
	}
	it, err = r.Next()
	if err != nil || it.Kind != KindComment {
		t.Fatalf("Next = %v, %v; want the comment", it, err)
	}
	if want := clock.t.Add(3 * time.Second); !it.At.Equal(want) || !r.LastRead().Equal(want) {
		t.Errorf("comment At = %v, LastRead = %v, want the third read's %v", it.At, r.LastRead(), want)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("Next at the end = %v, want io.EOF", err)
	}
	if clock.calls != 3 {
		t.Errorf("clock read %d times, want once per Read that returned bytes (3)", clock.calls)
	}
}

// OnRead sees every Read that returned bytes, also those in the middle of an
// event, which Next does not return from.
func TestReaderOnRead(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	type read struct {
		n  int
		at time.Time
	}
	var reads []read
	in := "data: one event over four reads\n\n"
	src := &splitReader{data: []byte(in), cuts: []int{5, 10, 20}}
	r := NewReader(src, Options{Now: clock.now, OnRead: func(n int, at time.Time) {
		reads = append(reads, read{n, at})
	}})
	if _, err := r.Next(); err != nil {
		t.Fatalf("Next = %v, want the event", err)
	}
	want := []read{{5, clock.t.Add(time.Second)}, {5, clock.t.Add(2 * time.Second)},
		{10, clock.t.Add(3 * time.Second)}, {len(in) - 20, clock.t.Add(4 * time.Second)}}
	if !reflect.DeepEqual(reads, want) {
		t.Errorf("OnRead saw %v, want %v", reads, want)
	}
}

// The Item a call returns is reused: the doc says so, and callers that copy
// get the right values for every event.
func TestReaderItemReuse(t *testing.T) {
	r := NewReader(strings.NewReader("data: first\n\ndata: second\n\n"), Options{})
	a, _ := r.Next()
	first := string(a.Data)
	b, _ := r.Next()
	if a != b {
		t.Errorf("Next returned a new *Item, want the Reader's own reused")
	}
	if first != "first" || string(b.Data) != "second" {
		t.Errorf("data = %q then %q, want first then second", first, b.Data)
	}
}

// Next returns an event as soon as its blank line has arrived, without
// blocking for more input: the engine's clocks depend on it.
func TestReaderDoesNotReadAhead(t *testing.T) {
	pr, pw := io.Pipe()
	defer pr.Close()
	go func() {
		pw.Write([]byte("data: a\n\n"))
		// No close: a Reader that waits for more would block here for ever,
		// and the test would time out instead of passing.
	}()
	r := NewReader(pr, Options{})
	it, err := r.Next()
	if err != nil || string(it.Data) != "a" {
		t.Fatalf("Next = %v, %v; want event a", it, err)
	}
	pw.Close()
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("Next after close = %v, want io.EOF", err)
	}
}

// Every offset split gives the same events on a longer mixed stream.
func TestReaderEverySplit(t *testing.T) {
	in := []byte("\xEF\xBB\xBFretry: 10\r\n: hi\r\nid: 1\revent: e\r\ndata: a\r\n\r\ndata: b\n\ndata:c\r\rx\n")
	want, wantDisc, err := readAll(bytes.NewReader(in), Options{})
	if err != io.EOF || len(want) != 4 {
		t.Fatalf("whole read: %d items, err %v; want 4 items and io.EOF", len(want), err)
	}
	for i := 1; i < len(in); i++ {
		for j := i + 1; j < len(in); j++ {
			items, disc, err := readAll(&splitReader{data: in, cuts: []int{i, j}}, Options{})
			if err != io.EOF || !reflect.DeepEqual(items, want) || !reflect.DeepEqual(disc, wantDisc) {
				t.Fatalf("cuts at %d,%d: %v (err %v, discarded %v), want %v (discarded %v)", i, j, items, err, disc, want, wantDisc)
			}
		}
	}
}

// Reset starts a new stream: nothing of the old one (last event ID, retry,
// discarded event, byte count, sticky error) leaks into it.
func TestReaderReset(t *testing.T) {
	r := NewReader(strings.NewReader("id: 9\nretry: 50\ndata: a\n\ndata: cut"), Options{})
	for {
		if _, err := r.Next(); err != nil {
			break
		}
	}
	if r.Discarded() == nil || r.Retry() != 50*time.Millisecond {
		t.Fatalf("first stream: Discarded() = %v, Retry() = %v; want the cut event and 50ms", r.Discarded(), r.Retry())
	}
	r.Reset(strings.NewReader("data: b\n\n"))
	if r.Discarded() != nil || r.Retry() != 0 || r.BytesRead() != 0 || !r.LastRead().IsZero() {
		t.Fatalf("after Reset: Discarded %v, Retry %v, BytesRead %d, LastRead %v; want all zero",
			r.Discarded(), r.Retry(), r.BytesRead(), r.LastRead())
	}
	it, err := r.Next()
	if err != nil || copyItem(it) != ev("message", "b", "") {
		t.Fatalf("Next after Reset = %v, %v; want event b with no id", it, err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("Next at the end = %v, want io.EOF", err)
	}
}

// A pooled Reader reads a whole provider stream without allocating: the
// zero-allocation claim the benchmark measures, checked exactly.
func TestReaderNoAllocs(t *testing.T) {
	stream := anthropicStream(200)
	src := bytes.NewReader(stream)
	r := NewReader(src, Options{})
	read := func() {
		src.Reset(stream)
		r.Reset(src)
		for {
			if _, err := r.Next(); err != nil {
				return
			}
		}
	}
	read() // the buffers reach their size
	if n := testing.AllocsPerRun(20, read); n != 0 {
		t.Errorf("reading a stream with a reset Reader allocated %v times, want 0", n)
	}
}

// A line that never ends grows the read buffer only to about twice
// MaxEventSize before the Reader gives up, not with the input.
func TestReaderMemoryBound(t *testing.T) {
	const max = 256 << 10
	r := NewReader(io.MultiReader(strings.NewReader("data: "), iotest.HalfReader(endlessX{})), Options{MaxEventSize: max})
	_, err := r.Next()
	if !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("Next on an endless line = %v, want ErrEventTooLarge", err)
	}
	if cap(r.buf) > 2*max || cap(r.data) > max {
		t.Errorf("buffers grew to %d (read) and %d (data), want at most %d and %d", cap(r.buf), cap(r.data), 2*max, max)
	}
	if r.BytesRead() > 4*max {
		t.Errorf("read %d bytes before giving up, want the limit's order (%d)", r.BytesRead(), max)
	}
}

// endlessX is an endless stream of 'x' bytes.
type endlessX struct{}

func (endlessX) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}
