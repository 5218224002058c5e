package probe

import (
	"strings"
	"testing"
)

func TestParsePrompts(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		ids     []string
		wantErr string // a substring of the error; empty: no error
	}{
		// Both shapes, ids given or taken from the line number; comments skipped.
		{name: "shapes", in: "{\"prompt\":\"hi\"}\n# note\n{\"id\":\"a\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}\n{\"id\":7,\"prompt\":\"n\"}\n", ids: []string{"1", "a", "7"}},
		// A bad line is named by file and line.
		{name: "bad json", in: "{\"prompt\":\"hi\"}\n{\"prompt\": }\n", wantErr: `"p.jsonl" line 2`},
		// Unknown fields are refused, so a typo is not silently ignored.
		{name: "unknown field", in: "{\"promt\":\"hi\"}\n", wantErr: `line 1: json: unknown field "promt"`},
		{name: "neither", in: "{\"id\":\"x\"}\n", wantErr: `no "prompt" and no "messages"`},
		{name: "duplicate id", in: "{\"id\":\"x\",\"prompt\":\"a\"}\n{\"id\":\"x\",\"prompt\":\"b\"}\n", wantErr: `line 2: id "x" is already used on line 1`},
		{name: "empty", in: "\n\n", wantErr: "no prompts"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePrompts(strings.NewReader(tc.in), "p.jsonl")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, p := range got {
				ids = append(ids, p.ID)
				if len(p.Messages) == 0 {
					t.Errorf("prompt %s has no messages", p.ID)
				}
			}
			if strings.Join(ids, ",") != strings.Join(tc.ids, ",") {
				t.Errorf("ids %v, want %v", ids, tc.ids)
			}
		})
	}
}
