package wire

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/probe/sse"
)

// jsonCorpus is valid and invalid JSON near the edges of the grammar.
var jsonCorpus = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e+10`, `true`, `null`, ` {"a" : [1, 2, {"b": null}] } `,
	`{"s":"esc \" \\ \/ \b \f \n \r \t \u00e9 \uD83D\uDE00"}`, `"é😀"`,
	`{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,"a":1}`, `{"a":1 "b":2}`, `[1,]`, `[,1]`, `[1 2]`,
	`01`, `1.`, `.5`, `1e`, `-`, `+1`, `tru`, `nulls`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"a\tb\"",
	`"unterminated`, `{"a":1}}`, `{"a":1} x`, ``, ` `, `{"a":"\"}`, `[[[[[]]]]]`, `{"a":[}`,
}

// FuzzScanValid holds the scanner to json.Valid's verdict on any input:
// Classify's Invalid depends on the scanner rejecting exactly what the
// standard library rejects.
func FuzzScanValid(f *testing.F) {
	for _, s := range jsonCorpus {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := valid(b), json.Valid(b); got != want {
			t.Fatalf("valid(%q) = %v, json.Valid = %v", b, got, want)
		}
	})
}

func TestScanValid(t *testing.T) {
	for _, s := range jsonCorpus {
		if got, want := valid([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("valid(%q) = %v, json.Valid = %v", s, got, want)
		}
	}
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	if valid([]byte(deep)) {
		t.Errorf("nesting deeper than %d accepted", maxDepth)
	}
}

// FuzzClassify checks that no input panics any protocol and that an event
// whose data is not JSON is never counted as content, terminal or error.
func FuzzClassify(f *testing.F) {
	for _, s := range jsonCorpus {
		f.Add("message", []byte(s))
	}
	f.Add("content_block_delta", []byte(`{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}`))
	f.Add("message", []byte(`{"choices":[{"delta":{"content":"x"}}]`))
	f.Add("response.output_text.delta", []byte(`{"type":"response.output_text.delta","delta":"x"`))
	f.Fuzz(func(t *testing.T, typ string, data []byte) {
		it := &sse.Item{Kind: sse.KindEvent, Type: []byte(typ), Data: data}
		for _, p := range protocols {
			v := p.Classify(it)
			if blank(data) || json.Valid(data) {
				continue
			}
			if p.Name() == "openai" && strings.TrimSpace(string(data)) == "[DONE]" {
				continue
			}
			// Anthropic's error event keeps a non-JSON body as its message.
			if p.Name() == "anthropic" && typ == "error" && v.Kind == Error {
				continue
			}
			if v.Kind != Invalid {
				t.Fatalf("%s: Classify(%q) = %v, want Invalid", p.Name(), data, v.Kind)
			}
		}
	})
}

// TestClassifyMalformed: a content check on a malformed body gives
// Invalid, never a false Content, wherever the damage is.
func TestClassifyMalformed(t *testing.T) {
	cases := []struct {
		api, data string
	}{
		// The content is found before the body breaks off.
		{"anthropic", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}`},
		// A bad escape inside the text itself.
		{"anthropic", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi\q"}}`},
		// Garbage after a complete object.
		{"anthropic", `{"type":"message_stop"} {"type":"ping"}`},
		// A chat chunk cut in the middle of a later key.
		{"openai", `{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_re`},
		// Not JSON at all.
		{"openai", `<html>502 Bad Gateway</html>`},
		// A raw newline inside a string.
		{"openai", "{\"choices\":[{\"delta\":{\"content\":\"a\nb\"}}]}"},
		// A trailing comma.
		{"responses", `{"type":"response.output_text.delta","delta":"Hi",}`},
		// The terminal event, truncated.
		{"responses", `{"type":"response.completed","response":{"usage":{"output_tokens":3}}`},
		// A top-level array.
		{"responses", `["response.output_text.delta"]`},
	}
	for _, tc := range cases {
		p, _ := Lookup(tc.api)
		v := p.Classify(&sse.Item{Kind: sse.KindEvent, Type: []byte("message"), Data: []byte(tc.data)})
		if v.Kind != Invalid {
			t.Errorf("%s: Classify(%s) = %v, want invalid", tc.api, tc.data, v.Kind)
		}
	}
}

// TestClassifyEdges covers single events the streams do not hold.
func TestClassifyEdges(t *testing.T) {
	cases := []struct {
		name, api, typ, data string
		kind                 Kind
		out, in              int64
	}{
		// Keys in another order than Anthropic's: the text before the type.
		{"anthropic delta keys reordered", "anthropic", "content_block_delta",
			`{"delta":{"text":"x","type":"text_delta"},"index":0,"type":"content_block_delta"}`, Content, -1, -1},
		// A text_delta with an escaped but non-empty text.
		{"anthropic escaped text", "anthropic", "content_block_delta",
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\n"}}`, Content, -1, -1},
		// A citations_delta annotates text already sent.
		{"anthropic citation", "anthropic", "content_block_delta",
			`{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"char_location","cited_text":"x"}}}`, NonContent, -1, -1},
		// A compaction whose summary is only encrypted is still progress.
		{"anthropic encrypted compaction", "anthropic", "content_block_delta",
			`{"type":"content_block_delta","index":0,"delta":{"type":"compaction_delta","content":null,"encrypted_content":"EpwB"}}`, Content, -1, -1},
		// The same field names under another delta type are not content.
		{"anthropic text under signature_delta", "anthropic", "content_block_delta",
			`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","text":"x","signature":"EqQB"}}`, NonContent, -1, -1},
		// An unknown event type is NonContent but must still be JSON.
		{"anthropic unknown type", "anthropic", "future_event", `{"type":"future_event","text":"x"}`, NonContent, -1, -1},
		// The SDK skips events with empty data.
		{"anthropic empty data", "anthropic", "message", ``, NonContent, -1, -1},
		// A text key outside delta does not make content.
		{"anthropic text outside delta", "anthropic", "content_block_start",
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"x"}}`, NonContent, -1, -1},
		// A huge token count that does not fit is no count.
		{"anthropic overflow count", "anthropic", "message_delta",
			`{"type":"message_delta","delta":{},"usage":{"output_tokens":99999999999999999999999}}`, NonContent, -1, -1},
		// A tool call delta in the legacy function_call form.
		{"chat function_call", "openai", "message",
			`{"choices":[{"index":0,"delta":{"function_call":{"arguments":"{\"a\""}}}]}`, Content, -1, -1},
		// Content in the second choice (n=2).
		{"chat second choice", "openai", "message",
			`{"choices":[{"index":0,"delta":{}},{"index":1,"delta":{"content":"x"}}]}`, Content, -1, -1},
		// usage null on every chunk (stream_options without include_usage).
		{"chat usage null", "openai", "message",
			`{"choices":[{"index":0,"delta":{"content":"x"}}],"usage":null}`, Content, -1, -1},
		// vLLM continuous usage stats: usage on a content chunk.
		{"chat usage on content chunk", "openai", "message",
			`{"choices":[{"index":0,"delta":{"content":"x"}}],"usage":{"prompt_tokens":5,"completion_tokens":3}}`, Content, 3, 5},
		// error: null is no error.
		{"chat error null", "openai", "message", `{"choices":[],"error":null}`, NonContent, -1, -1},
		// [DONE] with trailing space.
		{"chat done", "openai", "message", `[DONE] `, Terminal, -1, -1},
		// An empty delta string is not content.
		{"responses empty delta", "responses", "response.output_text.delta",
			`{"type":"response.output_text.delta","delta":""}`, NonContent, -1, -1},
		// A .done event carries the whole text but is not progress.
		{"responses done", "responses", "response.output_text.done",
			`{"type":"response.output_text.done","text":"Hi"}`, NonContent, -1, -1},
		// A delta that is not a string (audio in some gateways) is no content.
		{"responses object delta", "responses", "response.x.delta",
			`{"type":"response.x.delta","delta":{"a":1}}`, NonContent, -1, -1},
	}
	for _, tc := range cases {
		p, _ := Lookup(tc.api)
		v := p.Classify(&sse.Item{Kind: sse.KindEvent, Type: []byte(tc.typ), Data: []byte(tc.data)})
		if v.Kind != tc.kind || v.OutputTokens != tc.out || v.InputTokens != tc.in {
			t.Errorf("%s: got %v out %d in %d, want %v out %d in %d", tc.name, v.Kind, v.OutputTokens, v.InputTokens, tc.kind, tc.out, tc.in)
		}
	}
}

// TestClassifyComment: every protocol treats a comment as NonContent.
func TestClassifyComment(t *testing.T) {
	it := &sse.Item{Kind: sse.KindComment, Comment: []byte("keep-alive")}
	for _, p := range protocols {
		if v := p.Classify(it); v.Kind != NonContent || v.OutputTokens != -1 {
			t.Errorf("%s: comment classified %+v", p.Name(), v)
		}
	}
}

// TestClassifyErrorText: escapes in an error message are decoded.
func TestClassifyErrorText(t *testing.T) {
	data := `{"type":"error","error":{"type":"api_error","message":"Internal \"server\" error \u00e9"}}`
	v := Anthropic().Classify(&sse.Item{Kind: sse.KindEvent, Type: []byte("error"), Data: []byte(data)})
	if v.Kind != Error || v.ErrorType != "api_error" || v.ErrorMessage != `Internal "server" error é` {
		t.Errorf("got %+v", v)
	}
	v = Anthropic().Classify(&sse.Item{Kind: sse.KindEvent, Type: []byte("error"), Data: []byte("upstream\x00 timeout")})
	if v.Kind != Error || v.ErrorType != "" || v.ErrorMessage != "upstream timeout" {
		t.Errorf("non-JSON error event: got %+v", v)
	}
	// Responses' error event in both shapes: fields at the top level, and
	// nested under "error" as the live API sends it.
	for _, data := range []string{
		`{"type":"error","code":"server_error","message":"boom","sequence_number":3}`,
		`{"type":"error","sequence_number":3,"error":{"type":"server_error","code":"server_error","message":"boom"}}`,
	} {
		v = Responses().Classify(&sse.Item{Kind: sse.KindEvent, Type: []byte("error"), Data: []byte(data)})
		if v.Kind != Error || v.ErrorType != "server_error" || v.ErrorMessage != "boom" {
			t.Errorf("responses error %s: got %+v", data, v)
		}
	}
}

// TestClassifyAllocs: the common case (content, lifecycle, usage and
// terminal events) allocates nothing. Allocation counts are exact, so this
// is a unit test; speed lives in BenchmarkClassify.
func TestClassifyAllocs(t *testing.T) {
	events := map[string][]string{
		"anthropic": {
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":6}}`,
			`{"type": "ping"}`, `{"type":"message_stop"}`,
		},
		"openai": {
			`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]}`,
			`{"id":"c","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}`, `[DONE]`,
		},
		"responses": {
			`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi","logprobs":[]}`,
			`{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":3,"output_tokens":2}}}`,
		},
	}
	for api, datas := range events {
		p, _ := Lookup(api)
		for _, d := range datas {
			it := &sse.Item{Kind: sse.KindEvent, Type: []byte("message"), Data: []byte(d)}
			if n := testing.AllocsPerRun(100, func() { p.Classify(it) }); n != 0 {
				t.Errorf("%s: Classify(%s) allocates %v times", api, d, n)
			}
		}
	}
}
