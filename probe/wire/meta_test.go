package wire

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestReadMeta(t *testing.T) {
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	cases := []struct {
		name   string
		header map[string]string
		id     string
		wait   time.Duration
	}{
		// Nothing to read.
		{"empty", nil, "", 0},
		// Anthropic's request id.
		{"request-id", map[string]string{"request-id": "req_011CSHoEeqs5C35K2UUqR7Fy"}, "req_011CSHoEeqs5C35K2UUqR7Fy", 0},
		// OpenAI's request id.
		{"x-request-id", map[string]string{"x-request-id": "req_a1b2c3"}, "req_a1b2c3", 0},
		// Both: Anthropic's wins (a gateway may add its own x-request-id).
		{"both ids", map[string]string{"request-id": "req_1", "x-request-id": "gw-2"}, "req_1", 0},
		// retry-after in whole seconds.
		{"retry-after seconds", map[string]string{"retry-after": "20"}, "", 20 * time.Second},
		// retry-after as a fraction, which some gateways send.
		{"retry-after fraction", map[string]string{"retry-after": "1.5"}, "", 1500 * time.Millisecond},
		// retry-after as an HTTP date, relative to now.
		{"retry-after date", map[string]string{"retry-after": "Tue, 01 Dec 2026 03:00:30 GMT"}, "", 30 * time.Second},
		// A date already past asks for no wait.
		{"retry-after past date", map[string]string{"retry-after": "Tue, 01 Dec 2026 02:59:00 GMT"}, "", 0},
		// Garbage and negatives are ignored.
		{"retry-after garbage", map[string]string{"retry-after": "soon", "retry-after-ms": "-5"}, "", 0},
		// OpenAI's retry-after-ms.
		{"retry-after-ms", map[string]string{"retry-after-ms": "250"}, "", 250 * time.Millisecond},
		// retry-after-ms, the finer of the two, wins over retry-after.
		{"retry-after-ms wins", map[string]string{"retry-after": "1", "retry-after-ms": "2500"}, "", 2500 * time.Millisecond},
		// retry-after is the provider's own answer and wins over the resets.
		{"retry-after over resets", map[string]string{
			"anthropic-ratelimit-requests-remaining": "0",
			"anthropic-ratelimit-requests-reset":     "2026-12-01T03:00:59Z",
			"retry-after":                            "7",
		}, "", 7 * time.Second},
		// Without retry-after, the reset of each EXHAUSTED limit counts, the
		// latest one; a limit with plenty left says nothing about a retry.
		{"anthropic resets", map[string]string{
			"anthropic-ratelimit-requests-remaining":      "3999",
			"anthropic-ratelimit-requests-reset":          "2026-12-01T03:00:59Z",
			"anthropic-ratelimit-tokens-remaining":        "0",
			"anthropic-ratelimit-tokens-reset":            "2026-12-01T03:00:12Z",
			"anthropic-ratelimit-input-tokens-remaining":  "0",
			"anthropic-ratelimit-input-tokens-reset":      "2026-12-01T03:00:08Z",
			"anthropic-ratelimit-output-tokens-remaining": "400000",
			"anthropic-ratelimit-output-tokens-reset":     "2026-12-01T03:00:50Z",
		}, "", 12 * time.Second},
		// Anthropic sends resets on every response: none exhausted, no wait.
		{"anthropic resets, none exhausted", map[string]string{
			"anthropic-ratelimit-requests-remaining": "12",
			"anthropic-ratelimit-requests-reset":     "2026-12-01T03:00:59Z",
		}, "", 0},
		// OpenAI's reset durations in Go syntax, for exhausted limits.
		{"openai resets", map[string]string{"x-ratelimit-reset-requests": "20ms", "x-ratelimit-remaining-requests": "0",
			"x-ratelimit-reset-tokens": "6m0s", "x-ratelimit-remaining-tokens": "0"}, "", 6 * time.Minute},
		{"openai reset, not exhausted", map[string]string{"x-ratelimit-reset-tokens": "6m0s", "x-ratelimit-remaining-tokens": "15"}, "", 0},
		{"openai reset seconds", map[string]string{"x-ratelimit-reset-requests": "1s", "x-ratelimit-remaining-requests": "0"}, "", time.Second},
		{"openai reset fraction", map[string]string{"x-ratelimit-reset-tokens": "7.66s", "x-ratelimit-remaining-tokens": "0"}, "", 7660 * time.Millisecond},
	}
	for _, tc := range cases {
		h := http.Header{}
		for k, v := range tc.header {
			h.Set(k, v)
		}
		for _, p := range protocols {
			m := p.ReadMeta(h, now)
			if m.RequestID != tc.id || m.RetryAfter != tc.wait {
				t.Errorf("%s (%s): got id %q wait %v, want %q %v", tc.name, p.Name(), m.RequestID, m.RetryAfter, tc.id, tc.wait)
			}
		}
	}
}

func TestParseError(t *testing.T) {
	long := strings.Repeat("x", 300)
	cases := []struct {
		name, body string
		want       ProviderError
	}{
		// Anthropic's shape.
		{"anthropic 429", `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"},"request_id":"req_1"}`,
			ProviderError{Type: "rate_limit_error", Message: "Number of request tokens has exceeded your per-minute rate limit"}},
		{"anthropic 529", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			ProviderError{Type: "overloaded_error", Message: "Overloaded"}},
		// OpenAI's shape: the type wins over the code.
		{"openai 429", `{"error":{"message":"Rate limit reached for gpt-4o","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			ProviderError{Type: "requests", Message: "Rate limit reached for gpt-4o"}},
		// OpenAI with a null type: the code stands in.
		{"openai code only", `{"error":{"message":"Incorrect API key provided: sk-abc***xyz.","type":null,"param":null,"code":"invalid_api_key"}}`,
			ProviderError{Type: "invalid_api_key", Message: "Incorrect API key provided: sk-abc***xyz."}},
		// vLLM: a numeric code.
		{"vllm", `{"object":"error","message":"max_tokens is too large","type":"BadRequestError","param":null,"code":400}`,
			ProviderError{Type: "", Message: "max_tokens is too large"}},
		// A gateway's bare string error.
		{"string error", `{"error":"upstream connect error"}`, ProviderError{Message: "upstream connect error"}},
		// HTML from a proxy: no type, the text made printable.
		{"html", "<html>\r\n<h1>502 Bad Gateway</h1>\r\n</html>", ProviderError{Message: "<html> <h1>502 Bad Gateway</h1> </html>"}},
		// A long unknown body is cut to 200 bytes.
		{"long", long, ProviderError{Message: long[:200]}},
		// An empty body.
		{"empty", ``, ProviderError{}},
	}
	for _, tc := range cases {
		for _, p := range protocols {
			if got := p.ParseError([]byte(tc.body)); got != tc.want {
				t.Errorf("%s (%s): got %+v, want %+v", tc.name, p.Name(), got, tc.want)
			}
		}
	}
}

func TestSanitize(t *testing.T) {
	cases := []struct{ in, want string }{
		{"a\x00b", "a b"},
		{"  lead and trail  ", "lead and trail"},
		{"bad \xff utf8", "bad utf8"},
		{"é" + strings.Repeat("é", 150), strings.Repeat("é", 100)},      // 200 bytes: cut on a character boundary
		{"x" + strings.Repeat("é", 150), "x" + strings.Repeat("é", 99)}, // the half character at byte 200 is dropped
	}
	for _, tc := range cases {
		if got := sanitize([]byte(tc.in), 200); got != tc.want {
			t.Errorf("sanitize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
