package wire

import "encoding/binary"

// This file holds the small JSON scanner Classify runs on every stream
// event. encoding/json builds values and allocates; at one call per event
// on the engine's hot path that costs more than the rest of the event's
// handling together. The scanner walks the bytes once, finds the few keys
// a protocol asks for, and validates everything it skips with the grammar
// of RFC 8259 (the same rules as json.Valid, checked by FuzzScanValid), so a
// malformed event is reported as Invalid rather than read half-way.
//
// Keys are compared as raw bytes: a key spelled with escapes ("\u0074ype")
// is not recognised. No provider escapes its keys.

// maxDepth is the nesting limit, the same as encoding/json's.
const maxDepth = 10000

// scanner is a cursor over one JSON document. Once bad is set every
// method fails, so callers check it once at the end of a walk.
type scanner struct {
	b     []byte
	i     int
	depth int
	bad   bool
	// key is the raw bytes (between the quotes, escapes kept) of the
	// key read by the last successful call to member.
	key []byte
}

func (s *scanner) fail() bool {
	s.bad = true
	return false
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte without consuming it, or 0 at the end.
func (s *scanner) peek() byte {
	// Compact JSON has no whitespace: the byte at the cursor, when above
	// the space character, is the answer without the whitespace loop.
	if s.i < len(s.b) && s.b[s.i] > ' ' {
		return s.b[s.i]
	}
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// end reports whether only whitespace is left, as a complete document needs.
func (s *scanner) end() bool {
	s.ws()
	return !s.bad && s.i == len(s.b)
}

// open consumes the opening brace or bracket c of an object or array.
func (s *scanner) open(c byte) bool {
	if s.bad || s.peek() != c {
		return s.fail()
	}
	if s.depth++; s.depth > maxDepth {
		return s.fail()
	}
	s.i++
	return true
}

// into opens the object ('{') or array ('[') that comes next and reports
// true; any other value (null, say) is skipped and gives false.
func (s *scanner) into(c byte) bool {
	if s.peek() != c {
		s.skip()
		return false
	}
	return s.open(c)
}

// more moves past the comma before the n-th (from 0) member or element of
// the object or array being walked, whose closing byte is end, and reports
// whether there is one. After the last it consumes end and returns false.
func (s *scanner) more(n int, end byte) bool {
	if s.bad {
		return false
	}
	c := s.peek()
	if c == end {
		s.i++
		s.depth--
		return false
	}
	if n > 0 {
		if c != ',' {
			return s.fail()
		}
		s.i++
	}
	return true
}

// member reads the n-th (from 0) key of the object being walked and the
// colon after it, leaving the cursor on the value, which the caller must
// consume. It returns false, having consumed the closing brace, after the
// last member, and false with bad set on a syntax error.
func (s *scanner) member(n int) bool {
	if !s.more(n, '}') {
		return false
	}
	if s.peek() != '"' {
		return s.fail()
	}
	k, ok := s.rawString()
	if !ok || s.peek() != ':' {
		return s.fail()
	}
	s.i++
	s.key = k
	return true
}

// elem moves to the n-th (from 0) element of the array being walked and
// reports whether there is one; the caller must consume it. After the last
// element it consumes the closing bracket and returns false.
func (s *scanner) elem(n int) bool {
	return s.more(n, ']')
}

// plain marks the bytes a string holds as they are: not the closing quote,
// not a backslash, not a control character. The string loop runs over
// runs of them with one table load per byte.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// Word-at-a-time constants for rawString.
const (
	lows        = 0x0101010101010101
	highs       = 0x8080808080808080
	quotes      = lows * '"'
	backslashes = lows * '\\'
)

// rawString consumes a string and returns its bytes between the quotes,
// escapes undecoded. Control characters and bad escapes are errors.
func (s *scanner) rawString() ([]byte, bool) {
	if s.bad || s.peek() != '"' {
		return nil, s.fail()
	}
	b := s.b
	start := s.i + 1
	i := start
	for {
		// Eight bytes at a time while none of them needs a look (SWAR: a
		// byte below 0x20, a quote or a backslash sets its high bit in
		// special), then byte by byte up to the one that does.
		for i+8 <= len(b) {
			v := binary.LittleEndian.Uint64(b[i:])
			q, bs := v^quotes, v^backslashes
			special := (v-lows*0x20)&^v | (q-lows)&^q | (bs-lows)&^bs
			if special&highs != 0 {
				break
			}
			i += 8
		}
		for i < len(b) && plain[b[i]] {
			i++
		}
		if i >= len(b) {
			return nil, s.fail()
		}
		switch b[i] {
		case '"':
			s.i = i + 1
			return b[start:i], true
		case '\\':
			if i+1 >= len(b) {
				return nil, s.fail()
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+5 >= len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return nil, s.fail()
				}
				i += 6
			default:
				return nil, s.fail()
			}
		default: // a control character
			return nil, s.fail()
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// text consumes a value and reports whether it is a non-empty string.
// null, numbers and the rest are skipped and count as empty.
func (s *scanner) text() bool {
	if s.peek() != '"' {
		s.skip()
		return false
	}
	v, ok := s.rawString()
	return ok && len(v) > 0
}

// str consumes a value and returns it when it is a string (raw, escapes
// undecoded); any other value is skipped and gives nil.
func (s *scanner) str() []byte {
	if s.peek() != '"' {
		s.skip()
		return nil
	}
	v, _ := s.rawString()
	return v
}

// count consumes a value and returns it when it is a non-negative integer
// that fits an int64, else -1.
func (s *scanner) count() int64 {
	c := s.peek()
	if c < '0' || c > '9' {
		s.skip()
		return -1
	}
	start := s.i
	if !s.number() {
		return -1
	}
	var n int64
	for _, d := range s.b[start:s.i] {
		if d < '0' || d > '9' || n > (1<<62)/10 {
			return -1
		}
		n = n*10 + int64(d-'0')
	}
	return n
}

// number consumes a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return s.fail()
	}
	if i < len(b) && b[i] == '.' {
		if i = digits(b, i+1); b[i-1] == '.' {
			return s.fail()
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		if i = digits(b, i); i == d {
			return s.fail()
		}
	}
	s.i = i
	return true
}

// digits returns the index of the first byte at or after i that is not a digit.
func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func (s *scanner) literal(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return s.fail()
	}
	s.i += len(word)
	return true
}

// skip consumes one value of any kind, validating it.
func (s *scanner) skip() {
	switch c := s.peek(); {
	case s.bad:
	case c == '{':
		s.open('{')
		for n := 0; s.member(n); n++ {
			s.skip()
		}
	case c == '[':
		s.open('[')
		for n := 0; s.elem(n); n++ {
			s.skip()
		}
	case c == '"':
		s.rawString()
	case c == 't':
		s.literal("true")
	case c == 'f':
		s.literal("false")
	case c == 'n':
		s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		s.number()
	default:
		s.fail()
	}
}

// valid reports whether b is one complete JSON value, like json.Valid.
func valid(b []byte) bool {
	s := scanner{b: b}
	s.skip()
	return s.end()
}

// usage reads a usage object's input and output token counts, under the
// given key names, into v; null and other values are skipped.
func (s *scanner) usage(v *Verdict, in, out string) {
	if !s.into('{') {
		return
	}
	for n := 0; s.member(n); n++ {
		switch string(s.key) {
		case in:
			v.InputTokens = s.count()
		case out:
			v.OutputTokens = s.count()
		default:
			s.skip()
		}
	}
}

// errorFields reads an error object's type, code and message as raw
// strings; a bare string is taken as the message, null gives nothing.
// ok reports whether there was an error at all (anything but null).
func (s *scanner) errorFields() (typ, code, msg []byte, ok bool) {
	switch s.peek() {
	case '{':
	case '"':
		msg = s.str()
		return nil, nil, msg, true
	case 'n':
		s.skip()
		return nil, nil, nil, false
	default:
		s.skip()
		return nil, nil, nil, true
	}
	s.open('{')
	for n := 0; s.member(n); n++ {
		switch string(s.key) {
		case "type":
			typ = s.str()
		case "code":
			code = s.str()
		case "message":
			msg = s.str()
		default:
			s.skip()
		}
	}
	return typ, code, msg, true
}
