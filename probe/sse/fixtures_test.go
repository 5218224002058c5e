package sse

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// fixtureDir is where the captured provider streams are, outside the repo.
var fixtureDir = filepath.Join("..", "..", "..", "shared", "fixtures")

// Every captured provider stream parses to the end without error, and every
// event's data is JSON (or OpenAI's [DONE]): a reader that split or joined
// lines wrongly would break that.
func TestFixturesParse(t *testing.T) {
	for _, dir := range []string{"anthropic", "openai-chat"} {
		paths, _ := filepath.Glob(filepath.Join(fixtureDir, dir, "*"))
		if len(paths) == 0 {
			t.Skipf("no fixtures in %s", filepath.Join(fixtureDir, dir))
		}
		for _, path := range paths {
			if filepath.Base(path) == "LICENSE" {
				continue
			}
			t.Run(dir+"/"+filepath.Base(path), func(t *testing.T) {
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				items, _, err := readAll(bytes.NewReader(data), Options{})
				if err != io.EOF {
					t.Fatalf("read ended with %v, want io.EOF", err)
				}
				events := 0
				for _, it := range items {
					if it.Kind != KindEvent {
						continue
					}
					events++
					if it.Data != "[DONE]" && !json.Valid([]byte(it.Data)) {
						t.Errorf("event %d (%s): data is not JSON: %q", events, it.Type, it.Data)
					}
				}
				if events == 0 {
					t.Errorf("no events read")
				}
			})
		}
	}
}

// basic_response.txt ends without the blank line after message_stop: WHATWG
// discards that event, and Discarded must hand it over so that the engine
// can tell a truncated stream from a sloppy terminator.
func TestFixtureDiscardedMessageStop(t *testing.T) {
	path := filepath.Join(fixtureDir, "anthropic", "basic_response.txt")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("fixture absent: %v", err)
	}
	items, disc, err := readAll(bytes.NewReader(data), Options{})
	if err != io.EOF {
		t.Fatalf("read ended with %v, want io.EOF", err)
	}
	for _, it := range items {
		if it.Type == "message_stop" {
			t.Errorf("message_stop was dispatched, but the stream has no blank line after it")
		}
	}
	if disc == nil || disc.Type != "message_stop" || disc.Data != `{"type":"message_stop"}` {
		t.Fatalf("Discarded() = %v, want the message_stop event", disc)
	}
}
