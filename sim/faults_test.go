package sim

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"net/http/httputil"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// rawResult is what a raw HTTP/1.1 client saw on one connection.
type rawResult struct {
	head      string        // status line and headers, empty when none arrived
	body      []byte        // de-chunked body bytes
	lastByte  time.Duration // when the last byte arrived, from the request
	ended     time.Duration // when reading stopped, from the request
	endErr    error         // io.EOF, a reset, or os.ErrDeadlineExceeded (still open)
	completed bool          // the chunked body ended with its last chunk
	raw       []byte        // every byte read, head included
	reads     []rawRead     // when each read returned and where it ended in raw
}

// rawRead is one read that returned bytes.
type rawRead struct {
	at  time.Duration
	end int
}

// firstAt returns when the first occurrence of marker arrived, from the
// request; ok is false when it never did.
func (r rawResult) firstAt(marker string) (at time.Duration, ok bool) {
	i := bytes.Index(r.raw, []byte(marker))
	if i < 0 {
		return 0, false
	}
	for _, rd := range r.reads {
		if rd.end >= i+len(marker) {
			return rd.at, true
		}
	}
	return 0, false
}

// rawCall sends one request on a fresh connection and reads what arrives
// for at most wait. It reads no faster than the bytes come, so lastByte is
// the arrival time of the last byte.
func rawCall(t *testing.T, ts *httptest.Server, path, fault, body string, wait time.Duration) rawResult {
	t.Helper()
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", path, len(body))
	if fault != "" {
		req += FaultHeader + ": " + fault + "\r\n"
	}
	start := time.Now()
	if _, err := io.WriteString(conn, req+"\r\n"+body); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(start.Add(wait))
	var raw []byte
	var res rawResult
	buf := make([]byte, 32<<10)
	for {
		n, err := conn.Read(buf)
		if n > 0 {
			raw = append(raw, buf[:n]...)
			res.lastByte = time.Since(start)
			res.reads = append(res.reads, rawRead{at: res.lastByte, end: len(raw)})
		}
		if err != nil {
			res.endErr = err
			break
		}
		if rawComplete(raw) {
			res.completed = true
			break
		}
	}
	res.ended = time.Since(start)
	res.raw = raw
	if i := bytes.Index(raw, []byte("\r\n\r\n")); i >= 0 {
		res.head = string(raw[:i+4])
		rest := raw[i+4:]
		if strings.Contains(strings.ToLower(res.head), "transfer-encoding: chunked") {
			res.body, _ = io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(rest)))
		} else {
			res.body = rest
		}
	}
	return res
}

// rawComplete tells a response that has all its body: the last chunk of a
// chunked body, or Content-Length bytes.
func rawComplete(raw []byte) bool {
	i := bytes.Index(raw, []byte("\r\n\r\n"))
	if i < 0 {
		return false
	}
	if bytes.HasSuffix(raw, []byte("\r\n0\r\n\r\n")) {
		return true
	}
	head := string(raw[:i])
	for _, line := range strings.Split(head, "\r\n") {
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			n, err := strconv.Atoi(v)
			return err == nil && len(raw)-(i+4) >= n
		}
	}
	return false
}

const (
	anthropicStream = `{"model":"claude-sim","max_tokens":1000,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	chatStream      = `{"model":"gpt-sim","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`
	responsesStream = `{"model":"gpt-sim","stream":true,"input":"hi"}`
	anthropicBatch  = `{"model":"claude-sim","max_tokens":1000,"messages":[{"role":"user","content":"hi"}]}`
)

func timedOut(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// The fast profile answers in tens of milliseconds; a stall is seen as
// nothing arriving for the 300ms that follow.
const stallWindow = 400 * time.Millisecond

func TestFaultsAnthropicStream(t *testing.T) {
	_, ts := newTestServer(t, Config{Profile: Fast(), StallMax: 10 * time.Second})
	for _, tc := range []struct {
		fault string
		check func(t *testing.T, r rawResult)
	}{
		{"", func(t *testing.T, r rawResult) {
			// A healthy stream: head, content, terminal event, last chunk.
			mustHead(t, r, "200", "text/event-stream")
			mustEvents(t, r, "message_start", "ping", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop")
			if !r.completed {
				t.Errorf("body did not end: %v", r.endErr)
			}
		}},
		{"refuse", func(t *testing.T, r rawResult) {
			if r.head != "" || len(r.body) != 0 {
				t.Errorf("got bytes %q", r.head)
			}
			if !errors.Is(r.endErr, syscall.ECONNRESET) {
				t.Errorf("read ended with %v, want a connection reset", r.endErr)
			}
		}},
		{"head-stall", stalledBeforeHead},
		{"first-byte-stall", func(t *testing.T, r rawResult) {
			mustHead(t, r, "200", "text/event-stream")
			if len(r.body) != 0 || !timedOut(r.endErr) {
				t.Errorf("body %q err %v: want no body byte and an open connection", r.body, r.endErr)
			}
		}},
		{"no-content", func(t *testing.T, r rawResult) {
			mustHead(t, r, "200", "text/event-stream")
			mustEvents(t, r, "message_start", "ping")
			mustNot(t, r, "content_block_delta")
			// Pings every 10ms (fast's interval) for the whole window.
			if n := bytes.Count(r.body, []byte("event: ping")); n < 10 {
				t.Errorf("%d pings in %v, want one every 10ms", n, stallWindow)
			}
			if !timedOut(r.endErr) || r.ended-r.lastByte > 100*time.Millisecond {
				t.Errorf("pings stopped %v before the end (%v)", r.ended-r.lastByte, r.endErr)
			}
		}},
		{"ping-stall", func(t *testing.T, r rawResult) {
			mustEvents(t, r, "content_block_delta")
			mustNot(t, r, "message_stop")
			after := r.body[bytes.LastIndex(r.body, []byte("content_block_delta")):]
			if n := bytes.Count(after, []byte("event: ping")); n < 10 {
				t.Errorf("%d pings after the last delta, want pings going on", n)
			}
			if !timedOut(r.endErr) {
				t.Errorf("connection ended: %v", r.endErr)
			}
		}},
		{"silent-stall", func(t *testing.T, r rawResult) {
			mustEvents(t, r, "content_block_delta")
			mustNot(t, r, "message_stop")
			if !timedOut(r.endErr) || r.ended-r.lastByte < stallWindow/2 {
				t.Errorf("last byte %v before the end (%v), want silence", r.ended-r.lastByte, r.endErr)
			}
		}},
		{"truncate", func(t *testing.T, r rawResult) {
			mustEvents(t, r, "content_block_delta")
			mustNot(t, r, "message_stop")
			mustNot(t, r, "message_delta")
			if !r.completed {
				t.Errorf("body did not end cleanly: %v", r.endErr)
			}
		}},
		{"error-event", func(t *testing.T, r rawResult) {
			mustEvents(t, r, "content_block_delta", "error")
			if !bytes.Contains(r.body, []byte(`"type":"overloaded_error"`)) || !r.completed {
				t.Errorf("body %q", r.body)
			}
			mustNot(t, r, "message_stop")
		}},
		{"malformed", func(t *testing.T, r rawResult) {
			last := lastEventData(r.body)
			if !strings.HasPrefix(last, `{"type":"content_block_delta"`) || strings.HasSuffix(last, "}") || !r.completed {
				t.Errorf("last event data %q, want a cut content delta and the end", last)
			}
		}},
		{"http-429", func(t *testing.T, r rawResult) {
			mustHead(t, r, "429", "application/json")
			if !strings.Contains(r.head, "Retry-After: 1\r\n") || !strings.Contains(r.head, "Request-Id: req_") {
				t.Errorf("head %q", r.head)
			}
			if !bytes.Contains(r.body, []byte(`{"type":"error","error":{"type":"rate_limit_error"`)) {
				t.Errorf("body %q", r.body)
			}
		}},
		{"http-529", func(t *testing.T, r rawResult) {
			mustHead(t, r, "529", "application/json")
			if !bytes.Contains(r.body, []byte(`"type":"overloaded_error"`)) {
				t.Errorf("body %q", r.body)
			}
		}},
		{"http-500", func(t *testing.T, r rawResult) {
			mustHead(t, r, "500", "application/json")
			if !bytes.Contains(r.body, []byte(`"type":"api_error"`)) {
				t.Errorf("body %q", r.body)
			}
		}},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			t.Parallel()
			tc.check(t, rawCall(t, ts, "/v1/messages", tc.fault, anthropicStream, stallWindow))
		})
	}
}

func TestFaultsOpenAIStream(t *testing.T) {
	_, ts := newTestServer(t, Config{Profile: Fast(), StallMax: 10 * time.Second})
	t.Run("chat", func(t *testing.T) {
		r := rawCall(t, ts, "/v1/chat/completions", "", chatStream, stallWindow)
		mustHead(t, r, "200", "text/event-stream")
		if !strings.Contains(r.head, "X-Request-Id: req_") || !strings.Contains(r.head, "X-Ratelimit-Remaining-Requests:") {
			t.Errorf("head %q", r.head)
		}
		for _, want := range []string{`"delta":{"role":"assistant","content":"","refusal":null}`, `"finish_reason":"stop"`, `"choices":[],"usage":{`, "data: [DONE]\n\n"} {
			if !bytes.Contains(r.body, []byte(want)) {
				t.Errorf("no %s in %q", want, r.body)
			}
		}
	})
	t.Run("chat no-content", func(t *testing.T) {
		r := rawCall(t, ts, "/v1/chat/completions", "no-content", chatStream, stallWindow)
		if n := bytes.Count(r.body, []byte(": keep-alive\n\n")); n < 10 || bytes.Contains(r.body, []byte(`"content":"t`)) {
			t.Errorf("%d keep-alives, body %q", n, r.body)
		}
	})
	t.Run("chat error-event", func(t *testing.T) {
		r := rawCall(t, ts, "/v1/chat/completions", "error-event", chatStream, stallWindow)
		if last := lastEventData(r.body); !strings.HasPrefix(last, `{"error":{"message":`) || !strings.Contains(last, `"type":"server_error"`) {
			t.Errorf("last event %q", last)
		}
	})
	t.Run("responses", func(t *testing.T) {
		r := rawCall(t, ts, "/v1/responses", "", responsesStream, stallWindow)
		mustEvents(t, r, "response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
			"response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed")
	})
	t.Run("responses error-event", func(t *testing.T) {
		r := rawCall(t, ts, "/v1/responses", "error-event", responsesStream, stallWindow)
		mustEvents(t, r, "response.output_text.delta", "error")
		mustNot(t, r, "response.completed")
	})
	t.Run("responses 529", func(t *testing.T) {
		r := rawCall(t, ts, "/v1/responses", "http-529", responsesStream, stallWindow)
		mustHead(t, r, "529", "application/json")
		if !bytes.Contains(r.body, []byte(`"code":"overloaded"`)) {
			t.Errorf("body %q", r.body)
		}
	})
}

func TestFaultsNonStreaming(t *testing.T) {
	_, ts := newTestServer(t, Config{Profile: Fast(), StallMax: 10 * time.Second})
	for _, tc := range []struct {
		fault string
		check func(t *testing.T, r rawResult)
	}{
		{"head-stall", stalledBeforeHead},
		// A non-streaming body is written at the end: no-content stalls the head.
		{"no-content", stalledBeforeHead},
		{"first-byte-stall", func(t *testing.T, r rawResult) {
			mustHead(t, r, "200", "application/json")
			if len(r.body) != 0 || !timedOut(r.endErr) {
				t.Errorf("body %q err %v", r.body, r.endErr)
			}
		}},
		{"truncate", func(t *testing.T, r rawResult) {
			mustHead(t, r, "200", "application/json")
			if len(r.body) == 0 || r.endErr != io.EOF || bytes.HasSuffix(r.body, []byte("}")) {
				t.Errorf("body %q err %v: want half a body, then the connection dropped", r.body, r.endErr)
			}
		}},
		{"malformed", func(t *testing.T, r rawResult) {
			mustHead(t, r, "200", "application/json")
			if len(r.body) == 0 || bytes.HasSuffix(r.body, []byte("}")) {
				t.Errorf("body %q, want a cut body", r.body)
			}
		}},
		{"error-event", func(t *testing.T, r rawResult) {
			mustHead(t, r, "529", "application/json")
		}},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			t.Parallel()
			tc.check(t, rawCall(t, ts, "/v1/messages", tc.fault, anthropicBatch, stallWindow))
		})
	}
}

// TestStallEnds checks the two ways a stall ends: the StallMax cap (the
// connection is dropped) and the client going away (the handler returns,
// so Close does not wait).
func TestStallEnds(t *testing.T) {
	_, ts := newTestServer(t, Config{Profile: Fast(), StallMax: 50 * time.Millisecond})
	r := rawCall(t, ts, "/v1/messages", "silent-stall", anthropicStream, 2*time.Second)
	if timedOut(r.endErr) || r.ended < 50*time.Millisecond || r.ended > time.Second {
		t.Errorf("silent-stall ended after %v with %v, want dropped at StallMax 50ms", r.ended, r.endErr)
	}
	if r.completed {
		t.Errorf("a capped stall ended the body cleanly; it must drop the connection")
	}

	s2, ts2 := newTestServer(t, Config{Profile: Fast(), StallMax: time.Minute})
	done := make(chan struct{})
	go func() {
		defer close(done)
		rawCall(t, ts2, "/v1/messages", "head-stall", anthropicStream, 50*time.Millisecond)
	}()
	<-done
	closed := make(chan struct{})
	go func() { s2.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
		t.Fatal("Close still waiting 2s after the client left a head-stall")
	}
}

func TestFaultRates(t *testing.T) {
	s, ts := newTestServer(t, Config{Profile: zeroDelay(), Seed: 3, Faults: []FaultRate{{FaultHTTP500, 0.3}, {FaultHTTP429, 0.2}}})
	client := ts.Client()
	var statuses []int
	for range 300 {
		resp, err := client.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m"}`))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		statuses = append(statuses, resp.StatusCode)
	}
	st := s.Stats()
	if n := st.ByFault[FaultHTTP500]; n < 60 || n > 120 {
		t.Errorf("%d of 300 got http-500 at 30%%", n)
	}
	if n := st.ByFault[FaultHTTP429]; n < 35 || n > 85 {
		t.Errorf("%d of 300 got http-429 at 20%%", n)
	}
	// The same seed injects the same faults into the same request numbers.
	_, ts2 := newTestServer(t, Config{Profile: zeroDelay(), Seed: 3, Faults: s.cfg.Faults})
	for i := range 300 {
		resp, err := ts2.Client().Post(ts2.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m"}`))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != statuses[i] {
			t.Fatalf("request %d: status %d, first run %d", i, resp.StatusCode, statuses[i])
		}
	}
}

// TestReplay serves every captured fixture stream and checks that the
// client receives the file byte for byte, whatever the endpoint.
func TestReplay(t *testing.T) {
	dir := fixture(t)
	var files []string
	for _, sub := range []string{"anthropic", "openai-chat"} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".txt") || strings.HasSuffix(e.Name(), ".sse") {
				files = append(files, filepath.Join(dir, sub, e.Name()))
			}
		}
	}
	if len(files) < 5 {
		t.Fatalf("only %d fixture streams in %s", len(files), dir)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := LoadReplay(path)
			if err != nil {
				t.Fatal(err)
			}
			_, ts := newTestServer(t, Config{Profile: Fast(), Replay: data})
			r := rawCall(t, ts, "/v1/messages", "", anthropicStream, 2*time.Second)
			if !bytes.Equal(r.body, data) || !r.completed {
				t.Errorf("replayed body differs from the file:\n%q\nwant\n%q", r.body, data)
			}
		})
	}

	data, err := LoadReplay(filepath.Join(dir, "anthropic", "basic_response.txt"))
	if err != nil {
		t.Fatal(err)
	}
	_, ts := newTestServer(t, Config{Profile: Fast(), Replay: data})
	r := rawCall(t, ts, "/v1/chat/completions", "truncate", chatStream, 2*time.Second)
	if n := bytes.Count(r.body, []byte("text_delta")); n != 1 || bytes.Contains(r.body, []byte("message_stop")) {
		t.Errorf("truncated replay: %d deltas, body %q", n, r.body)
	}
	// A capture without any content delta: a fault still withholds the end.
	data, err = LoadReplay(filepath.Join(dir, "anthropic", "refusal_response.txt"))
	if err != nil {
		t.Fatal(err)
	}
	_, ts = newTestServer(t, Config{Profile: Fast(), Replay: data})
	r = rawCall(t, ts, "/v1/messages", "truncate", anthropicStream, 2*time.Second)
	if !r.completed || len(r.body) == 0 || bytes.Contains(r.body, []byte("message_stop")) {
		t.Errorf("truncated content-less replay: %q", r.body)
	}
	if _, err := LoadReplay(filepath.Join(dir, "missing.sse")); err == nil || !strings.Contains(err.Error(), "missing.sse") {
		t.Errorf("missing replay file: %v", err)
	}
}

// fixture returns a shared fixture's path, skipping when absent.
func fixture(t *testing.T, parts ...string) string {
	t.Helper()
	path := filepath.Join(append([]string{"..", "..", "shared", "fixtures"}, parts...)...)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("fixture %s not available: %v", path, err)
	}
	return path
}

// stalledBeforeHead checks that nothing arrived and the connection is open.
func stalledBeforeHead(t *testing.T, r rawResult) {
	t.Helper()
	if r.head != "" || !timedOut(r.endErr) {
		t.Errorf("head %q err %v: want nothing and an open connection", r.head, r.endErr)
	}
}

func mustHead(t *testing.T, r rawResult, status, contentType string) {
	t.Helper()
	if !strings.HasPrefix(r.head, "HTTP/1.1 "+status+" ") {
		t.Fatalf("head %q, want status %s", r.head, status)
	}
	if !strings.Contains(r.head, "Content-Type: "+contentType) {
		t.Errorf("head %q, want content type %s", r.head, contentType)
	}
}

// eventNames lists the event names of an SSE body in order.
func eventNames(body []byte) []string {
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			names = append(names, name)
		}
	}
	return names
}

// mustEvents checks that names appear in this order (others may come between).
func mustEvents(t *testing.T, r rawResult, names ...string) {
	t.Helper()
	got := eventNames(r.body)
	i := 0
	for _, g := range got {
		if i < len(names) && g == names[i] {
			i++
		}
	}
	if i < len(names) {
		t.Errorf("events %v, want %v in order", got, names)
	}
}

func mustNot(t *testing.T, r rawResult, name string) {
	t.Helper()
	for _, g := range eventNames(r.body) {
		if g == name {
			t.Errorf("event %s sent: %q", name, r.body)
		}
	}
}

// lastEventData is the data of the body's last event.
func lastEventData(body []byte) string {
	blocks := strings.Split(strings.TrimRight(string(body), "\n"), "\n\n")
	for _, line := range strings.Split(blocks[len(blocks)-1], "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			return d
		}
	}
	return ""
}
