package wire

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	for _, name := range []string{"anthropic", "openai", "responses"} {
		p, err := Lookup(name)
		if err != nil || p.Name() != name {
			t.Errorf("Lookup(%q) = %v, %v", name, p, err)
		}
	}
	if got := Names(); !reflect.DeepEqual(got, []string{"anthropic", "openai", "responses"}) {
		t.Errorf("Names() = %v", got)
	}
	_, err := Lookup("gemini")
	if err == nil || !strings.Contains(err.Error(), `"gemini"`) || !strings.Contains(err.Error(), "anthropic, openai, responses") {
		t.Errorf("Lookup(gemini) error = %v, want it to name the bad and the valid apis", err)
	}
}

func TestRequestURL(t *testing.T) {
	cases := []struct {
		api, base, want string
	}{
		// The bases the official SDKs default to.
		{"anthropic", "https://api.anthropic.com", "https://api.anthropic.com/v1/messages"},
		{"openai", "https://api.openai.com/v1", "https://api.openai.com/v1/chat/completions"},
		{"responses", "https://api.openai.com/v1", "https://api.openai.com/v1/responses"},
		// A trailing slash is not doubled.
		{"anthropic", "https://api.anthropic.com/", "https://api.anthropic.com/v1/messages"},
		{"openai", "https://api.openai.com/v1/", "https://api.openai.com/v1/chat/completions"},
		// A gateway's path prefix is kept.
		{"anthropic", "http://127.0.0.1:8080/gw/anthropic", "http://127.0.0.1:8080/gw/anthropic/v1/messages"},
		{"responses", "https://gw.example.com/openai/v1//", "https://gw.example.com/openai/v1/responses"},
		// A query (Azure's api-version) stays a query.
		{"openai", "https://x.openai.azure.com/openai/deployments/d?api-version=2024-10-21",
			"https://x.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21"},
	}
	for _, tc := range cases {
		p, _ := Lookup(tc.api)
		req, err := p.NewRequest(context.Background(), Request{BaseURL: tc.base, Model: "m", MaxTokens: 5})
		if err != nil {
			t.Errorf("%s %s: %v", tc.api, tc.base, err)
			continue
		}
		if req.URL.String() != tc.want || req.Method != http.MethodPost {
			t.Errorf("%s %s: %s %s, want POST %s", tc.api, tc.base, req.Method, req.URL, tc.want)
		}
	}
	for _, bad := range []string{"api.anthropic.com", "ftp://x", "http://", "://x",
		"https://user:s3cret@h.example:port/", "ftp://user:s3cret@h.example/"} {
		_, err := Anthropic().NewRequest(context.Background(), Request{BaseURL: bad, MaxTokens: 5})
		if err == nil {
			t.Errorf("base %q accepted", bad)
		} else if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("base %q: error %q repeats the credential", bad, err)
		}
	}
}

func TestRequestHeaders(t *testing.T) {
	extra := http.Header{}
	extra.Set("X-Gateway-Route", "fast")
	extra["anthropic-version"] = []string{"2099-01-01"} // not canonical, as a user may type it
	cases := []struct {
		api    string
		stream bool
		header http.Header
		want   map[string]string // "" means the header must be absent
	}{
		{"anthropic", true, nil, map[string]string{
			"X-Api-Key": "sk-test", "Anthropic-Version": "2023-06-01", "Authorization": "",
			"Content-Type": "application/json", "Accept": "text/event-stream"}},
		{"anthropic", false, extra, map[string]string{
			"X-Api-Key": "sk-test", "Anthropic-Version": "2099-01-01", "X-Gateway-Route": "fast",
			"Accept": "application/json"}},
		{"openai", true, nil, map[string]string{
			"Authorization": "Bearer sk-test", "X-Api-Key": "", "Anthropic-Version": "",
			"Content-Type": "application/json", "Accept": "text/event-stream"}},
		{"responses", true, http.Header{"Authorization": {"Bearer gateway-token"}}, map[string]string{
			"Authorization": "Bearer gateway-token", "Accept": "text/event-stream"}},
	}
	for _, tc := range cases {
		p, _ := Lookup(tc.api)
		req, err := p.NewRequest(context.Background(), Request{
			BaseURL: "https://h.example", Model: "m", MaxTokens: 5, Stream: tc.stream, APIKey: "sk-test", Header: tc.header,
		})
		if err != nil {
			t.Fatal(err)
		}
		for k, want := range tc.want {
			if got := req.Header.Get(k); got != want {
				t.Errorf("%s stream=%v: %s = %q, want %q", tc.api, tc.stream, k, got, want)
			}
		}
	}
	// Without a key no credential header is sent.
	for _, p := range protocols {
		req, err := p.NewRequest(context.Background(), Request{BaseURL: "https://h.example", Model: "m", MaxTokens: 5})
		if err != nil {
			t.Fatal(err)
		}
		if req.Header.Get("Authorization") != "" || req.Header.Get("X-Api-Key") != "" {
			t.Errorf("%s: credential header without a key: %v", p.Name(), req.Header)
		}
	}
}

// decodeBody reads the request body, and the body GetBody gives again, as JSON.
func decodeBody(t *testing.T, req *http.Request) map[string]any {
	t.Helper()
	first, err := io.ReadAll(req.Body)
	if err != nil {
		t.Fatal(err)
	}
	if req.GetBody == nil {
		t.Fatal("GetBody is nil: the body cannot be resent")
	}
	rc, err := req.GetBody()
	if err != nil {
		t.Fatal(err)
	}
	again, _ := io.ReadAll(rc)
	if string(again) != string(first) || req.ContentLength != int64(len(first)) {
		t.Errorf("resent body %q / length %d differ from %q", again, req.ContentLength, first)
	}
	var m map[string]any
	if err := json.Unmarshal(first, &m); err != nil {
		t.Fatalf("body %s: %v", first, err)
	}
	return m
}

func TestRequestBody(t *testing.T) {
	r := Request{
		BaseURL: "https://h.example", Model: "model-x", System: "Be brief.", MaxTokens: 64, Stream: true,
		Messages: []Message{{Role: "user", Content: "Hi"}, {Role: "assistant", Content: "Hello"}, {Role: "user", Content: "Bye"}},
	}
	turns := []any{
		map[string]any{"role": "user", "content": "Hi"},
		map[string]any{"role": "assistant", "content": "Hello"},
		map[string]any{"role": "user", "content": "Bye"},
	}
	cases := []struct {
		api  string
		want map[string]any
	}{
		// System at the top level, max_tokens required.
		{"anthropic", map[string]any{"model": "model-x", "system": "Be brief.", "messages": turns, "max_tokens": 64.0, "stream": true}},
		// System as the first message, max_tokens, usage asked for.
		{"openai", map[string]any{"model": "model-x", "max_tokens": 64.0, "stream": true,
			"messages":       append([]any{map[string]any{"role": "system", "content": "Be brief."}}, turns...),
			"stream_options": map[string]any{"include_usage": true}}},
		// instructions and input, max_output_tokens.
		{"responses", map[string]any{"model": "model-x", "instructions": "Be brief.", "input": turns, "max_output_tokens": 64.0, "stream": true}},
	}
	for _, tc := range cases {
		p, _ := Lookup(tc.api)
		req, err := p.NewRequest(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		if got := decodeBody(t, req); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s body\n got %v\nwant %v", tc.api, got, tc.want)
		}
	}
}

func TestRequestBodyNonStreaming(t *testing.T) {
	r := Request{BaseURL: "https://h.example", Model: "m", MaxTokens: 8, Messages: []Message{{Role: "user", Content: "Hi"}}}
	for _, p := range protocols {
		req, err := p.NewRequest(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		m := decodeBody(t, req)
		if m["stream"] != false {
			t.Errorf("%s: stream = %v, want false", p.Name(), m["stream"])
		}
		if _, ok := m["stream_options"]; ok {
			t.Errorf("%s: stream_options on a non-streaming call", p.Name())
		}
		if _, ok := m["system"]; ok {
			t.Errorf("%s: empty system sent", p.Name())
		}
	}
}

func TestAnthropicSystemMessages(t *testing.T) {
	req, err := Anthropic().NewRequest(context.Background(), Request{
		BaseURL: "https://h.example", Model: "m", MaxTokens: 8, System: "A.",
		Messages: []Message{{Role: "system", Content: "B."}, {Role: "user", Content: "Hi"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := decodeBody(t, req)
	if m["system"] != "A.\n\nB." || len(m["messages"].([]any)) != 1 {
		t.Errorf("system %q messages %v: want system messages moved to the top level", m["system"], m["messages"])
	}
	if _, err := Anthropic().NewRequest(context.Background(), Request{BaseURL: "https://h.example", Model: "m"}); err == nil {
		t.Error("anthropic request without max_tokens accepted")
	}
}

func TestRequestContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := OpenAIChat().NewRequest(ctx, Request{BaseURL: "https://h.example", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if req.Context() != ctx {
		t.Error("request does not carry the caller's context")
	}
}
