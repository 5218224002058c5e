package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/tollgate-dev/tollgate/probe/sse"
)

// anthropicVersion is the API version header the Messages API requires.
const anthropicVersion = "2023-06-01"

type anthropic struct{ common }

// Anthropic returns the Anthropic Messages protocol (POST {base}/v1/messages).
func Anthropic() Protocol { return anthropic{} }

// Name is "anthropic".
func (anthropic) Name() string { return "anthropic" }

// NewRequest builds a Messages call. System messages found among
// r.Messages join r.System in the top-level system field, the only place
// the Messages API accepts them. max_tokens is required by the API, so a
// MaxTokens below 1 is an error here rather than a 400 later.
func (anthropic) NewRequest(ctx context.Context, r Request) (*http.Request, error) {
	if r.MaxTokens < 1 {
		return nil, errors.New("anthropic request: max_tokens must be at least 1")
	}
	body := struct {
		Model     string    `json:"model"`
		System    string    `json:"system,omitempty"`
		Messages  []Message `json:"messages"`
		MaxTokens int       `json:"max_tokens"`
		Stream    bool      `json:"stream"`
	}{Model: r.Model, MaxTokens: r.MaxTokens, Stream: r.Stream, Messages: []Message{}}
	var system []string
	if r.System != "" {
		system = append(system, r.System)
	}
	for _, m := range r.Messages {
		if m.Role == "system" {
			system = append(system, m.Content)
			continue
		}
		body.Messages = append(body.Messages, m)
	}
	body.System = strings.Join(system, "\n\n")
	auth := http.Header{"Anthropic-Version": {anthropicVersion}}
	if r.APIKey != "" {
		auth["X-Api-Key"] = []string{r.APIKey}
	}
	req, err := newJSONRequest(ctx, r, "/v1/messages", body, auth)
	if err != nil {
		return nil, fmt.Errorf("anthropic request: %w", err)
	}
	return req, nil
}

// Classify reads one Messages stream event. Content is a
// content_block_delta whose text_delta, thinking_delta or input_json_delta
// carries a non-empty string, and a compaction_delta with a non-empty
// content or encrypted_content: compaction is the model writing a summary
// of the conversation, so it is generation progress as much as text is. citations_delta and signature_delta are not
// content: they annotate or seal what was generated. message_stop is
// Terminal; an error event (by event name or data type) is Error, even
// when its data is not JSON (the data becomes the message). Usage
// comes from message_start's message.usage and message_delta's usage,
// whose output_tokens is cumulative. Events with empty data are skipped by
// the official SDK and are NonContent here.
func (anthropic) Classify(it *sse.Item) Verdict {
	v := Verdict{OutputTokens: -1, InputTokens: -1}
	if it.Kind != sse.KindEvent || blank(it.Data) {
		return v
	}
	isErrorEvent := string(it.Type) == "error"
	var (
		typ, errType, msg []byte
		deltaText         bool
	)
	s := scanner{b: it.Data}
	s.open('{')
	for n := 0; s.member(n); n++ {
		switch string(s.key) {
		case "type":
			typ = s.str()
		case "delta":
			deltaText = anthropicDelta(&s)
		case "usage":
			s.usage(&v, "input_tokens", "output_tokens")
		case "message":
			if !s.into('{') {
				continue
			}
			for m := 0; s.member(m); m++ {
				if string(s.key) == "usage" {
					s.usage(&v, "input_tokens", "output_tokens")
				} else {
					s.skip()
				}
			}
		case "error":
			errType, _, msg, _ = s.errorFields()
		default:
			s.skip()
		}
	}
	if !s.end() {
		if isErrorEvent {
			return Verdict{Kind: Error, OutputTokens: -1, InputTokens: -1, ErrorMessage: sanitize(it.Data, maxErrorText)}
		}
		return Verdict{Kind: Invalid, OutputTokens: -1, InputTokens: -1}
	}
	switch string(typ) {
	case "content_block_delta":
		if deltaText {
			v.Kind = Content
		}
	case "message_stop":
		v.Kind = Terminal
	case "error":
		isErrorEvent = true
	}
	if isErrorEvent {
		v.Kind = Error
		v.ErrorType = jsonText(errType)
		v.ErrorMessage = jsonText(msg)
	}
	return v
}

// anthropicDelta reads a delta object and reports whether it is one of
// the content kinds with its field non-empty: text_delta's text,
// thinking_delta's thinking, input_json_delta's partial_json,
// compaction_delta's content or encrypted_content. Keys may come in any
// order, so every candidate field is noted and matched to the type after.
func anthropicDelta(s *scanner) bool {
	if !s.into('{') {
		return false
	}
	var typ []byte
	var text, thinking, partial, compaction bool
	for n := 0; s.member(n); n++ {
		switch string(s.key) {
		case "type":
			typ = s.str()
		case "text":
			text = s.text()
		case "thinking":
			thinking = s.text()
		case "partial_json":
			partial = s.text()
		case "content", "encrypted_content":
			compaction = s.text() || compaction
		default:
			s.skip()
		}
	}
	switch string(typ) {
	case "text_delta":
		return text
	case "thinking_delta":
		return thinking
	case "input_json_delta":
		return partial
	case "compaction_delta":
		return compaction
	}
	return false
}

// ParseBody parses a Messages response: content[] blocks and usage.
// A text or thinking block with text, or any tool_use block, is content.
func (anthropic) ParseBody(body []byte) (Body, error) {
	var m struct {
		Type    string `json:"type"`
		Content []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			Thinking string `json:"thinking"`
		} `json:"content"`
		Usage *tokenUsage `json:"usage"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return Body{}, fmt.Errorf("parse anthropic message body: %w", err)
	}
	if m.Type == "error" {
		return Body{}, fmt.Errorf("parse anthropic message body: an error object in a 2xx response: %s", parseError(body).Message)
	}
	b := Body{OutputTokens: -1, InputTokens: -1}
	for _, c := range m.Content {
		if c.Text != "" || c.Thinking != "" || c.Type == "tool_use" {
			b.HasContent = true
		}
	}
	b.InputTokens, b.OutputTokens = m.Usage.counts()
	return b, nil
}

// tokenUsage is the usage object of Messages and Responses bodies.
type tokenUsage struct {
	InputTokens  *int64 `json:"input_tokens"`
	OutputTokens *int64 `json:"output_tokens"`
}

// counts returns the input and output tokens, -1 for each one absent.
func (u *tokenUsage) counts() (in, out int64) {
	if u == nil {
		return -1, -1
	}
	return orNone(u.InputTokens), orNone(u.OutputTokens)
}

// orNone returns *p, or -1 when the field was absent.
func orNone(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

// blank reports whether b holds only whitespace.
func blank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}
