package wire

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// maxErrorText is how much of an unrecognised error body ParseError keeps.
const maxErrorText = 200

// parseError reads an error body in the Anthropic shape
// {"type":"error","error":{"type":...,"message":...}} or the OpenAI shape
// {"error":{"type":...,"code":...,"message":...}}; OpenAI's type is often
// null where its code is set, so the code stands in for a missing type.
// A bare {"error":"..."} or {"message":"..."} gives its text; anything else
// an empty Type and the start of the body, made printable.
func parseError(body []byte) ProviderError {
	var outer struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
	}
	if json.Unmarshal(body, &outer) != nil {
		return ProviderError{Message: sanitize(body, maxErrorText)}
	}
	var inner struct {
		Type    json.RawMessage `json:"type"`
		Code    json.RawMessage `json:"code"`
		Message json.RawMessage `json:"message"`
	}
	var e ProviderError
	switch {
	case json.Unmarshal(outer.Error, &inner) == nil && len(outer.Error) > 0 && outer.Error[0] == '{':
		e.Type = scalarText(inner.Type)
		if e.Type == "" {
			e.Type = scalarText(inner.Code)
		}
		e.Message = scalarText(inner.Message)
	case len(outer.Error) > 0:
		e.Message = scalarText(outer.Error)
	default:
		e.Message = scalarText(outer.Message)
	}
	if e.Message == "" {
		e.Message = sanitize(body, maxErrorText)
	}
	return e
}

// scalarText returns a JSON string's text or a number's digits; null,
// objects and arrays give "".
func scalarText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return ""
		}
		return sanitize([]byte(s), 4*maxErrorText)
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return string(raw)
	}
	return ""
}

// jsonText decodes the raw bytes of a JSON string found by the scanner
// (escapes kept, quotes stripped). It runs only on the rare error path.
func jsonText(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return sanitize(raw, 4*maxErrorText)
	}
	q := make([]byte, 0, len(raw)+2)
	q = append(append(append(q, '"'), raw...), '"')
	return scalarText(q)
}

// sanitize makes at most n bytes of b safe to print on one line: invalid
// UTF-8 and control characters become spaces, runs of space collapse.
func sanitize(b []byte, n int) string {
	if len(b) > n {
		// A character cut in half decodes as RuneError and is dropped below.
		b = b[:n]
	}
	var sb strings.Builder
	space := false
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.IsSpace(r) {
			if !space && sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		sb.WriteRune(r)
	}
	return strings.TrimRight(sb.String(), " ")
}

// readMeta reads the provider's request id and the wait the provider asks
// for, relative to now.
//
// retry-after-ms and retry-after are the provider's own answer to "when may
// I retry" and win when present (retry-after-ms, being finer, first). Only
// without them do the rate-limit reset headers count, and only those of a
// limit that is exhausted (its -remaining is 0): Anthropic sends the reset
// of every limit on every response, and the reset of a limit with plenty
// left says nothing about when to retry — taking the longest of them turned
// a 1 s retry-after into a minute's wait. Waits already past give 0.
func readMeta(h http.Header, now time.Time) Meta {
	var m Meta
	for _, k := range []string{"Request-Id", "X-Request-Id"} {
		if v := strings.TrimSpace(h.Get(k)); v != "" {
			m.RequestID = v
			break
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil {
			if d, ok := seconds(ms / 1000); ok {
				m.RetryAfter = d
				return m
			}
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if secs, err := strconv.ParseFloat(v, 64); err == nil {
			if d, ok := seconds(secs); ok {
				m.RetryAfter = d
				return m
			}
		} else if t, err := http.ParseTime(v); err == nil {
			m.RetryAfter = max(t.Sub(now), 0)
			return m
		}
	}
	longest := func(d time.Duration) {
		if d > m.RetryAfter {
			m.RetryAfter = d
		}
	}
	exhausted := func(remaining string) bool { return strings.TrimSpace(h.Get(remaining)) == "0" }
	for _, kind := range []string{"Requests", "Tokens", "Input-Tokens", "Output-Tokens"} {
		if !exhausted("Anthropic-Ratelimit-" + kind + "-Remaining") {
			continue
		}
		if t, err := time.Parse(time.RFC3339, strings.TrimSpace(h.Get("Anthropic-Ratelimit-"+kind+"-Reset"))); err == nil {
			longest(t.Sub(now))
		}
	}
	for _, kind := range []string{"Requests", "Tokens"} {
		if !exhausted("X-Ratelimit-Remaining-" + kind) {
			continue
		}
		v := strings.TrimSpace(h.Get("X-Ratelimit-Reset-" + kind))
		if d, err := time.ParseDuration(v); err == nil {
			longest(d)
		} else if secs, err := strconv.ParseFloat(v, 64); err == nil {
			if d, ok := seconds(secs); ok {
				longest(d)
			}
		}
	}
	return m
}

// seconds converts a header's seconds to a Duration, refusing what is
// negative, not a number or too large to hold.
func seconds(s float64) (time.Duration, bool) {
	if !(s >= 0) || s > float64(1<<62)/float64(time.Second) {
		return 0, false
	}
	return time.Duration(s * float64(time.Second)), true
}
