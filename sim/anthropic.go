package sim

import "net/http"

// anthropicWire speaks the Anthropic Messages API (POST /v1/messages).
type anthropicWire struct {
	a     *answer
	index int
}

// fakeSignature is the signature_delta of a thinking block: base64 of a
// text that says what it is.
const fakeSignature = "dG9sbGdhdGUtc2ltdWxhdG9yLXNpZ25hdHVyZS1ub3QtYS1yZWFsLW9uZQ=="

// anthropicStatic are the headers every Anthropic answer carries, built
// once: value slices are shared between answers and never modified.
var anthropicStatic = staticHeaders(
	"Anthropic-Organization-Id", "00000000-0000-0000-0000-000000000000",
	"Anthropic-Ratelimit-Requests-Limit", "4000",
	"Anthropic-Ratelimit-Tokens-Limit", "2000000",
	"Anthropic-Ratelimit-Tokens-Remaining", "2000000",
	"Anthropic-Ratelimit-Input-Tokens-Limit", "1600000",
	"Anthropic-Ratelimit-Input-Tokens-Remaining", "1600000",
	"Anthropic-Ratelimit-Output-Tokens-Limit", "400000",
	"Anthropic-Ratelimit-Output-Tokens-Remaining", "400000",
)

func (w *anthropicWire) headers(h http.Header, status int) {
	copyStatic(h, anthropicStatic)
	if w.a != nil {
		h["Request-Id"] = []string{w.a.reqID}
	}
	remaining := remainingOK
	if status == http.StatusTooManyRequests {
		remaining = remainingNone
	}
	h["Anthropic-Ratelimit-Requests-Remaining"] = remaining
	reset := []string{resetTime()}
	for _, k := range []string{"Anthropic-Ratelimit-Requests-Reset", "Anthropic-Ratelimit-Tokens-Reset", "Anthropic-Ratelimit-Input-Tokens-Reset", "Anthropic-Ratelimit-Output-Tokens-Reset"} {
		h[k] = reset
	}
	if status >= 429 {
		h["X-Should-Retry"] = shouldRetry
	}
}

var (
	remainingOK   = []string{"3999"}
	remainingNone = []string{"0"}
	shouldRetry   = []string{"true"}
)

func (w *anthropicWire) usage(b []byte, outputTokens int) []byte {
	b = append(b, `{"input_tokens":`...)
	b = appendInt(b, w.a.inputTokens)
	b = append(b, `,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":`...)
	b = appendInt(b, outputTokens)
	return append(b, `,"service_tier":"standard"}`...)
}

func (w *anthropicWire) stopReason() string {
	if w.a.cut() {
		return "max_tokens"
	}
	return "end_turn"
}

// messageHead is the message object up to its content array.
func (w *anthropicWire) messageHead(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, w.a.id)
	b = append(b, `,"type":"message","role":"assistant","model":`...)
	return appendString(b, w.a.model)
}

func (w *anthropicWire) open(b []byte) []byte {
	b = sseEvent(b, "message_start")
	b = append(b, `{"type":"message_start","message":`...)
	b = w.messageHead(b)
	b = append(b, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":`...)
	b = w.usage(b, 1)
	b = endEvent(append(b, "}}"...))
	return w.idle(b)
}

func (w *anthropicWire) blockStart(b []byte, thinking bool) []byte {
	b = sseEvent(b, "content_block_start")
	b = append(b, `{"type":"content_block_start","index":`...)
	b = appendInt(b, w.index)
	if thinking {
		b = append(b, `,"content_block":{"type":"thinking","thinking":"","signature":""}}`...)
	} else {
		b = append(b, `,"content_block":{"type":"text","text":""}}`...)
	}
	return endEvent(b)
}

func (w *anthropicWire) delta(b []byte, thinking bool, text string) []byte {
	b = sseEvent(b, "content_block_delta")
	b = append(b, `{"type":"content_block_delta","index":`...)
	b = appendInt(b, w.index)
	if thinking {
		b = append(b, `,"delta":{"type":"thinking_delta","thinking":`...)
	} else {
		b = append(b, `,"delta":{"type":"text_delta","text":`...)
	}
	b = appendString(b, text)
	return endEvent(append(b, "}}"...))
}

func (w *anthropicWire) blockStop(b []byte, thinking bool) []byte {
	if thinking {
		b = sseEvent(b, "content_block_delta")
		b = append(b, `{"type":"content_block_delta","index":`...)
		b = appendInt(b, w.index)
		b = append(b, `,"delta":{"type":"signature_delta","signature":"`+fakeSignature+`"}}`...)
		b = endEvent(b)
	}
	b = sseEvent(b, "content_block_stop")
	b = append(b, `{"type":"content_block_stop","index":`...)
	b = appendInt(b, w.index)
	w.index++
	return endEvent(append(b, '}'))
}

func (w *anthropicWire) finish(b []byte) []byte {
	b = sseEvent(b, "message_delta")
	b = append(b, `{"type":"message_delta","delta":{"stop_reason":"`...)
	b = append(b, w.stopReason()...)
	b = append(b, `","stop_sequence":null},"usage":`...)
	b = w.usage(b, w.a.sched.Tokens)
	b = endEvent(append(b, '}'))
	b = sseEvent(b, "message_stop")
	return endEvent(append(b, `{"type":"message_stop"}`...))
}

func (w *anthropicWire) idle(b []byte) []byte {
	b = sseEvent(b, "ping")
	return endEvent(append(b, `{"type": "ping"}`...))
}

func (w *anthropicWire) errorEvent(b []byte) []byte {
	b = sseEvent(b, "error")
	b = append(b, `{"type":"error","error":{"details":null,"type":"overloaded_error","message":"Overloaded"},"request_id":`...)
	b = appendString(b, w.a.reqID)
	return endEvent(append(b, '}'))
}

func (w *anthropicWire) malformed(b []byte) []byte {
	b = sseEvent(b, "content_block_delta")
	b = append(b, `{"type":"content_block_delta","index":`...)
	b = appendInt(b, w.index)
	return endEvent(append(b, `,"delta":{"type":"text_delta","text":"cut mid-stri`...))
}

func (w *anthropicWire) body(b []byte) []byte {
	b = w.messageHead(b)
	b = append(b, `,"content":[`...)
	if w.a.sched.Thinking > 0 {
		b = append(b, `{"type":"thinking","thinking":`...)
		b = appendString(b, w.a.thinking)
		b = append(b, `,"signature":"`+fakeSignature+`"}`...)
		if w.a.textTokens() > 0 {
			b = append(b, ',')
		}
	}
	if w.a.textTokens() > 0 {
		b = append(b, `{"type":"text","text":`...)
		b = appendString(b, w.a.text)
		b = append(b, '}')
	}
	b = append(b, `],"stop_reason":"`...)
	b = append(b, w.stopReason()...)
	b = append(b, `","stop_sequence":null,"usage":`...)
	b = w.usage(b, w.a.sched.Tokens)
	return append(b, '}')
}

func (w *anthropicWire) errorBody(b []byte, status int, typ, msg string) []byte {
	if typ == "" {
		switch status {
		case http.StatusTooManyRequests:
			typ, msg = "rate_limit_error", "Number of requests has exceeded your rate limit (simulated). Please try again later."
		case 529:
			typ, msg = "overloaded_error", "Overloaded"
		default:
			typ, msg = "api_error", "Internal server error"
		}
	}
	b = append(b, `{"type":"error","error":{"type":`...)
	b = appendString(b, typ)
	b = append(b, `,"message":`...)
	b = appendString(b, msg)
	b = append(b, `},"request_id":`...)
	if w.a != nil {
		b = appendString(b, w.a.reqID)
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}')
}

func (w *anthropicWire) overloadStatus() int { return 529 }

func (w *anthropicWire) mark() int { return w.index }

func (w *anthropicWire) reset(m int) { w.index = m }
