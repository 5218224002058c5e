// Package wire speaks the three provider protocols tollgate drives:
// Anthropic Messages, OpenAI Chat Completions and OpenAI Responses. It
// builds requests, classifies stream events as content or not (SPEC §2),
// and parses non-streaming bodies, error bodies and response headers.
// It never touches the network and never keeps a clock.
package wire

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/tollgate-dev/tollgate/probe/sse"
)

// Kind is what one stream event means for the content-level clocks.
type Kind uint8

const (
	// NonContent is any event that does not prove generation progress:
	// pings, lifecycle events, usage-only chunks, empty deltas, unknown types.
	NonContent Kind = iota
	// Content proves generation progress and re-arms the gap clock.
	Content
	// Terminal is the event that ends a complete stream
	// (message_stop, [DONE], response.completed).
	Terminal
	// Error is a provider error event inside a 200 stream.
	Error
	// Invalid is an event whose data is not what the protocol allows (bad JSON).
	Invalid
)

// Verdict is what Classify learned from one event.
type Verdict struct {
	// Kind is the event's meaning for the clocks.
	Kind Kind
	// OutputTokens is the cumulative output token count the event reported,
	// or -1 when it reported none.
	OutputTokens int64
	// InputTokens is the input token count the event reported, or -1.
	InputTokens int64
	// ErrorType is the provider's error type for Kind Error
	// (overloaded_error, server_error, ...).
	ErrorType string
	// ErrorMessage is the provider's error message for Kind Error.
	ErrorMessage string
}

// Message is one turn of a prompt.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is everything needed to build one call's HTTP request.
type Request struct {
	// BaseURL is the base as the official SDKs take it
	// (https://api.anthropic.com, https://api.openai.com/v1); a path prefix is kept.
	BaseURL string
	// Model is the model name sent in the body.
	Model string
	// System is an optional system prompt.
	System string
	// Messages is the conversation to send.
	Messages []Message
	// MaxTokens caps the output.
	MaxTokens int
	// Stream selects a streaming (true) or non-streaming (false) call.
	Stream bool
	// APIKey is the credential; empty sends none.
	APIKey string
	// Header holds extra headers (-H); they override the protocol's own.
	Header http.Header
}

// Body is what a complete non-streaming 2xx body held.
type Body struct {
	// OutputTokens from usage, or -1 when the body had none.
	OutputTokens int64
	// InputTokens from usage, or -1.
	InputTokens int64
	// HasContent reports whether the answer held any content.
	HasContent bool
}

// ProviderError is a provider's error, from an HTTP error body or an error event.
type ProviderError struct {
	// Type is the provider's error type (rate_limit_error, overloaded_error, ...).
	Type string
	// Message is the provider's human-readable message.
	Message string
}

// Meta is what the response head told about the call.
type Meta struct {
	// RequestID is the provider's request id (request-id, x-request-id).
	RequestID string
	// RetryAfter is the wait the provider asked for (retry-after,
	// retry-after-ms, or the rate-limit reset headers); 0 when none.
	RetryAfter time.Duration
}

// Protocol is one provider API.
type Protocol interface {
	// Name is the --api name: anthropic, openai or responses.
	Name() string
	// NewRequest builds the HTTP request for one call.
	NewRequest(ctx context.Context, r Request) (*http.Request, error)
	// Classify reads one stream event. It must not allocate in the common
	// case: it runs once per event on the engine's hot path. Comments and
	// events with empty data are NonContent; data that is not one valid
	// JSON object (the chat stream's [DONE] aside) is Invalid. Item's byte
	// slices are not kept past the call.
	Classify(item *sse.Item) Verdict
	// ParseBody parses a complete non-streaming 2xx body.
	ParseBody(body []byte) (Body, error)
	// ParseError parses a non-2xx body; unknown shapes give an empty Type.
	ParseError(body []byte) ProviderError
	// ReadMeta reads the request id and retry hints from a response head.
	ReadMeta(h http.Header, now time.Time) Meta
}

// String returns the kind's name, as in "content" or "terminal".
func (k Kind) String() string {
	switch k {
	case NonContent:
		return "non_content"
	case Content:
		return "content"
	case Terminal:
		return "terminal"
	case Error:
		return "error"
	case Invalid:
		return "invalid"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}
