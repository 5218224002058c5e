package wire

import "testing"

func TestParseBody(t *testing.T) {
	cases := []struct {
		name, api, body string
		want            Body
		fails           bool
	}{
		// A Messages response with text and usage.
		{"anthropic text", "anthropic", `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Hello!"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":12,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":6}}`,
			Body{OutputTokens: 6, InputTokens: 12, HasContent: true}, false},
		// Only a tool call: still content.
		{"anthropic tool_use", "anthropic", `{"type":"message","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}],"usage":{"input_tokens":3,"output_tokens":9}}`,
			Body{OutputTokens: 9, InputTokens: 3, HasContent: true}, false},
		// A refusal with no content and no usage.
		{"anthropic empty", "anthropic", `{"type":"message","content":[],"stop_reason":"refusal"}`,
			Body{OutputTokens: -1, InputTokens: -1}, false},
		// An error object with a 200 status.
		{"anthropic error in 200", "anthropic", `{"type":"error","error":{"type":"api_error","message":"x"}}`, Body{}, true},
		// A chat completion.
		{"chat", "openai", `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"Hi there","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}`,
			Body{OutputTokens: 3, InputTokens: 9, HasContent: true}, false},
		// Tool calls with null content.
		{"chat tool calls", "openai", `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":2}}`,
			Body{OutputTokens: 2, InputTokens: 1, HasContent: true}, false},
		// An empty answer.
		{"chat empty", "openai", `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"length"}]}`,
			Body{OutputTokens: -1, InputTokens: -1}, false},
		{"chat error in 200", "openai", `{"error":{"message":"boom","type":"server_error"}}`, Body{}, true},
		// A Responses object with reasoning and a message.
		{"responses", "responses", `{"id":"resp_1","object":"response","status":"completed","error":null,"output":[{"id":"rs_1","type":"reasoning","summary":[]},{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"text":"Hi"}]}],"usage":{"input_tokens":37,"input_tokens_details":{"cached_tokens":0},"output_tokens":11,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":48}}`,
			Body{OutputTokens: 11, InputTokens: 37, HasContent: true}, false},
		// Only a function call.
		{"responses function call", "responses", `{"object":"response","status":"completed","output":[{"type":"function_call","call_id":"c","name":"f","arguments":"{\"a\":1}"}],"usage":{"input_tokens":1,"output_tokens":4}}`,
			Body{OutputTokens: 4, InputTokens: 1, HasContent: true}, false},
		{"responses failed", "responses", `{"object":"response","status":"failed","error":{"code":"server_error","message":"x"},"output":[]}`, Body{}, true},
		// Not JSON.
		{"bad json", "anthropic", `{"type":"message",`, Body{}, true},
		{"bad json chat", "openai", `nope`, Body{}, true},
		{"bad json responses", "responses", `[`, Body{}, true},
	}
	for _, tc := range cases {
		p, _ := Lookup(tc.api)
		got, err := p.ParseBody([]byte(tc.body))
		if (err != nil) != tc.fails {
			t.Errorf("%s: err = %v, want failure %v", tc.name, err, tc.fails)
			continue
		}
		if err == nil && got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
