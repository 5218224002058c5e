package wire

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/tollgate-dev/tollgate/probe/sse"
)

// fixtures is the shared folder of captured provider streams, beside the repo.
var fixtures = filepath.Join("..", "..", "..", "shared", "fixtures")

// ownStreams is the project's own test streams.
var ownStreams = filepath.Join("..", "..", "testdata", "streams")

// tally is what one stream amounted to, as the engine would see it.
type tally struct {
	kinds    []Kind // every dispatched event's kind, in order
	content  int
	comments int
	terminal int
	invalid  int
	errors   int
	// output and input are the last token counts any event reported, or -1.
	output, input int64
	errType       string
	errMsg        string
	// discarded is the verdict on the event the reader discarded at the end
	// of input (no final blank line), or nil when there was none.
	discarded *Verdict
}

// classifyAll reads a whole stream through sse.Reader and Classify.
func classifyAll(t *testing.T, p Protocol, r io.Reader) tally {
	t.Helper()
	rd := sse.NewReader(r, sse.Options{})
	tl := tally{output: -1, input: -1}
	for {
		it, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("read stream: %v", err)
		}
		v := p.Classify(it)
		if it.Kind == sse.KindComment {
			tl.comments++
			if v.Kind != NonContent {
				t.Errorf("comment %q classified %v, want NonContent", it.Comment, v.Kind)
			}
			continue
		}
		tl.kinds = append(tl.kinds, v.Kind)
		switch v.Kind {
		case Content:
			tl.content++
		case Terminal:
			tl.terminal++
		case Invalid:
			tl.invalid++
		case Error:
			tl.errors++
			tl.errType, tl.errMsg = v.ErrorType, v.ErrorMessage
		}
		if v.OutputTokens >= 0 {
			tl.output = v.OutputTokens
		}
		if v.InputTokens >= 0 {
			tl.input = v.InputTokens
		}
	}
	if d := rd.Discarded(); d != nil {
		v := p.Classify(d)
		tl.discarded = &v
	}
	return tl
}

// streamCase is one stream file and what must come out of it.
type streamCase struct {
	file     string
	api      string
	content  int
	terminal int  // terminal events dispatched
	lastStop bool // the discarded last event is the terminal one
	output   int64
	input    int64
	comments int
	errType  string
	errMsg   string
}

func checkStream(t *testing.T, dir string, tc streamCase) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, tc.file))
	if err != nil {
		t.Fatalf("read %s: %v", tc.file, err)
	}
	p, err := Lookup(tc.api)
	if err != nil {
		t.Fatal(err)
	}
	tl := classifyAll(t, p, bytes.NewReader(b))
	if tl.content != tc.content {
		t.Errorf("content deltas = %d, want %d (kinds %v)", tl.content, tc.content, tl.kinds)
	}
	if tl.terminal != tc.terminal {
		t.Errorf("terminal events = %d, want %d", tl.terminal, tc.terminal)
	}
	if tc.terminal == 1 && tl.kinds[len(tl.kinds)-1] != Terminal {
		t.Errorf("last event is %v, want Terminal", tl.kinds[len(tl.kinds)-1])
	}
	switch {
	case tc.lastStop && (tl.discarded == nil || tl.discarded.Kind != Terminal):
		t.Errorf("discarded last event = %+v, want a Terminal one", tl.discarded)
	case !tc.lastStop && tl.discarded != nil:
		t.Errorf("discarded an event (%+v), want none", *tl.discarded)
	}
	if tl.output != tc.output || tl.input != tc.input {
		t.Errorf("tokens out/in = %d/%d, want %d/%d", tl.output, tl.input, tc.output, tc.input)
	}
	if tl.comments != tc.comments {
		t.Errorf("comments = %d, want %d", tl.comments, tc.comments)
	}
	if tl.invalid != 0 {
		t.Errorf("%d events classified Invalid in a well-formed stream", tl.invalid)
	}
	wantErrors := 0
	if tc.errType != "" {
		wantErrors = 1
	}
	if tl.errors != wantErrors || tl.errType != tc.errType || tl.errMsg != tc.errMsg {
		t.Errorf("errors = %d (%q: %q), want %d (%q: %q)", tl.errors, tl.errType, tl.errMsg, wantErrors, tc.errType, tc.errMsg)
	}
}

// TestFixtureStreams runs every captured provider stream through the SSE
// reader and Classify. The expected numbers were counted by hand from the
// files.
func TestFixtureStreams(t *testing.T) {
	if _, err := os.Stat(fixtures); err != nil {
		t.Skipf("shared fixtures not found at %s: %v", fixtures, err)
	}
	cases := []streamCase{
		// "Hello", " there", "!"; one ping. No final blank line, so
		// message_stop is discarded; usage 11 in (message_start), 6 out
		// (message_delta).
		{file: "anthropic/basic_response.txt", api: "anthropic", content: 3, lastStop: true, output: 6, input: 11},
		// One compaction_delta with a summary, then one text_delta. The file
		// ends with one LF after message_stop, not a blank line.
		{file: "anthropic/compaction_response.txt", api: "anthropic", content: 2, lastStop: true, output: 8, input: 30},
		// Five text_deltas, then four input_json_deltas of which the first is
		// empty (""): 5 + 3. Trailing spaces after every JSON object.
		{file: "anthropic/incomplete_partial_json_response.txt", api: "anthropic", content: 8, lastStop: true, output: 124, input: 450},
		// A refusal: a text block opened and closed with no delta at all.
		{file: "anthropic/refusal_response.txt", api: "anthropic", content: 0, lastStop: true, output: 0, input: 20},
		// Three non-empty thinking_deltas, one empty one, a signature_delta
		// (not content), then one text_delta "Hi". message_delta's usage
		// holds an iterations[] array with its own output_tokens: the
		// top-level 106 is the one to read. Ends with a blank line.
		{file: "anthropic/thinking_signature_refusal.sse", api: "anthropic", content: 4, terminal: 1, output: 106, input: 28},
		// Two text_deltas, then input_json_deltas "", "{\"locati", "on\": \"P",
		// "ar", "is\"}": 2 + 4.
		{file: "anthropic/tool_use_response.txt", api: "anthropic", content: 6, lastStop: true, output: 65, input: 377},
		// Role-only chunk with refusal "", ten refusal deltas ("I'm" ... "."),
		// finish chunk, usage chunk (choices []), [DONE].
		{file: "openai-chat/173417d553406f03.sse", api: "openai", content: 10, terminal: 1, output: 11, input: 79},
		// First chunk opens the tool call with arguments "", then seven
		// argument fragments: {" city ":" New York City "}.
		{file: "openai-chat/2018feb66ae13fcf.sse", api: "openai", content: 7, terminal: 1, output: 16, input: 44},
		// Role chunk with content "", "Foo", "!"; logprobs objects carry their
		// own "content" arrays, which are not deltas.
		{file: "openai-chat/83b060bae42eb41c.sse", api: "openai", content: 2, terminal: 1, output: 2, input: 9},
		// Role chunk, thirty one-token content chunks ("I'm" ... "app", "."),
		// matching completion_tokens 30.
		{file: "openai-chat/e2aad469b71d1d48.sse", api: "openai", content: 30, terminal: 1, output: 30, input: 14},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) { checkStream(t, fixtures, tc) })
	}
}

// TestOwnStreams covers what the captured fixtures lack. The files are in
// testdata/streams, written byte for byte after the providers' real events.
func TestOwnStreams(t *testing.T) {
	cases := []streamCase{
		// Thinking (two deltas, a signature), text (two), tool_use (an empty
		// input_json_delta, then two fragments), two pings: 2 + 2 + 2.
		{file: "anthropic/thinking_tool_use.sse", api: "anthropic", content: 6, terminal: 1, output: 89, input: 412},
		// Two text deltas, then an overloaded_error event and no message_stop.
		{file: "anthropic/overloaded_error.sse", api: "anthropic", content: 2, output: 1, input: 25,
			errType: "overloaded_error", errMsg: "Overloaded"},
		// Lone-CR line ends throughout; two text deltas and one empty one.
		{file: "anthropic/lone_cr.sse", api: "anthropic", content: 2, terminal: 1, output: 9, input: 14},
		// Azure: a first chunk with choices [] and prompt_filter_results, a
		// role chunk, five content chunks, finish, usage, [DONE]; CRLF line
		// ends.
		{file: "openai-chat/azure_prompt_filter_crlf.sse", api: "openai", content: 5, terminal: 1, output: 7, input: 19},
		// DeepSeek: a leading BOM, two ": keep-alive" comments and a bare ":",
		// three reasoning_content deltas and two content deltas; usage rides
		// on the finish chunk.
		{file: "openai-chat/deepseek_reasoning_bom_keepalive.sse", api: "openai", content: 5, terminal: 1, output: 38, input: 12, comments: 3},
		// OpenRouter: two ": OPENROUTER PROCESSING" comments, two reasoning
		// deltas, two content deltas, a finish chunk and a usage chunk whose
		// choice has an empty content.
		{file: "openai-chat/openrouter_reasoning.sse", api: "openai", content: 4, terminal: 1, output: 57, input: 11, comments: 2},
		// Role chunk, two content chunks, then {"error": ...} and no [DONE].
		{file: "openai-chat/midstream_error.sse", api: "openai", content: 2, output: -1, input: -1,
			errType: "server_error", errMsg: "The server had an error while processing your request. Sorry about that!"},
		// created, in_progress, item and part added, six output_text deltas,
		// the done events, response.completed with usage.
		{file: "responses/text.sse", api: "responses", content: 6, terminal: 1, output: 11, input: 37},
		// Two reasoning_summary_text deltas, three function_call_arguments
		// deltas.
		{file: "responses/reasoning_function_call.sse", api: "responses", content: 5, terminal: 1, output: 152, input: 81},
		// The error event: code and message at the top level.
		{file: "responses/error_event.sse", api: "responses", content: 0, output: -1, input: -1,
			errType: "server_error", errMsg: "The server had an error processing your request. Sorry about that! You can retry your request."},
		// One delta, then response.failed with response.error.
		{file: "responses/failed.sse", api: "responses", content: 1, output: -1, input: -1,
			errType: "server_error", errMsg: "The model failed to generate a response."},
		// Three deltas, then response.incomplete (max_output_tokens): a
		// complete stream, so Terminal.
		{file: "responses/incomplete.sse", api: "responses", content: 3, terminal: 1, output: 16, input: 20},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) { checkStream(t, ownStreams, tc) })
	}
}

// TestTTFTFirstContent checks what the ttft clock stops on: on an OpenAI
// stream the role-only first chunk is not content, the first non-empty
// delta is.
func TestTTFTFirstContent(t *testing.T) {
	for _, file := range []string{
		filepath.Join(ownStreams, "openai-chat", "azure_prompt_filter_crlf.sse"),
		filepath.Join(ownStreams, "openai-chat", "midstream_error.sse"),
	} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		tl := classifyAll(t, OpenAIChat(), bytes.NewReader(b))
		first := -1
		for i, k := range tl.kinds {
			if k == Content {
				first = i
				break
			}
		}
		if first < 1 {
			t.Fatalf("%s: first content at event %d, want after the role chunk (kinds %v)", file, first, tl.kinds)
		}
		it := nthEvent(t, b, first)
		if !bytes.Contains(it, []byte(`"content":"`)) || bytes.Contains(it, []byte(`"content":""`)) {
			t.Errorf("%s: first content event %s does not carry text", file, it)
		}
		role := nthEvent(t, b, first-1)
		if !bytes.Contains(role, []byte(`"role":"assistant"`)) {
			t.Errorf("%s: event before the first content is %s, want the role chunk", file, role)
		}
	}
}

// nthEvent returns the data of the n-th event (comments not counted).
func nthEvent(t *testing.T, stream []byte, n int) []byte {
	t.Helper()
	for _, it := range readItems(t, stream) {
		if it.Kind != sse.KindEvent {
			continue
		}
		if n == 0 {
			return it.Data
		}
		n--
	}
	t.Fatalf("stream has no event %d", n)
	return nil
}

// readItems reads a whole stream into Items that own their bytes.
func readItems(tb testing.TB, stream []byte) []sse.Item {
	tb.Helper()
	var items []sse.Item
	rd := sse.NewReader(bytes.NewReader(stream), sse.Options{})
	for {
		it, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return items
		}
		if err != nil {
			tb.Fatalf("read stream: %v", err)
		}
		items = append(items, sse.Item{Kind: it.Kind, Type: bytes.Clone(it.Type), Data: bytes.Clone(it.Data), Comment: bytes.Clone(it.Comment)})
	}
}
