package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/tollgate-dev/tollgate/probe/sse"
)

type responses struct{ common }

// Responses returns the OpenAI Responses protocol (POST {base}/responses).
func Responses() Protocol { return responses{} }

// Name is "responses".
func (responses) Name() string { return "responses" }

// NewRequest builds a Responses call: the system prompt goes in
// instructions, the messages in input, the cap in max_output_tokens.
// System messages among r.Messages stay in input, where the API accepts
// them. A MaxTokens below 1 sends no cap.
func (responses) NewRequest(ctx context.Context, r Request) (*http.Request, error) {
	body := struct {
		Model           string    `json:"model"`
		Instructions    string    `json:"instructions,omitempty"`
		Input           []Message `json:"input"`
		MaxOutputTokens int       `json:"max_output_tokens,omitempty"`
		Stream          bool      `json:"stream"`
	}{Model: r.Model, Instructions: r.System, Input: r.Messages, MaxOutputTokens: max(r.MaxTokens, 0), Stream: r.Stream}
	if body.Input == nil {
		body.Input = []Message{}
	}
	req, err := newJSONRequest(ctx, r, "/responses", body, bearer(r.APIKey))
	if err != nil {
		return nil, fmt.Errorf("openai responses request: %w", err)
	}
	return req, nil
}

// deltaSuffix ends the type of every Responses event that streams a piece
// of an output item.
var deltaSuffix = []byte(".delta")

// Classify reads one Responses stream event. Content is any "*.delta"
// event whose delta is a non-empty string: output text, reasoning text and
// summaries, refusals, function, custom-tool and MCP arguments, code,
// audio. Naming the family rather than listing members keeps delta events
// added to the API counted as progress.
//
// response.completed is Terminal, and so is response.incomplete: it ends a
// stream the server finished on purpose (max_output_tokens reached, content
// filtered), as message_stop does after stop_reason max_tokens, so it is a
// complete answer, not a truncated one. Usage comes from either one's
// response.usage.
//
// Both error shapes are Error: the error event, with code and message at
// the top level, and response.failed, with them in response.error. A
// chunk with a top-level error object (some gateways) is Error too.
func (responses) Classify(it *sse.Item) Verdict {
	v := Verdict{OutputTokens: -1, InputTokens: -1}
	if it.Kind != sse.KindEvent || blank(it.Data) {
		return v
	}
	var (
		typ, code, msg     []byte
		delta, isError     bool
		rType, rCode, rMsg []byte
	)
	s := scanner{b: it.Data}
	s.open('{')
	for n := 0; s.member(n); n++ {
		switch string(s.key) {
		case "type":
			typ = s.str()
		case "delta":
			delta = s.text()
		case "code":
			code = s.str()
		case "message":
			msg = s.str()
		case "error":
			rType, rCode, rMsg, isError = s.errorFields()
		case "response":
			if !s.into('{') {
				continue
			}
			for m := 0; s.member(m); m++ {
				switch string(s.key) {
				case "usage":
					s.usage(&v, "input_tokens", "output_tokens")
				case "error":
					rType, rCode, rMsg, _ = s.errorFields()
				default:
					s.skip()
				}
			}
		default:
			s.skip()
		}
	}
	if !s.end() {
		return Verdict{Kind: Invalid, OutputTokens: -1, InputTokens: -1}
	}
	if string(typ) == "error" && len(code) == 0 && len(msg) == 0 {
		// The live API nests the fields: {"type":"error","error":{...}}.
		code, msg = rCode, rMsg
		if len(code) == 0 {
			code = rType
		}
	}
	switch {
	case string(typ) == "error":
		v.Kind, v.ErrorType, v.ErrorMessage = Error, jsonText(code), jsonText(msg)
	case string(typ) == "response.failed" || isError:
		v.Kind, v.ErrorType, v.ErrorMessage = Error, jsonText(rCode), jsonText(rMsg)
		if v.ErrorType == "" {
			v.ErrorType = jsonText(rType)
		}
	case string(typ) == "response.completed" || string(typ) == "response.incomplete":
		v.Kind = Terminal
	case delta && bytes.HasSuffix(typ, deltaSuffix):
		v.Kind = Content
	}
	return v
}

// ParseBody parses a Responses object: output[] items and usage. Text or
// a refusal in a message, reasoning text, or a function call's arguments
// is content. A response whose status is failed is an error.
func (responses) ParseBody(body []byte) (Body, error) {
	type part struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	}
	var r struct {
		Status string          `json:"status"`
		Error  json.RawMessage `json:"error"`
		Output []struct {
			Type      string `json:"type"`
			Content   []part `json:"content"`
			Summary   []part `json:"summary"`
			Arguments string `json:"arguments"`
			Input     string `json:"input"`
		} `json:"output"`
		Usage *tokenUsage `json:"usage"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return Body{}, fmt.Errorf("parse openai responses body: %w", err)
	}
	if r.Status == "failed" {
		var e struct{ Code, Message string }
		_ = json.Unmarshal(r.Error, &e) // a missing or odd error still fails the body
		return Body{}, fmt.Errorf("parse openai responses body: status failed: %s: %s", sanitize([]byte(e.Code), maxErrorText), sanitize([]byte(e.Message), maxErrorText))
	}
	b := Body{OutputTokens: -1, InputTokens: -1}
	for _, o := range r.Output {
		if o.Arguments != "" || o.Input != "" {
			b.HasContent = true
		}
		for _, parts := range [][]part{o.Content, o.Summary} {
			for _, p := range parts {
				if p.Text != "" || p.Refusal != "" {
					b.HasContent = true
				}
			}
		}
	}
	b.InputTokens, b.OutputTokens = r.Usage.counts()
	return b, nil
}
