package sim

import (
	"net/http"
)

// openaiStatic are the headers every OpenAI answer carries, built once.
var openaiStatic = staticHeaders(
	"Openai-Version", "2020-10-01",
	"Openai-Organization", "tollgate-sim",
	"Openai-Processing-Ms", "1",
	"X-Ratelimit-Limit-Requests", "10000",
	"X-Ratelimit-Reset-Requests", "6ms",
	"X-Ratelimit-Limit-Tokens", "30000000",
	"X-Ratelimit-Remaining-Tokens", "29999000",
	"X-Ratelimit-Reset-Tokens", "2ms",
)

var openaiRemainingOK = []string{"9999"}

// openaiHeaders sets OpenAI's response headers for status.
func openaiHeaders(h http.Header, a *answer, status int) {
	copyStatic(h, openaiStatic)
	if a != nil {
		h["X-Request-Id"] = []string{a.reqID}
	}
	if status == http.StatusTooManyRequests {
		h["X-Ratelimit-Remaining-Requests"] = remainingNone
	} else {
		h["X-Ratelimit-Remaining-Requests"] = openaiRemainingOK
	}
}

// openaiErrorBody is OpenAI's {"error":{...}} body.
func openaiErrorBody(b []byte, status int, typ, msg string) []byte {
	code := "null"
	if typ == "" {
		switch status {
		case http.StatusTooManyRequests:
			typ, code = "requests", `"rate_limit_exceeded"`
			msg = "Rate limit reached for requests (simulated). Please try again in 1s."
		case 529:
			typ, code = "server_error", `"overloaded"`
			msg = "The server is overloaded (simulated 529; OpenAI itself answers 503 or 500)."
		default:
			typ = "server_error"
			msg = "The server had an error while processing your request. Sorry about that!"
		}
	}
	b = append(b, `{"error":{"message":`...)
	b = appendString(b, msg)
	b = append(b, `,"type":`...)
	b = appendString(b, typ)
	b = append(b, `,"param":null,"code":`...)
	b = append(b, code...)
	return append(b, "}}"...)
}

// chatWire speaks OpenAI Chat Completions (POST /v1/chat/completions).
// Thinking deltas are sent as delta.reasoning_content, the field that
// OpenAI-compatible servers (vLLM, DeepSeek) use.
type chatWire struct{ a *answer }

func (w *chatWire) headers(h http.Header, status int) { openaiHeaders(h, w.a, status) }

// chunkHead is a chunk up to its choices array.
func (w *chatWire) chunkHead(b []byte) []byte {
	b = append(b, `data: {"id":`...)
	b = appendString(b, w.a.id)
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = appendInt(b, int(w.a.created))
	b = append(b, `,"model":`...)
	b = appendString(b, w.a.model)
	return append(b, `,"service_tier":"default","system_fingerprint":"fp_tollgate","choices":`...)
}

func (w *chatWire) open(b []byte) []byte {
	b = w.chunkHead(b)
	return endEvent(append(b, `[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}`...))
}

func (w *chatWire) blockStart(b []byte, _ bool) []byte { return b }

func (w *chatWire) delta(b []byte, thinking bool, text string) []byte {
	b = w.chunkHead(b)
	if thinking {
		b = append(b, `[{"index":0,"delta":{"reasoning_content":`...)
	} else {
		b = append(b, `[{"index":0,"delta":{"content":`...)
	}
	b = appendString(b, text)
	return endEvent(append(b, `},"logprobs":null,"finish_reason":null}]}`...))
}

func (w *chatWire) blockStop(b []byte, _ bool) []byte { return b }

func (w *chatWire) finishReason() string {
	if w.a.cut() {
		return "length"
	}
	return "stop"
}

func (w *chatWire) usage(b []byte) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = appendInt(b, w.a.inputTokens)
	b = append(b, `,"completion_tokens":`...)
	b = appendInt(b, w.a.sched.Tokens)
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, w.a.inputTokens+w.a.sched.Tokens)
	b = append(b, `,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":`...)
	b = appendInt(b, w.a.sched.Thinking)
	return append(b, `,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`...)
}

func (w *chatWire) finish(b []byte) []byte {
	b = w.chunkHead(b)
	b = append(b, `[{"index":0,"delta":{},"logprobs":null,"finish_reason":"`...)
	b = append(b, w.finishReason()...)
	b = endEvent(append(b, `"}]}`...))
	if w.a.includeUsage {
		b = w.chunkHead(b)
		b = append(b, `[],"usage":`...)
		b = endEvent(append(w.usage(b), '}'))
	}
	return append(b, "data: [DONE]\n\n"...)
}

func (w *chatWire) idle(b []byte) []byte { return append(b, ": keep-alive\n\n"...) }

func (w *chatWire) errorEvent(b []byte) []byte {
	b = append(b, "data: "...)
	return endEvent(openaiErrorBody(b, http.StatusInternalServerError, "", ""))
}

func (w *chatWire) malformed(b []byte) []byte {
	b = w.chunkHead(b)
	return endEvent(append(b, `[{"index":0,"delta":{"content":"cut mid-stri`...))
}

func (w *chatWire) body(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, w.a.id)
	b = append(b, `,"object":"chat.completion","created":`...)
	b = appendInt(b, int(w.a.created))
	b = append(b, `,"model":`...)
	b = appendString(b, w.a.model)
	b = append(b, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	b = appendString(b, w.a.text)
	if w.a.sched.Thinking > 0 {
		b = append(b, `,"reasoning_content":`...)
		b = appendString(b, w.a.thinking)
	}
	b = append(b, `,"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"`...)
	b = append(b, w.finishReason()...)
	b = append(b, `"}],"usage":`...)
	b = w.usage(b)
	return append(b, `,"service_tier":"default","system_fingerprint":"fp_tollgate"}`...)
}

func (w *chatWire) errorBody(b []byte, status int, typ, msg string) []byte {
	return openaiErrorBody(b, status, typ, msg)
}

func (w *chatWire) overloadStatus() int { return http.StatusInternalServerError }

func (w *chatWire) mark() int { return 0 }

func (w *chatWire) reset(int) {}

// responsesWire speaks the OpenAI Responses API (POST /v1/responses).
// Thinking is a reasoning item whose summary is streamed with
// response.reasoning_summary_text.delta events.
type responsesWire struct {
	a   *answer
	seq int
	// out is the output_index of the item in progress.
	out int
}

func (w *responsesWire) headers(h http.Header, status int) { openaiHeaders(h, w.a, status) }

func (w *responsesWire) event(b []byte, typ string) []byte {
	b = sseEvent(b, typ)
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","sequence_number":`...)
	b = appendInt(b, w.seq)
	w.seq++
	return b
}

func (w *responsesWire) itemID(thinking bool) string {
	if thinking {
		return "rs_" + w.a.id[len("resp_"):]
	}
	return "msg_" + w.a.id[len("resp_"):]
}

// response is the response object; final tells the completed one.
func (w *responsesWire) response(b []byte, final bool) []byte {
	status := "in_progress"
	if final {
		status = "completed"
		if w.a.cut() {
			status = "incomplete"
		}
	}
	b = append(b, `{"id":`...)
	b = appendString(b, w.a.id)
	b = append(b, `,"object":"response","created_at":`...)
	b = appendInt(b, int(w.a.created))
	b = append(b, `,"status":"`...)
	b = append(b, status...)
	b = append(b, `","background":false,"error":null,"incomplete_details":`...)
	if status == "incomplete" {
		b = append(b, `{"reason":"max_output_tokens"}`...)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"instructions":null,"max_output_tokens":`...)
	if w.a.maxTokens > 0 {
		b = appendInt(b, w.a.maxTokens)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"model":`...)
	b = appendString(b, w.a.model)
	b = append(b, `,"output":[`...)
	if final {
		b = w.items(b)
	}
	b = append(b, `],"parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":null,"summary":null},"service_tier":"default","store":true,"temperature":1.0,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_p":1.0,"truncation":"disabled","usage":`...)
	if final {
		b = append(b, `{"input_tokens":`...)
		b = appendInt(b, w.a.inputTokens)
		b = append(b, `,"input_tokens_details":{"cached_tokens":0},"output_tokens":`...)
		b = appendInt(b, w.a.sched.Tokens)
		b = append(b, `,"output_tokens_details":{"reasoning_tokens":`...)
		b = appendInt(b, w.a.sched.Thinking)
		b = append(b, `},"total_tokens":`...)
		b = appendInt(b, w.a.inputTokens+w.a.sched.Tokens)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	return append(b, `,"user":null,"metadata":{}}`...)
}

// items is the complete output array.
func (w *responsesWire) items(b []byte) []byte {
	if w.a.sched.Thinking > 0 {
		b = w.item(b, true, true)
		if w.a.textTokens() > 0 {
			b = append(b, ',')
		}
	}
	if w.a.textTokens() > 0 {
		b = w.item(b, false, true)
	}
	return b
}

// item is a reasoning or message item, empty or done.
func (w *responsesWire) item(b []byte, thinking, done bool) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, w.itemID(thinking))
	if thinking {
		b = append(b, `,"type":"reasoning","summary":[`...)
		if done {
			b = append(b, `{"type":"summary_text","text":`...)
			b = appendString(b, w.a.thinking)
			b = append(b, '}')
		}
		return append(b, "]}"...)
	}
	status := "in_progress"
	if done {
		status = "completed"
		if w.a.cut() {
			status = "incomplete"
		}
	}
	b = append(b, `,"type":"message","status":"`...)
	b = append(b, status...)
	b = append(b, `","content":[`...)
	if done {
		b = w.part(b, false, w.a.text)
	}
	return append(b, `],"role":"assistant"}`...)
}

// part is a summary_text or output_text part.
func (w *responsesWire) part(b []byte, thinking bool, text string) []byte {
	if thinking {
		b = append(b, `{"type":"summary_text","text":`...)
		b = appendString(b, text)
		return append(b, '}')
	}
	b = append(b, `{"type":"output_text","annotations":[],"logprobs":[],"text":`...)
	b = appendString(b, text)
	return append(b, '}')
}

// where appends item_id, output_index and the content or summary index.
func (w *responsesWire) where(b []byte, thinking bool) []byte {
	b = append(b, `,"item_id":`...)
	b = appendString(b, w.itemID(thinking))
	b = append(b, `,"output_index":`...)
	b = appendInt(b, w.out)
	if thinking {
		return append(b, `,"summary_index":0`...)
	}
	return append(b, `,"content_index":0`...)
}

func (w *responsesWire) open(b []byte) []byte {
	b = w.event(b, "response.created")
	b = append(b, `,"response":`...)
	b = endEvent(append(w.response(b, false), '}'))
	b = w.event(b, "response.in_progress")
	b = append(b, `,"response":`...)
	return endEvent(append(w.response(b, false), '}'))
}

func (w *responsesWire) blockStart(b []byte, thinking bool) []byte {
	b = w.event(b, "response.output_item.added")
	b = append(b, `,"output_index":`...)
	b = appendInt(b, w.out)
	b = append(b, `,"item":`...)
	b = endEvent(append(w.item(b, thinking, false), '}'))
	if thinking {
		b = w.event(b, "response.reasoning_summary_part.added")
	} else {
		b = w.event(b, "response.content_part.added")
	}
	b = w.where(b, thinking)
	b = append(b, `,"part":`...)
	return endEvent(append(w.part(b, thinking, ""), '}'))
}

// textEvent is a delta or done event of the reasoning summary or of the
// output text; field is where text goes ("delta" or "text").
func (w *responsesWire) textEvent(b []byte, thinking bool, kind, field, text string) []byte {
	if thinking {
		b = w.event(b, "response.reasoning_summary_text."+kind)
	} else {
		b = w.event(b, "response.output_text."+kind)
	}
	b = w.where(b, thinking)
	b = append(b, `,"`...)
	b = append(b, field...)
	b = append(b, `":`...)
	b = appendString(b, text)
	if !thinking {
		b = append(b, `,"logprobs":[]`...)
	}
	return endEvent(append(b, '}'))
}

func (w *responsesWire) delta(b []byte, thinking bool, text string) []byte {
	return w.textEvent(b, thinking, "delta", "delta", text)
}

func (w *responsesWire) blockStop(b []byte, thinking bool) []byte {
	text := w.a.text
	if thinking {
		text = w.a.thinking
	}
	b = w.textEvent(b, thinking, "done", "text", text)
	if thinking {
		b = w.event(b, "response.reasoning_summary_part.done")
	} else {
		b = w.event(b, "response.content_part.done")
	}
	b = w.where(b, thinking)
	b = append(b, `,"part":`...)
	b = endEvent(append(w.part(b, thinking, text), '}'))
	b = w.event(b, "response.output_item.done")
	b = append(b, `,"output_index":`...)
	b = appendInt(b, w.out)
	b = append(b, `,"item":`...)
	w.out++
	return endEvent(append(w.item(b, thinking, true), '}'))
}

func (w *responsesWire) finish(b []byte) []byte {
	if w.a.cut() {
		b = w.event(b, "response.incomplete")
	} else {
		b = w.event(b, "response.completed")
	}
	b = append(b, `,"response":`...)
	return endEvent(append(w.response(b, true), '}'))
}

// idle is a keep-alive comment: the Responses API itself sends none, but
// OpenAI-compatible servers and gateways do.
func (w *responsesWire) idle(b []byte) []byte { return append(b, ": keep-alive\n\n"...) }

// errorEvent uses the nested shape the live API sends (and the SDKs turn
// into a stream error), not the flat one of the API reference.
func (w *responsesWire) errorEvent(b []byte) []byte {
	b = w.event(b, "error")
	return endEvent(append(b, `,"error":{"type":"server_error","code":"server_error","message":"The server had an error while processing your request. Sorry about that!","param":null}}`...))
}

func (w *responsesWire) malformed(b []byte) []byte {
	b = w.event(b, "response.output_text.delta")
	b = w.where(b, false)
	return endEvent(append(b, `,"delta":"cut mid-stri`...))
}

func (w *responsesWire) body(b []byte) []byte { return w.response(b, true) }

func (w *responsesWire) errorBody(b []byte, status int, typ, msg string) []byte {
	return openaiErrorBody(b, status, typ, msg)
}

func (w *responsesWire) overloadStatus() int { return http.StatusInternalServerError }

func (w *responsesWire) mark() int { return w.seq<<16 | w.out }

func (w *responsesWire) reset(m int) { w.seq, w.out = m>>16, m&0xffff }
