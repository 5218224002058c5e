package cmd

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSimBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sim", "--profile", "nope"}, "--profile"},
		{[]string{"sim", "--fault", "http-429"}, "--fault"},
		{[]string{"sim", "--fault", "bogus@0.1"}, "--fault"},
		{[]string{"sim", "--profile-file", "/nonexistent/p.yaml"}, "--profile-file"},
		{[]string{"sim", "--replay", "/nonexistent/r.sse"}, "--replay"},
		{[]string{"sim", "--listen", "no-port"}, "--listen"},
		// Two rates over 100% cannot be honoured.
		{[]string{"sim", "--fault", "http-429@0.7", "--fault", "http-500@0.7"}, "--fault: the rates add up to 1.4"},
	} {
		code, _, errOut := runTollgate(t, tc.args...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %s", tc.args, code, errOut, tc.want)
		}
	}
}

// simSyncBuffer is a bytes.Buffer safe for the command's writes and the
// test's reads.
type simSyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *simSyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *simSyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSimServesAndStops runs `tollgate sim` on a free port, makes a call
// at the printed base URL, and stops it the way SIGINT does (the context).
func TestSimServesAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errOut := &simSyncBuffer{}, &simSyncBuffer{}
	streams := IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, NewCmdRoot(streams), []string{"sim", "--listen", "127.0.0.1:0", "--profile", "fast", "--log"}, errOut)
	}()
	re := regexp.MustCompile(`anthropic\s+(http://127\.0\.0\.1:\d+)\n`)
	var base string
	for deadline := time.Now().Add(5 * time.Second); base == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		t.Fatalf("no base URL printed: %q", out.String())
	}
	if !strings.Contains(out.String(), base+"/v1\n") {
		t.Errorf("no OpenAI base URL in %q", out.String())
	}
	client := &http.Client{}
	defer client.CloseIdleConnections()
	resp, err := client.Post(base+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","max_tokens":3}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"output_tokens":3`) {
		t.Errorf("status %d body %s", resp.StatusCode, body)
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("exit %d after the signal, want 0; stderr %q", code, errOut.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("sim did not stop within 5s of the signal")
	}
	if !strings.Contains(errOut.String(), `/v1/messages stream=false model="m" max_tokens=3 fault=none status=200 tokens=3`) {
		t.Errorf("log line missing: %q", errOut.String())
	}
}
