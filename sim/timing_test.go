package sim

import (
	"bytes"
	"testing"
	"time"
)

// slowProfile has constant, tens-of-milliseconds timings, so that the
// tests can assert when bytes arrive: never before their time, and not
// much later on a noisy 2-core machine.
func slowProfile() *Profile {
	return &Profile{
		Name:         "slow-constant",
		Head:         constant(float64(20 * time.Millisecond)),
		TTFT:         constant(float64(150 * time.Millisecond)),
		Gap:          constant(float64(20 * time.Millisecond)),
		OutputTokens: constant(5),
		PingInterval: Duration(40 * time.Millisecond),
	}
}

// lateMargin is how late a byte may come on a loaded CI machine.
const lateMargin = 150 * time.Millisecond

func inWindow(t *testing.T, what string, got, want time.Duration) {
	t.Helper()
	if got < want || got > want+lateMargin {
		t.Errorf("%s at %v, want at %v (up to %v late)", what, got, want, lateMargin)
	}
}

func TestStreamTiming(t *testing.T) {
	_, ts := newTestServer(t, Config{Profile: slowProfile()})
	r := rawCall(t, ts, "/v1/messages", "", anthropicStream, 2*time.Second)
	if !r.completed {
		t.Fatalf("stream did not complete: %v", r.endErr)
	}
	head, _ := r.firstAt("\r\n\r\n")
	inWindow(t, "head", head, 20*time.Millisecond)
	first, _ := r.firstAt("text_delta")
	inWindow(t, "first content delta", first, 150*time.Millisecond)
	stop, _ := r.firstAt("message_stop")
	inWindow(t, "message_stop", stop, 150*time.Millisecond+4*20*time.Millisecond)

	// Pings while no content flows: one with message_start, then every
	// 40ms of silence until the first delta at 150ms (at 60, 100 and 140ms).
	body := r.raw[:bytes.Index(r.raw, []byte("text_delta"))]
	if n := bytes.Count(body, []byte("event: ping")); n < 3 || n > 4 {
		t.Errorf("%d pings before the first delta, want 1 + 2 or 3 periodic ones", n)
	}
	if n := bytes.Count(r.raw, []byte("event: ping")); n != bytes.Count(body, []byte("event: ping")) {
		t.Errorf("pings while content flows every 20ms: %d in all, %d before content", n, bytes.Count(body, []byte("event: ping")))
	}
}

// TestNonStreamingTakesTheStreamsTime: a non-streaming answer comes when
// the stream's last delta would have.
func TestNonStreamingTakesTheStreamsTime(t *testing.T) {
	_, ts := newTestServer(t, Config{Profile: slowProfile()})
	r := rawCall(t, ts, "/v1/messages", "", anthropicBatch, 2*time.Second)
	if !r.completed {
		t.Fatalf("body did not complete: %v", r.endErr)
	}
	head, _ := r.firstAt("\r\n\r\n")
	inWindow(t, "non-streaming head", head, 150*time.Millisecond+4*20*time.Millisecond)
}

// TestKeepAlive: an OpenAI stream sends ": keep-alive" comments while no
// content flows when the profile asks for them, and none otherwise.
func TestKeepAlive(t *testing.T) {
	p := slowProfile()
	p.KeepAlive = Duration(40 * time.Millisecond)
	_, ts := newTestServer(t, Config{Profile: p})
	r := rawCall(t, ts, "/v1/chat/completions", "", chatStream, 2*time.Second)
	first := bytes.Index(r.raw, []byte(`"content":"t`))
	if first < 0 || !r.completed {
		t.Fatalf("no content or incomplete: %q", r.body)
	}
	if n := bytes.Count(r.raw[:first], []byte(": keep-alive\n\n")); n < 2 || n > 3 {
		t.Errorf("%d keep-alives during the 130ms before content, want one every 40ms", n)
	}

	_, ts = newTestServer(t, Config{Profile: slowProfile()})
	r = rawCall(t, ts, "/v1/chat/completions", "", chatStream, 2*time.Second)
	if bytes.Contains(r.body, []byte(": keep-alive")) {
		t.Errorf("keep-alive sent by a profile without keep_alive")
	}
}
