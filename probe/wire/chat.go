package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/tollgate-dev/tollgate/probe/sse"
)

type chat struct{ common }

// OpenAIChat returns the OpenAI Chat Completions protocol
// (POST {base}/chat/completions), also spoken by most OpenAI-compatible
// servers (vLLM, llama.cpp, Ollama, Azure, gateways).
func OpenAIChat() Protocol { return chat{} }

// Name is "openai".
func (chat) Name() string { return "openai" }

// chatStreamOptions asks for the usage chunk at the end of a stream; without
// it a chat stream reports no token counts at all.
type chatStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// NewRequest builds a Chat Completions call. The cap is sent as max_tokens,
// not max_completion_tokens: every OpenAI-compatible server accepts
// max_tokens, while max_completion_tokens is newer and unknown to many of
// them. OpenAI's reasoning models (o-series, gpt-5) refuse max_tokens; for
// them use --api responses. A MaxTokens below 1 sends no cap.
func (chat) NewRequest(ctx context.Context, r Request) (*http.Request, error) {
	body := struct {
		Model         string             `json:"model"`
		Messages      []Message          `json:"messages"`
		MaxTokens     int                `json:"max_tokens,omitempty"`
		Stream        bool               `json:"stream"`
		StreamOptions *chatStreamOptions `json:"stream_options,omitempty"`
	}{Model: r.Model, MaxTokens: max(r.MaxTokens, 0), Stream: r.Stream}
	body.Messages = make([]Message, 0, len(r.Messages)+1)
	if r.System != "" {
		body.Messages = append(body.Messages, Message{Role: "system", Content: r.System})
	}
	body.Messages = append(body.Messages, r.Messages...)
	if r.Stream {
		body.StreamOptions = &chatStreamOptions{IncludeUsage: true}
	}
	req, err := newJSONRequest(ctx, r, "/chat/completions", body, bearer(r.APIKey))
	if err != nil {
		return nil, fmt.Errorf("openai chat request: %w", err)
	}
	return req, nil
}

// bearer is the OpenAI auth header, or none without a key.
func bearer(key string) http.Header {
	if key == "" {
		return nil
	}
	return http.Header{"Authorization": {"Bearer " + key}}
}

// done is the data of the chat stream's terminal event.
var done = []byte("[DONE]")

// Classify reads one chat completion chunk. Content is a choice whose
// delta carries a non-empty content, refusal, reasoning_content (DeepSeek,
// vLLM), reasoning (OpenRouter, Ollama) or tool-call arguments. Role-only
// first chunks, finish chunks, the usage chunk (choices []) and Azure's
// prompt_filter_results chunk are NonContent. data: [DONE] is Terminal. A
// chunk with a non-null top-level error is Error, as the official SDK
// treats it. Usage is the usage object's completion and prompt tokens.
func (chat) Classify(it *sse.Item) Verdict {
	v := Verdict{OutputTokens: -1, InputTokens: -1}
	if it.Kind != sse.KindEvent || blank(it.Data) {
		return v
	}
	if bytes.Equal(bytes.TrimSpace(it.Data), done) {
		v.Kind = Terminal
		return v
	}
	var (
		content            bool
		isError            bool
		errType, code, msg []byte
	)
	s := scanner{b: it.Data}
	s.open('{')
	for n := 0; s.member(n); n++ {
		switch string(s.key) {
		case "choices":
			if !s.into('[') {
				continue
			}
			for e := 0; s.elem(e); e++ {
				content = chatChoice(&s) || content
			}
		case "usage":
			s.usage(&v, "prompt_tokens", "completion_tokens")
		case "error":
			errType, code, msg, isError = s.errorFields()
		default:
			s.skip()
		}
	}
	if !s.end() {
		return Verdict{Kind: Invalid, OutputTokens: -1, InputTokens: -1}
	}
	switch {
	case isError:
		v.Kind = Error
		v.ErrorType = jsonText(errType)
		if v.ErrorType == "" {
			v.ErrorType = jsonText(code)
		}
		v.ErrorMessage = jsonText(msg)
	case content:
		v.Kind = Content
	}
	return v
}

// chatChoice reads one element of choices and reports whether its delta
// carries content.
func chatChoice(s *scanner) bool {
	if !s.into('{') {
		return false
	}
	content := false
	for n := 0; s.member(n); n++ {
		if string(s.key) != "delta" {
			s.skip()
			continue
		}
		if !s.into('{') {
			continue
		}
		for m := 0; s.member(m); m++ {
			switch string(s.key) {
			case "content", "refusal", "reasoning_content", "reasoning":
				content = s.text() || content
			case "tool_calls":
				if !s.into('[') {
					continue
				}
				for e := 0; s.elem(e); e++ {
					content = functionArguments(s, "function") || content
				}
			case "function_call":
				content = functionArguments(s, "") || content
			default:
				s.skip()
			}
		}
	}
	return content
}

// functionArguments reads a tool call (wrapper "function") or a legacy
// function_call (wrapper "") and reports whether its arguments are a
// non-empty string.
func functionArguments(s *scanner, wrapper string) bool {
	if !s.into('{') {
		return false
	}
	found := false
	for n := 0; s.member(n); n++ {
		switch {
		case wrapper != "" && string(s.key) == wrapper:
			found = functionArguments(s, "") || found
		case wrapper == "" && string(s.key) == "arguments":
			found = s.text() || found
		default:
			s.skip()
		}
	}
	return found
}

// ParseBody parses a chat completion: choices[].message and usage.
func (chat) ParseBody(body []byte) (Body, error) {
	var c struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				Content          *string           `json:"content"`
				Refusal          *string           `json:"refusal"`
				ReasoningContent *string           `json:"reasoning_content"`
				Reasoning        *string           `json:"reasoning"`
				ToolCalls        []json.RawMessage `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
		Usage *struct {
			PromptTokens     *int64 `json:"prompt_tokens"`
			CompletionTokens *int64 `json:"completion_tokens"`
		} `json:"usage"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &c); err != nil {
		return Body{}, fmt.Errorf("parse openai chat completion body: %w", err)
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return Body{}, fmt.Errorf("parse openai chat completion body: an error object in a 2xx response: %s", parseError(body).Message)
	}
	b := Body{OutputTokens: -1, InputTokens: -1}
	for _, ch := range c.Choices {
		m := ch.Message
		if nonEmpty(m.Content) || nonEmpty(m.Refusal) || nonEmpty(m.ReasoningContent) || nonEmpty(m.Reasoning) || len(m.ToolCalls) > 0 {
			b.HasContent = true
		}
	}
	if c.Usage != nil {
		b.InputTokens = orNone(c.Usage.PromptTokens)
		b.OutputTokens = orNone(c.Usage.CompletionTokens)
	}
	return b, nil
}

func nonEmpty(p *string) bool { return p != nil && *p != "" }
