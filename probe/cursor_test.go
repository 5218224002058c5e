package probe

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/probe/shard"
	"github.com/tollgate-dev/tollgate/probe/wire"
)

// TestCursorRoundTrip: a cursor written is read back the same, the write
// leaves no temporary file, and a second write replaces the first.
func TestCursorRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cursor.json")
	prompts := itemPrompts(4)
	sum := Summary{Started: time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC), Items: 4,
		Unprocessed: []string{"i3", "i4"}, DeadlineExceeded: true}
	c := NewCursor("items.jsonl", prompts, sum, shard.Shard{Index: 1, Count: 2})
	if err := WriteCursor(path, c); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCursor(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Schema != CursorSchema || got.Prompts != c.Prompts || !got.Started.Equal(sum.Started) ||
		got.Reason != CursorJobDeadline || got.Shard != "1/2" || got.Items != 4 || !slices.Equal(got.Unprocessed, sum.Unprocessed) {
		t.Errorf("read back %+v, want %+v", got, c)
	}
	if got.Prompts.Count != 4 || got.Prompts.Path != "items.jsonl" || len(got.Prompts.SHA256) != 64 {
		t.Errorf("prompts %+v, want path, count 4 and a sha256", got.Prompts)
	}

	c.Unprocessed = []string{"i4"}
	if err := WriteCursor(path, c); err != nil {
		t.Fatal(err)
	}
	if got, err = ReadCursor(path); err != nil || !slices.Equal(got.Unprocessed, []string{"i4"}) {
		t.Errorf("after a rewrite: %v %v, want [i4]", got.Unprocessed, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory holds %d files, want only the cursor (no temporary left)", len(entries))
	}
	if err := WriteCursor(filepath.Join(dir, "missing", "cursor.json"), c); err == nil || !strings.Contains(err.Error(), "cursor.json") {
		t.Errorf("write into a missing directory: %v, want an error naming the file", err)
	}
}

// TestReadCursorRefuses files that are not cursors, naming the file.
func TestReadCursorRefuses(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, content, want string
	}{
		// Not JSON at all.
		{"garbage", "hello", "not a cursor file"},
		// Another tollgate file.
		{"results", `{"schema":"tollgate.results/v1"}`, "schema"},
		// A cursor without the hash cannot be matched to prompts.
		{"no hash", `{"schema":"tollgate.cursor/v1","unprocessed":["a"]}`, "no prompts hash"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".json")
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadCursor(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %v, want one naming %q and saying %q", err, path, tc.want)
			}
		})
	}
	if _, err := ReadCursor(filepath.Join(dir, "absent.json")); err == nil {
		t.Error("reading an absent cursor succeeded")
	}
}

// TestFilterPrompts: a resume takes exactly the named items, in order, and
// refuses prompts that changed, IDs that are not there, and an empty cursor.
func TestFilterPrompts(t *testing.T) {
	prompts := itemPrompts(5)
	c := NewCursor("items.jsonl", prompts, Summary{Items: 5, Unprocessed: []string{"i2", "i5"}}, shard.Shard{})
	got, err := FilterPrompts(prompts, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "i2" || got[1].ID != "i5" || got[1].Messages[0].Content != "item i5" {
		t.Errorf("filtered %+v, want items i2 and i5", got)
	}

	// Items named by position keep their names in the shorter list.
	unnamed := []Prompt{{Messages: []wire.Message{{Role: "user", Content: "a"}}}, {Messages: []wire.Message{{Role: "user", Content: "b"}}}}
	cu := NewCursor("", unnamed, Summary{Items: 2, Unprocessed: []string{"2"}}, shard.Shard{})
	if got, err := FilterPrompts(unnamed, cu); err != nil || len(got) != 1 || got[0].ID != "2" || got[0].Messages[0].Content != "b" {
		t.Errorf("unnamed: %+v %v, want the second prompt, named 2", got, err)
	}

	edited := itemPrompts(5)
	edited[3].Messages[0].Content = "changed"
	bogus := c
	bogus.Unprocessed = []string{"i2", "i99"}
	twice := c
	twice.Unprocessed = []string{"i2", "i2"}
	empty := c
	empty.Unprocessed = nil
	cases := []struct {
		name    string
		prompts []Prompt
		c       Cursor
		want    string
	}{
		// An edited item changes the hash: the IDs may no longer mean the same.
		{"edited", edited, c, "resume with that same prompts file"},
		// A removed item changes it too.
		{"shorter", prompts[:4], c, "not the ones the cursor was written for"},
		// The error names the missing item.
		{"unknown id", prompts, bogus, `"i99"`},
		{"named twice", prompts, twice, "twice"},
		{"nothing left", prompts, empty, "nothing to resume"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FilterPrompts(tc.prompts, tc.c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// TestPromptsHash changes with the content and the order, and only then.
func TestPromptsHash(t *testing.T) {
	a, b := itemPrompts(3), itemPrompts(3)
	if PromptsHash(a) != PromptsHash(b) {
		t.Error("equal prompts hash differently")
	}
	b[0], b[1] = b[1], b[0]
	if PromptsHash(a) == PromptsHash(b) {
		t.Error("reordered prompts hash the same")
	}
	c := itemPrompts(3)
	c[2].MaxTokens = 10
	if PromptsHash(a) == PromptsHash(c) {
		t.Error("a changed max_tokens hashes the same")
	}
}
