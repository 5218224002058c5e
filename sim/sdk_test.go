package sim

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
)

// newTestServer serves a simulator with cfg on a loopback httptest server.
func newTestServer(t *testing.T, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	if cfg.StallMax == 0 {
		cfg.StallMax = 2 * time.Second
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(func() {
		s.Close()
		ts.Close()
	})
	return s, ts
}

func anthropicClient(ts *httptest.Server, fault Fault) anthropic.Client {
	opts := []aoption.RequestOption{aoption.WithBaseURL(ts.URL), aoption.WithAPIKey("test-key"), aoption.WithMaxRetries(0), aoption.WithHTTPClient(ts.Client())}
	if fault != FaultNone {
		opts = append(opts, aoption.WithHeader(FaultHeader, string(fault)))
	}
	return anthropic.NewClient(opts...)
}

func openaiClient(ts *httptest.Server, fault Fault) openai.Client {
	opts := []ooption.RequestOption{ooption.WithBaseURL(ts.URL + "/v1"), ooption.WithAPIKey("test-key"), ooption.WithMaxRetries(0), ooption.WithHTTPClient(ts.Client())}
	if fault != FaultNone {
		opts = append(opts, ooption.WithHeader(FaultHeader, string(fault)))
	}
	return openai.NewClient(opts...)
}

var anthropicParams = anthropic.MessageNewParams{
	Model:     "claude-sim-1",
	MaxTokens: 1000,
	Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello"))},
}

var chatParams = openai.ChatCompletionNewParams{
	Model:               "gpt-sim-1",
	Messages:            []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello")},
	MaxCompletionTokens: openai.Int(1000),
	StreamOptions:       openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
}

var responsesParams = responses.ResponseNewParams{
	Model:           "gpt-sim-1",
	Input:           responses.ResponseNewParamsInputUnion{OfString: openai.String("hello")},
	MaxOutputTokens: openai.Int(1000),
}

// expected returns the text and token count the simulator answers request
// idx of a fast-profile server with seed 0.
func expected(idx uint64, prof *Profile, maxTokens int) (thinking, text string, tokens int) {
	s := prof.ScheduleFor(0, idx, maxTokens)
	for i := range s.Tokens {
		if i < s.Thinking {
			thinking += token(idx, i)
		} else {
			text += token(idx, i-s.Thinking)
		}
	}
	return thinking, text, s.Tokens
}

func TestSDKAnthropic(t *testing.T) {
	for _, prof := range []*Profile{Fast(), fastThinking()} {
		t.Run(prof.Name, func(t *testing.T) {
			_, ts := newTestServer(t, Config{Profile: prof})
			client := anthropicClient(ts, FaultNone)
			ctx := context.Background()

			stream := client.Messages.NewStreaming(ctx, anthropicParams)
			defer stream.Close()
			var msg anthropic.Message
			for stream.Next() {
				if err := msg.Accumulate(stream.Current()); err != nil {
					t.Fatalf("accumulate: %v", err)
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("stream: %v", err)
			}
			thinking, text, tokens := expected(0, prof, 1000)
			checkAnthropic(t, &msg, thinking, text, tokens)

			got, err := client.Messages.New(ctx, anthropicParams)
			if err != nil {
				t.Fatalf("non-streaming: %v", err)
			}
			thinking, text, tokens = expected(1, prof, 1000)
			checkAnthropic(t, got, thinking, text, tokens)
		})
	}
}

// fastThinking is fast with a thinking block before the text.
func fastThinking() *Profile {
	p := Fast()
	p.Name = "fast-thinking"
	p.Thinking = ThinkingSpec{Probability: 1, Tokens: uniform(5, 10)}
	return p
}

func checkAnthropic(t *testing.T, msg *anthropic.Message, thinking, text string, tokens int) {
	t.Helper()
	var gotThinking, gotText string
	for _, b := range msg.Content {
		switch b.Type {
		case "thinking":
			gotThinking += b.Thinking
			if b.Signature == "" {
				t.Errorf("thinking block without signature")
			}
		case "text":
			gotText += b.Text
		}
	}
	if gotText != text || gotThinking != thinking {
		t.Errorf("text %q thinking %q, want %q and %q", gotText, gotThinking, text, thinking)
	}
	if msg.Usage.OutputTokens != int64(tokens) {
		t.Errorf("usage output_tokens %d, want %d (one per delta)", msg.Usage.OutputTokens, tokens)
	}
	if msg.Model != "claude-sim-1" || msg.StopReason != anthropic.StopReasonEndTurn {
		t.Errorf("model %q stop_reason %q", msg.Model, msg.StopReason)
	}
}

func TestSDKAnthropicMaxTokens(t *testing.T) {
	_, ts := newTestServer(t, Config{})
	client := anthropicClient(ts, FaultNone)
	p := anthropicParams
	p.MaxTokens = 5
	stream := client.Messages.NewStreaming(context.Background(), p)
	defer stream.Close()
	var msg anthropic.Message
	for stream.Next() {
		_ = msg.Accumulate(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if msg.StopReason != anthropic.StopReasonMaxTokens || msg.Usage.OutputTokens != 5 {
		t.Errorf("stop_reason %q output_tokens %d, want max_tokens and 5", msg.StopReason, msg.Usage.OutputTokens)
	}
}

func TestSDKChat(t *testing.T) {
	prof := Fast()
	_, ts := newTestServer(t, Config{Profile: prof})
	client := openaiClient(ts, FaultNone)
	ctx := context.Background()

	stream := client.Chat.Completions.NewStreaming(ctx, chatParams)
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	_, text, tokens := expected(0, prof, 1000)
	if len(acc.Choices) != 1 || acc.Choices[0].Message.Content != text {
		t.Fatalf("choices %+v, want text %q", acc.Choices, text)
	}
	if acc.Usage.CompletionTokens != int64(tokens) || acc.Choices[0].FinishReason != "stop" {
		t.Errorf("completion_tokens %d finish %q, want %d and stop", acc.Usage.CompletionTokens, acc.Choices[0].FinishReason, tokens)
	}

	got, err := client.Chat.Completions.New(ctx, chatParams)
	if err != nil {
		t.Fatalf("non-streaming: %v", err)
	}
	_, text, tokens = expected(1, prof, 1000)
	if got.Choices[0].Message.Content != text || got.Usage.CompletionTokens != int64(tokens) || got.Model != "gpt-sim-1" {
		t.Errorf("got %q, %d tokens, model %q; want %q, %d", got.Choices[0].Message.Content, got.Usage.CompletionTokens, got.Model, text, tokens)
	}

	p := chatParams
	p.MaxCompletionTokens = openai.Int(3)
	got, err = client.Chat.Completions.New(ctx, p)
	if err != nil {
		t.Fatalf("non-streaming, max 3: %v", err)
	}
	if got.Choices[0].FinishReason != "length" || got.Usage.CompletionTokens != 3 {
		t.Errorf("finish %q tokens %d, want length and 3", got.Choices[0].FinishReason, got.Usage.CompletionTokens)
	}
}

func TestSDKResponses(t *testing.T) {
	for _, prof := range []*Profile{Fast(), fastThinking()} {
		t.Run(prof.Name, func(t *testing.T) {
			_, ts := newTestServer(t, Config{Profile: prof})
			client := openaiClient(ts, FaultNone)
			ctx := context.Background()

			stream := client.Responses.NewStreaming(ctx, responsesParams)
			defer stream.Close()
			var text, thinking string
			var final responses.Response
			for stream.Next() {
				ev := stream.Current()
				switch ev.Type {
				case "response.output_text.delta":
					text += ev.Delta
				case "response.reasoning_summary_text.delta":
					thinking += ev.Delta
				case "response.completed":
					final = ev.Response
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("stream: %v", err)
			}
			wantThinking, wantText, tokens := expected(0, prof, 1000)
			if text != wantText || thinking != wantThinking {
				t.Errorf("streamed %q / %q, want %q / %q", text, thinking, wantText, wantThinking)
			}
			if final.Status != "completed" || final.Usage.OutputTokens != int64(tokens) || final.OutputText() != wantText {
				t.Errorf("completed: status %q output_tokens %d text %q; want %d tokens", final.Status, final.Usage.OutputTokens, final.OutputText(), tokens)
			}

			got, err := client.Responses.New(ctx, responsesParams)
			if err != nil {
				t.Fatalf("non-streaming: %v", err)
			}
			_, wantText, tokens = expected(1, prof, 1000)
			if got.OutputText() != wantText || got.Usage.OutputTokens != int64(tokens) || got.Model != "gpt-sim-1" {
				t.Errorf("got %q %d tokens model %q, want %q %d", got.OutputText(), got.Usage.OutputTokens, got.Model, wantText, tokens)
			}
		})
	}
}

func TestSDKHTTPFaults(t *testing.T) {
	_, ts := newTestServer(t, Config{})
	ctx := context.Background()
	for _, tc := range []struct {
		fault  Fault
		status int
	}{
		{FaultHTTP429, 429},
		{FaultHTTP529, 529},
		{FaultHTTP500, 500},
	} {
		t.Run(string(tc.fault), func(t *testing.T) {
			ac := anthropicClient(ts, tc.fault)
			_, err := ac.Messages.New(ctx, anthropicParams)
			var aerr *anthropic.Error
			if !errors.As(err, &aerr) || aerr.StatusCode != tc.status {
				t.Errorf("anthropic: %v, want *anthropic.Error with status %d", err, tc.status)
			} else if tc.status == 429 && aerr.Response.Header.Get("Retry-After") != "1" {
				t.Errorf("anthropic 429 retry-after %q, want 1", aerr.Response.Header.Get("Retry-After"))
			}
			stream := ac.Messages.NewStreaming(ctx, anthropicParams)
			defer stream.Close()
			for stream.Next() {
			}
			if !errors.As(stream.Err(), &aerr) || aerr.StatusCode != tc.status {
				t.Errorf("anthropic stream: %v, want status %d", stream.Err(), tc.status)
			}

			oc := openaiClient(ts, tc.fault)
			var oerr *openai.Error
			_, err = oc.Chat.Completions.New(ctx, chatParams)
			if !errors.As(err, &oerr) || oerr.StatusCode != tc.status {
				t.Errorf("chat: %v, want *openai.Error with status %d", err, tc.status)
			}
			_, err = oc.Responses.New(ctx, responsesParams)
			if !errors.As(err, &oerr) || oerr.StatusCode != tc.status {
				t.Errorf("responses: %v, want *openai.Error with status %d", err, tc.status)
			}
			if tc.status == 429 && oerr != nil && oerr.Code != "rate_limit_exceeded" {
				t.Errorf("responses 429 code %q, want rate_limit_exceeded", oerr.Code)
			}
		})
	}
}

func TestSDKErrorEvent(t *testing.T) {
	_, ts := newTestServer(t, Config{})
	ctx := context.Background()

	ac := anthropicClient(ts, FaultErrorEvent)
	as := ac.Messages.NewStreaming(ctx, anthropicParams)
	defer as.Close()
	var msg anthropic.Message
	for as.Next() {
		_ = msg.Accumulate(as.Current())
	}
	var aerr *anthropic.Error
	if !errors.As(as.Err(), &aerr) || !strings.Contains(aerr.Error(), "overloaded_error") {
		t.Errorf("anthropic: %v, want *anthropic.Error with overloaded_error", as.Err())
	}
	if len(msg.Content) == 0 || msg.Content[0].Text == "" {
		t.Errorf("anthropic: no content before the error event")
	}

	oc := openaiClient(ts, FaultErrorEvent)
	cs := oc.Chat.Completions.NewStreaming(ctx, chatParams)
	defer cs.Close()
	n := 0
	for cs.Next() {
		n++
	}
	var serr *ssestream.StreamError
	if !errors.As(cs.Err(), &serr) || !strings.Contains(serr.Message, "server_error") || n < 2 {
		t.Errorf("chat: %v after %d chunks, want a StreamError with server_error after content", cs.Err(), n)
	}

	rs := oc.Responses.NewStreaming(ctx, responsesParams)
	defer rs.Close()
	for rs.Next() {
	}
	if !errors.As(rs.Err(), &serr) || !strings.Contains(serr.Message, "server_error") {
		t.Errorf("responses: %v, want a StreamError with server_error", rs.Err())
	}
}

func TestSDKRequestShape(t *testing.T) {
	var seen []RequestInfo
	s, ts := newTestServer(t, Config{Observe: func(ri RequestInfo) { seen = append(seen, ri) }})
	ac := anthropicClient(ts, FaultNone)
	if _, err := ac.Messages.New(context.Background(), anthropicParams); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0].API != APIAnthropic || seen[0].Model != "claude-sim-1" || seen[0].MaxTokens != 1000 || seen[0].Stream {
		t.Errorf("observed %+v", seen)
	}
	if got := s.Stats(); got.Requests != 1 || got.ByAPI[APIAnthropic] != 1 || got.ByFault[FaultNone] != 1 {
		t.Errorf("stats %+v", got)
	}
	resp, err := ts.Client().Get(ts.URL + "/v1/messages")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: status %d, want 405", resp.StatusCode)
	}
}
