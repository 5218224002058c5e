package wire

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	anthropicsdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	oairesponses "github.com/openai/openai-go/v3/responses"
	"github.com/tollgate-dev/tollgate/probe/sse"
)

// TestOwnStreamsDecodeWithSDKs checks that the hand-written streams in
// testdata/streams have the providers' real shapes: every event decodes into
// the official SDK's type and feeds its accumulator. Framing (CR, BOM) is
// the reader's business; the SDKs are given the events' data.
func TestOwnStreamsDecodeWithSDKs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(ownStreams, "*", "*.sse"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no streams in %s: %v", ownStreams, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(filepath.Dir(file))+"/"+filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var (
				msg   anthropicsdk.Message
				acc   openai.ChatCompletionAccumulator
				kinds = filepath.Base(filepath.Dir(file))
			)
			for _, it := range readItems(t, raw) {
				if it.Kind != sse.KindEvent {
					continue
				}
				data := it.Data
				switch {
				case kinds == "anthropic" && string(it.Type) == "error":
					var e struct {
						Error anthropicsdk.ErrorObjectUnion `json:"error"`
					}
					if err := json.Unmarshal(data, &e); err != nil || e.Error.Type == "" {
						t.Errorf("error event %s: %v", data, err)
					}
				case kinds == "anthropic":
					var ev anthropicsdk.MessageStreamEventUnion
					if err := json.Unmarshal(data, &ev); err != nil {
						t.Fatalf("event %s: %v", data, err)
					}
					if err := msg.Accumulate(ev); err != nil {
						t.Fatalf("accumulate %s: %v", data, err)
					}
				case kinds == "openai-chat" && string(data) == "[DONE]":
				case kinds == "openai-chat" && bytes.HasPrefix(data, []byte(`{"error"`)):
				case kinds == "openai-chat":
					var c openai.ChatCompletionChunk
					if err := json.Unmarshal(data, &c); err != nil {
						t.Fatalf("chunk %s: %v", data, err)
					}
					acc.AddChunk(c)
				case kinds == "responses":
					var ev oairesponses.ResponseStreamEventUnion
					if err := json.Unmarshal(data, &ev); err != nil {
						t.Fatalf("event %s: %v", data, err)
					}
					if ev.Type != string(it.Type) || ev.AsAny() == nil {
						t.Errorf("event %s: the SDK read type %q", it.Type, ev.Type)
					}
				}
			}
			switch kinds {
			case "anthropic":
				if len(msg.Content) == 0 {
					t.Error("the SDK accumulated no content")
				}
			case "openai-chat":
				if len(acc.Choices) == 0 || acc.Choices[0].Message.Content == "" && acc.Choices[0].Message.Refusal == "" {
					t.Errorf("the SDK accumulated no answer: %+v", acc.Choices)
				}
			}
		})
	}
}
