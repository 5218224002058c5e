package sim

import (
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"
)

// dialect renders one API's bytes. The stream methods append to b and
// return it; a dialect holds the little state a stream needs (Responses
// sequence numbers, block indexes).
type dialect interface {
	// headers sets the provider's response headers for status.
	headers(h http.Header, status int)
	// open is what a stream sends with its head.
	open(b []byte) []byte
	// blockStart opens a thinking or text block before its first delta.
	blockStart(b []byte, thinking bool) []byte
	// delta is one content delta of one token.
	delta(b []byte, thinking bool, text string) []byte
	// blockStop closes the block in progress.
	blockStop(b []byte, thinking bool) []byte
	// finish is everything after the last delta, the terminal event included.
	finish(b []byte) []byte
	// idle is the idle traffic (ping event or keep-alive comment); empty for none.
	idle(b []byte) []byte
	// errorEvent is the provider's error event inside a 200 stream.
	errorEvent(b []byte) []byte
	// malformed is an event whose data is not valid JSON.
	malformed(b []byte) []byte
	// body is the complete non-streaming answer.
	body(b []byte) []byte
	// errorBody is the provider's error body for an HTTP error status.
	errorBody(b []byte, status int, typ, msg string) []byte
	// overloadStatus is what error-event answers a non-streaming call with.
	overloadStatus() int
	// mark and reset save and restore the stream state at a step, so a
	// fault's tail continues a cut stream consistently.
	mark() int
	reset(int)
}

// newWire returns the dialect of api for ans (ans may be nil for errors).
func newWire(api string, ans *answer) dialect {
	switch api {
	case APIAnthropic:
		return &anthropicWire{a: ans}
	case APIResponses:
		return &responsesWire{a: ans}
	}
	return &chatWire{a: ans}
}

// writeError writes an error answer in the dialect's shape.
func writeError(w http.ResponseWriter, d dialect, status int, typ, msg string) {
	d.headers(w.Header(), status)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(d.errorBody(nil, status, typ, msg))
}

// writeErrorFault writes the error answer of an HTTP fault; status -1 is
// the dialect's overload status.
func writeErrorFault(w http.ResponseWriter, d dialect, status int) {
	if status < 0 {
		status = d.overloadStatus()
	}
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	writeError(w, d, status, "", "")
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			b = append(b, c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

func appendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }

// sseEvent appends "event: NAME\ndata: " — the caller appends the data and
// ends it with endEvent.
func sseEvent(b []byte, name string) []byte {
	b = append(b, "event: "...)
	b = append(b, name...)
	return append(b, "\ndata: "...)
}

func endEvent(b []byte) []byte { return append(b, "\n\n"...) }

// resetTime is the rate-limit window end the headers announce.
func resetTime() string { return time.Now().Add(time.Minute).UTC().Format(time.RFC3339) }

// staticHeaders builds a header from name, value pairs (names canonical).
func staticHeaders(kv ...string) http.Header {
	h := make(http.Header, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		h[http.CanonicalHeaderKey(kv[i])] = []string{kv[i+1]}
	}
	return h
}

// copyStatic sets every header of src in h, sharing src's value slices:
// net/http only reads them.
func copyStatic(h, src http.Header) {
	for k, v := range src {
		h[k] = v
	}
}
