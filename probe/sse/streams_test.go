package sse

import (
	"fmt"
	"strings"
)

// words are the text pieces of the generated streams: token-sized, with
// the quotes and escapes that real deltas carry.
var words = []string{"The", " quick", " brown", " fox", ",", " jumps", " over", " the", " lazy",
	" dog", ".", "\\n\\n", " It", "'s", " \\\"fine\\\"", " —", " really", "!"}

// anthropicStream returns a Messages API stream shaped like the real one:
// message_start, a text block of n text_delta events with a ping every 50,
// then message_delta and message_stop, each event ended by a blank line.
func anthropicStream(n int) []byte {
	var b strings.Builder
	b.WriteString("event: message_start\n" +
		`data: {"type":"message_start","message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":472,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":2,"service_tier":"standard"}}}` + "\n\n" +
		"event: content_block_start\n" +
		`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n")
	for i := range n {
		if i%50 == 0 {
			b.WriteString("event: ping\ndata: {\"type\": \"ping\"}\n\n")
		}
		fmt.Fprintf(&b, "event: content_block_delta\n"+
			`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"%s"}}`+"\n\n",
			words[i%len(words)])
	}
	fmt.Fprintf(&b, "event: content_block_stop\n"+
		`data: {"type":"content_block_stop","index":0}`+"\n\n"+
		"event: message_delta\n"+
		`data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":%d}}`+"\n\n"+
		"event: message_stop\n"+
		`data: {"type":"message_stop"}`+"\n\n", n)
	return []byte(b.String())
}

// openAIChatStream returns a Chat Completions stream shaped like the real
// one: a role-only chunk, n content chunks, a finish chunk, a usage chunk
// with empty choices and data: [DONE].
func openAIChatStream(n int) []byte {
	const head = `data: {"id":"chatcmpl-AH0ggbVu5NU3lYrwAoqZZLdCDvBbz","object":"chat.completion.chunk","created":1728933130,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_6b68a8204b",`
	var b strings.Builder
	b.WriteString(head + `"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n")
	for i := range n {
		fmt.Fprintf(&b, head+`"choices":[{"index":0,"delta":{"content":"%s"},"logprobs":null,"finish_reason":null}],"usage":null}`+"\n\n",
			words[i%len(words)])
	}
	b.WriteString(head + `"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}` + "\n\n")
	fmt.Fprintf(&b, head+`"choices":[],"usage":{"prompt_tokens":17,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n", n, n+17)
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}
