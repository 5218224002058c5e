package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
)

// DefaultMaxEventSize is the MaxEventSize used when Options leaves it 0.
const DefaultMaxEventSize = 1 << 20

// readBufferSize is the initial size of the Reader's read buffer. Provider
// streams arrive in TCP-segment-sized pieces; 32 KiB takes a whole burst in
// one Read without growing.
const readBufferSize = 4 << 10

// maxEmptyReads is how many consecutive (0, nil) reads the Reader accepts
// before it gives up with io.ErrNoProgress, as bufio does.
const maxEmptyReads = 100

// ErrEventTooLarge is returned (wrapped) by Reader.Next when one event's
// lines, or one comment line, exceed Options.MaxEventSize. The Reader stops
// there: every later call returns the same error.
var ErrEventTooLarge = errors.New("event too large")

// utf8BOM is the byte order mark that a stream may start with.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Options configures a Reader. The zero value is ready to use.
type Options struct {
	// MaxEventSize bounds the bytes of one event: the sum of the lengths of
	// its lines, line ends not counted. A comment line is bounded alike. 0
	// means DefaultMaxEventSize. An event larger than this ends the stream
	// with ErrEventTooLarge instead of growing the Reader's memory.
	MaxEventSize int
	// Now is the clock read after every Read that returned bytes; the
	// readings become Item.At and LastRead. nil means time.Now.
	Now func() time.Time
	// OnRead, when set, is called after every Read that returned bytes,
	// with their count and the clock reading, on the goroutine that called
	// Next. Next returns only whole items, and one item may take many
	// reads: this is where the byte-level idle clock is re-armed and byte
	// gaps are measured.
	OnRead func(n int, at time.Time)
}

// Reader reads events and comments from a server-sent event stream by the
// WHATWG "Interpreting an event stream" rules. It is not safe for concurrent
// use. In steady state it allocates nothing per event: the returned Item and
// its byte slices are reused by the next call to Next.
type Reader struct {
	src      io.Reader
	now      func() time.Time
	onRead   func(int, time.Time)
	maxEvent int

	// buf[start:end] holds bytes read but not yet consumed.
	buf        []byte
	start, end int

	// cr is where the next CR at or after start is, or end when the
	// buffer holds none; a position whose byte is not CR means "none
	// before it, not yet scanned beyond". Most streams have no CR at all,
	// and this keeps the CR search to one scan per read instead of per line.
	cr int

	bomChecked bool  // the stream's first bytes were checked for a BOM
	skipLF     bool  // the last line ended with CR: a following LF belongs to it
	srcErr     error // the error the source returned, io.EOF included
	err        error // the sticky error Next returns once the stream has ended

	// The event being built, per the WHATWG parser's buffers.
	data    []byte
	hasData bool // at least one data line: the data buffer is not empty
	// While an event has a single data line, buf[dataFrom:dataTo] is its
	// value, not copied into data; fill copies it out before it moves the
	// buffer. Offsets, not a slice: storing an int costs no GC write barrier.
	dataFrom, dataTo int
	dataInBuf        bool
	eventType        []byte
	lastID           []byte
	retry            time.Duration
	eventBytes       int // bytes of the lines of the event being built

	defaultType []byte
	item        Item
	discarded   *Item
	lastRead    time.Time
	bytesRead   int64
}

// NewReader returns a Reader that reads the stream from r.
func NewReader(r io.Reader, opts Options) *Reader {
	rd := &Reader{
		src:         r,
		now:         opts.Now,
		onRead:      opts.OnRead,
		maxEvent:    opts.MaxEventSize,
		buf:         make([]byte, readBufferSize),
		defaultType: []byte("message"),
	}
	if rd.now == nil {
		rd.now = time.Now
	}
	if rd.maxEvent <= 0 {
		rd.maxEvent = DefaultMaxEventSize
	}
	return rd
}

// Reset makes r read a new stream from src, as if new, but keeps its buffers:
// a pool of Readers serves call after call without allocating.
func (r *Reader) Reset(src io.Reader) {
	*r = Reader{
		src:         src,
		now:         r.now,
		onRead:      r.onRead,
		maxEvent:    r.maxEvent,
		buf:         r.buf,
		data:        r.data[:0],
		eventType:   r.eventType[:0],
		lastID:      r.lastID[:0],
		defaultType: r.defaultType,
	}
}

// Next returns the next event or comment. The returned *Item (and its byte
// slices) stays valid only until the next call. At the clean end of input it
// returns io.EOF. Errors from the underlying reader are returned wrapped.
//
// Next returns an item as soon as the line that completes it has been read;
// it never waits for more input first, so the item's At is the arrival time
// of its last byte.
func (r *Reader) Next() (*Item, error) {
	if r.err != nil {
		return nil, r.err
	}
	for {
		if line, ok := r.nextLine(); ok {
			if len(line) > r.maxEvent-r.eventBytes {
				return nil, r.fail(r.tooLarge())
			}
			if it := r.processLine(line); it != nil {
				return it, nil
			}
			continue
		}
		if r.end-r.start > r.maxEvent-r.eventBytes {
			return nil, r.fail(r.tooLarge())
		}
		if r.srcErr != nil {
			return nil, r.finish()
		}
		r.fill()
	}
}

// Discarded returns the event that was still being built when the input ended
// without the blank line that dispatches it (WHATWG discards it), or nil. A
// last line that had no line end at all is included. It is set once Next has
// returned io.EOF or a read error, never after ErrEventTooLarge (that event
// was not read whole). Its slices stay valid until Reset.
func (r *Reader) Discarded() *Item {
	return r.discarded
}

// LastRead returns the clock reading taken after the most recent Read of the
// underlying reader that returned bytes, or the zero time before the first.
func (r *Reader) LastRead() time.Time {
	return r.lastRead
}

// BytesRead returns how many bytes have been read from the underlying reader.
func (r *Reader) BytesRead() int64 {
	return r.bytesRead
}

// Retry returns the reconnection time most recently set by a retry field, or
// 0 when the stream has set none.
func (r *Reader) Retry() time.Duration {
	return r.retry
}

// nextLine returns the next complete line in the buffer, without its line
// end, and consumes it. It returns false when the buffer holds no line end.
func (r *Reader) nextLine() ([]byte, bool) {
	if r.skipLF {
		if r.start == r.end {
			return nil, false
		}
		r.skipLF = false
		if r.buf[r.start] == '\n' {
			r.start++
		}
	}
	if !r.bomChecked && !r.checkBOM() {
		return nil, false
	}
	s := r.buf[r.start:r.end]
	if len(s) > 0 && s[0] == '\n' {
		// The blank line that ends nearly every event, without a search.
		r.start++
		return s[:0], true
	}
	// IndexByte is vectorized where IndexAny is a byte loop; LF is found
	// per line, CR once per read (see the cr field).
	lf := bytes.IndexByte(s, '\n')
	cr := r.nextCR() - r.start
	if lf >= 0 && lf < cr {
		r.start += lf + 1
		return s[:lf], true
	}
	if cr < len(s) {
		switch {
		case cr+1 == len(s):
			r.skipLF = true
			r.start += cr + 1
		case s[cr+1] == '\n':
			r.start += cr + 2
		default:
			r.start += cr + 1
		}
		return s[:cr], true
	}
	return nil, false
}

// nextCR returns the position of the first CR in buf[start:end], or end.
func (r *Reader) nextCR() int {
	if r.cr < r.start {
		r.cr = r.start
	}
	if r.cr < r.end && r.buf[r.cr] != '\r' {
		if i := bytes.IndexByte(r.buf[r.cr:r.end], '\r'); i >= 0 {
			r.cr += i
		} else {
			r.cr = r.end
		}
	}
	return r.cr
}

// checkBOM strips a UTF-8 BOM at the very start of the stream. It returns
// false while too few bytes have arrived to tell.
func (r *Reader) checkBOM() bool {
	s := r.buf[r.start:r.end]
	n := min(len(s), len(utf8BOM))
	if !bytes.Equal(s[:n], utf8BOM[:n]) {
		r.bomChecked = true
		return true
	}
	if n < len(utf8BOM) {
		if r.srcErr == nil {
			return false
		}
		r.bomChecked = true
		return true
	}
	r.start += len(utf8BOM)
	r.bomChecked = true
	return true
}

// processLine applies one line to the event being built and returns the item
// the line completes, if any.
func (r *Reader) processLine(line []byte) *Item {
	if len(line) == 0 {
		return r.dispatch()
	}
	if line[0] == ':' {
		// Field by field: assigning a whole Item literal goes through a
		// temporary and costs more than the rest of the line's parsing.
		it := &r.item
		it.Kind, it.Type, it.Data, it.ID = KindComment, nil, nil, nil
		it.Comment, it.At, it.Retry = trimSpace(line[1:]), r.lastRead, r.retry
		return it
	}
	r.eventBytes += len(line)
	r.applyField(line)
	return nil
}

// applyField applies a field line (not blank, not a comment) to the buffers.
func (r *Reader) applyField(line []byte) {
	var name, value []byte
	switch {
	case len(line) >= 5 && line[4] == ':' && string(line[:4]) == "data":
		// The lines most streams are made of, recognized without a loop.
		name, value = line[:4], trimSpace(line[5:])
	case len(line) >= 6 && line[5] == ':' && string(line[:5]) == "event":
		name, value = line[:5], trimSpace(line[6:])
	default:
		var known bool
		if name, value, known = splitField(line); !known {
			return
		}
	}
	switch string(name) {
	case "data":
		switch {
		case !r.hasData:
			// value is a slice of buf that runs to its end, so its
			// capacity tells where it starts.
			r.dataFrom = len(r.buf) - cap(value)
			r.dataTo = r.dataFrom + len(value)
			r.dataInBuf, r.hasData = true, true
		case r.dataInBuf:
			r.unborrowData()
			fallthrough
		default:
			r.data = append(r.data, '\n')
			r.data = append(r.data, value...)
		}
	case "event":
		r.eventType = append(r.eventType[:0], value...)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			r.lastID = append(r.lastID[:0], value...)
		}
	case "retry":
		if d, ok := parseRetry(value); ok {
			r.retry = d
		}
	}
}

// dispatch ends the event being built at a blank line. Per WHATWG an event
// with an empty data buffer is not dispatched, but its type is reset anyway.
func (r *Reader) dispatch() *Item {
	if !r.hasData {
		r.resetEvent()
		return nil
	}
	r.pending(&r.item)
	r.resetEvent()
	return &r.item
}

// pending fills it with the event being built.
func (r *Reader) pending(it *Item) {
	typ := r.eventType
	if len(typ) == 0 {
		typ = r.defaultType
	}
	data := r.data
	if r.dataInBuf {
		data = r.buf[r.dataFrom:r.dataTo]
	}
	it.Kind, it.Retry = KindEvent, r.retry
	setSlice(&it.Type, typ)
	setSlice(&it.Data, data)
	setSlice(&it.ID, r.lastID)
	setSlice(&it.Comment, nil)
	if it.At != r.lastRead {
		it.At = r.lastRead
	}
}

// setSlice stores src in *dst unless *dst already is that very slice. Item
// lives on the heap, and while the garbage collector runs every pointer
// store into it costs a write barrier; from one event to the next the type,
// ID and time rarely change.
func setSlice(dst *[]byte, src []byte) {
	d := *dst
	if len(d) == len(src) && cap(d) == cap(src) && (cap(src) == 0 || &d[:1][0] == &src[:1][0]) {
		return
	}
	*dst = src
}

// resetEvent empties the data and type buffers, keeping their memory. Slices
// already handed out keep their length, so they stay readable until the
// buffers are written again by the next call to Next.
func (r *Reader) resetEvent() {
	r.data = r.data[:0]
	r.hasData = false
	r.dataInBuf = false
	r.eventType = r.eventType[:0]
	r.eventBytes = 0
}

// fill reads more bytes into the buffer, first moving the unconsumed bytes to
// its front and growing it when a line fills it whole. A source error is
// kept in srcErr for Next to act on once the buffered lines are used up.
func (r *Reader) fill() {
	if r.dataInBuf {
		r.unborrowData()
	}
	if r.start > 0 {
		r.end = copy(r.buf, r.buf[r.start:r.end])
		r.cr = max(r.cr-r.start, 0)
		r.start = 0
	}
	if r.end == len(r.buf) {
		grown := make([]byte, 2*len(r.buf))
		copy(grown, r.buf[:r.end])
		r.buf = grown
	}
	for range maxEmptyReads {
		n, err := r.src.Read(r.buf[r.end:])
		if n > 0 {
			// The idle clock and Item.At measure arrival at this layer: the
			// moment Read handed bytes over, after any kernel and TLS
			// buffering, which this reader cannot see behind.
			r.lastRead = r.now()
			r.end += n
			r.bytesRead += int64(n)
			if r.onRead != nil {
				r.onRead(n, r.lastRead)
			}
		}
		if err != nil {
			r.srcErr = err
			return
		}
		if n > 0 {
			return
		}
	}
	r.srcErr = io.ErrNoProgress
}

// unborrowData copies the single data line that is still in buf into the
// data buffer, the event's own memory.
func (r *Reader) unborrowData() {
	r.data = append(r.data[:0], r.buf[r.dataFrom:r.dataTo]...)
	r.dataInBuf = false
}

// finish ends the stream once the source has failed or ended and no complete
// line is left: a last line without a line end goes into the discarded
// event, which is never dispatched.
func (r *Reader) finish() error {
	if rest := r.buf[r.start:r.end]; len(rest) > 0 && rest[0] != ':' {
		r.eventBytes += len(rest)
		r.applyField(rest)
		r.start = r.end
	}
	if r.srcErr == io.EOF {
		return r.fail(io.EOF)
	}
	return r.fail(fmt.Errorf("sse: read stream after %d bytes: %w", r.bytesRead, r.srcErr))
}

// fail makes err the sticky error and records the discarded event.
func (r *Reader) fail(err error) error {
	r.err = err
	if r.hasData && !errors.Is(err, ErrEventTooLarge) {
		r.discarded = new(Item)
		r.pending(r.discarded)
	}
	return err
}

// tooLarge returns the error for an event or line beyond maxEvent.
func (r *Reader) tooLarge() error {
	return fmt.Errorf("sse: event or line exceeds %d bytes after %d bytes of stream: %w",
		r.maxEvent, r.bytesRead, ErrEventTooLarge)
}

// maxKnownName is the length of the longest field name the parser acts on
// ("event", "retry").
const maxKnownName = 5

// splitField splits a field line at its first colon into name and value
// (one leading space stripped; no colon means all name, empty value). It
// looks for the colon only as far as a known name could reach: known is
// false for a longer name, which WHATWG ignores anyway, so a long data line
// is not scanned twice.
func splitField(line []byte) (name, value []byte, known bool) {
	for i := 0; i < len(line) && i <= maxKnownName; i++ {
		if line[i] == ':' {
			return line[:i], trimSpace(line[i+1:]), true
		}
	}
	if len(line) > maxKnownName {
		return nil, nil, false
	}
	return line, nil, true
}

// trimSpace strips the one leading space that WHATWG strips from a value.
func trimSpace(b []byte) []byte {
	if len(b) > 0 && b[0] == ' ' {
		return b[1:]
	}
	return b
}

// parseRetry parses a retry field: ASCII digits only, in milliseconds.
// Values that overflow a time.Duration are ignored.
func parseRetry(v []byte) (time.Duration, bool) {
	if len(v) == 0 {
		return 0, false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	const limit = int64(math.MaxInt64 / int64(time.Millisecond))
	var ms int64
	for _, c := range v {
		ms = ms*10 + int64(c-'0')
		if ms > limit {
			return 0, false
		}
	}
	return time.Duration(ms) * time.Millisecond, true
}
