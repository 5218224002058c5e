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

// readMeta reads the provider's request id and the longest wait any retry
// header asks for, relative to now. Anthropic sends its rate-limit reset
// times on every response; they count here because after a 429 they say
// when the limit that was hit refills. Waits already past give 0.
func readMeta(h http.Header, now time.Time) Meta {
	var m Meta
	for _, k := range []string{"Request-Id", "X-Request-Id"} {
		if v := strings.TrimSpace(h.Get(k)); v != "" {
			m.RequestID = v
			break
		}
	}
	longest := func(d time.Duration, ok bool) {
		if ok && d > m.RetryAfter {
			m.RetryAfter = d
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if secs, err := strconv.ParseFloat(v, 64); err == nil {
			longest(seconds(secs))
		} else if t, err := http.ParseTime(v); err == nil {
			longest(t.Sub(now), true)
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil {
			longest(seconds(ms / 1000))
		}
	}
	for _, k := range []string{
		"Anthropic-Ratelimit-Requests-Reset",
		"Anthropic-Ratelimit-Tokens-Reset",
		"Anthropic-Ratelimit-Input-Tokens-Reset",
		"Anthropic-Ratelimit-Output-Tokens-Reset",
	} {
		if v := strings.TrimSpace(h.Get(k)); v != "" {
			if t, err := time.Parse(time.RFC3339, v); err == nil {
				longest(t.Sub(now), true)
			}
		}
	}
	for _, k := range []string{"X-Ratelimit-Reset-Requests", "X-Ratelimit-Reset-Tokens"} {
		if v := strings.TrimSpace(h.Get(k)); v != "" {
			if d, err := time.ParseDuration(v); err == nil {
				longest(d, true)
			} else if secs, err := strconv.ParseFloat(v, 64); err == nil {
				longest(seconds(secs))
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
