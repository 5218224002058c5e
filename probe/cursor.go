package probe

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tollgate-dev/tollgate/probe/shard"
)

// CursorSchema is the value of a cursor file's "schema" key.
const CursorSchema = "tollgate.cursor/v1"

// Reasons a cursor gives for the items it names.
const (
	CursorJobDeadline = "job_deadline" // the job deadline passed
	CursorInterrupted = "interrupted"  // the run was interrupted (SIGINT)
	CursorStopped     = "stopped"      // the run's duration ended first
	CursorComplete    = "complete"     // every item has its outcome
)

// Cursor is what a batch run leaves for a follow-up run (design note 002:
// the job "gives up …, emits the count of unprocessed items, and leaves a
// cursor"): the items it did not process, and the prompts they are in.
type Cursor struct {
	// Schema is CursorSchema.
	Schema string `json:"schema"`
	// Prompts identifies the prompt set the item IDs refer to.
	Prompts CursorPrompts `json:"prompts"`
	// Started is when the run that wrote the cursor started.
	Started time.Time `json:"started"`
	// Written is when the cursor was made.
	Written time.Time `json:"written"`
	// Reason says why items were left: CursorJobDeadline, ...
	Reason string `json:"reason"`
	// Shard is the shard ("I/N") the run was; its items are already in
	// Unprocessed, so a resumed run is not sharded again.
	Shard string `json:"shard,omitempty"`
	// Items is how many items the run took.
	Items int `json:"items"`
	// Unprocessed names, in item order, the items a resumed run processes:
	// never started, or cut short by the deadline or an interrupt.
	Unprocessed []string `json:"unprocessed"`
}

// CursorPrompts identifies a prompt set.
type CursorPrompts struct {
	// Path is the prompts file as given to --prompts; empty for the
	// built-in set.
	Path string `json:"path"`
	// SHA256 is PromptsHash of the whole set (hex).
	SHA256 string `json:"sha256"`
	// Count is the number of prompts in the set.
	Count int `json:"count"`
}

// NewCursor makes the cursor of a finished run (sh is the run's shard,
// zero when not sharded). prompts is the WHOLE set
// as loaded from promptsPath (not the part a resumed run was given), so
// that a cursor written by a resumed run still matches the file.
func NewCursor(promptsPath string, prompts []Prompt, s Summary, sh shard.Shard) Cursor {
	reason := CursorComplete
	switch {
	case s.Interrupted:
		reason = CursorInterrupted
	case s.DeadlineExceeded:
		reason = CursorJobDeadline
	case len(s.Unprocessed) > 0:
		reason = CursorStopped
	}
	return Cursor{
		Schema:      CursorSchema,
		Prompts:     CursorPrompts{Path: promptsPath, SHA256: PromptsHash(prompts), Count: len(prompts)},
		Started:     s.Started,
		Written:     time.Now(),
		Reason:      reason,
		Shard:       sh.String(),
		Items:       s.Items,
		Unprocessed: append([]string{}, s.Unprocessed...),
	}
}

// PromptsHash is the SHA-256 (hex) of a prompt set's content: every
// item's ID and what would be sent for it, in order. It does not change
// with a file's comments or blank lines, and it does change when an item
// is edited, added, removed or moved (line-number IDs move with it).
func PromptsHash(prompts []Prompt) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for i, p := range prompts {
		p.ID = itemID(p, i)
		// Encoding a Prompt (strings, ints and a slice of them) cannot fail.
		_ = enc.Encode(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// WriteCursor writes c to path as JSON, atomically: a temporary file in
// the same directory, synced, then renamed over path, so a crash never
// leaves a half-written cursor.
func WriteCursor(path string, c Cursor) (err error) {
	if c.Schema == "" {
		c.Schema = CursorSchema
	}
	if c.Unprocessed == nil {
		c.Unprocessed = []string{}
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("write cursor %q: %w", path, err)
	}
	data = append(data, '\n')
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write cursor %q: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	for _, step := range []struct {
		what string
		do   func() error
	}{
		{"write", func() error { _, err := f.Write(data); return err }},
		{"sync", f.Sync},
		{"close", f.Close},
		{"rename", func() error { return os.Rename(tmp, path) }},
	} {
		if err = step.do(); err != nil {
			return fmt.Errorf("write cursor %q: %s %q: %w", path, step.what, tmp, err)
		}
	}
	return nil
}

// ReadCursor reads a cursor written by WriteCursor. Errors name the file
// and say what is wrong with it.
func ReadCursor(path string) (Cursor, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Cursor{}, fmt.Errorf("read cursor: %w", err)
	}
	var c Cursor
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&c); err != nil {
		return Cursor{}, fmt.Errorf("read cursor %q: not a cursor file: %w", path, err)
	}
	switch {
	case c.Schema != CursorSchema:
		return Cursor{}, fmt.Errorf("read cursor %q: schema %q, want %q (was it written by tollgate probe --cursor?)", path, c.Schema, CursorSchema)
	case c.Prompts.SHA256 == "":
		return Cursor{}, fmt.Errorf("read cursor %q: no prompts hash: the cursor cannot be matched to a prompts file", path)
	}
	return c, nil
}

// FilterPrompts returns the prompts a run resumed from c processes:
// exactly the items c names, in c's order (item order). It refuses a
// prompt set that is not the one c was written for (its hash differs), an
// ID that is not in the prompts, an ID named twice, and a cursor that
// names no item.
func FilterPrompts(prompts []Prompt, c Cursor) ([]Prompt, error) {
	if got := PromptsHash(prompts); got != c.Prompts.SHA256 {
		return nil, fmt.Errorf("resume: the prompts (%d items, sha256 %.12s) are not the ones the cursor was written for (%q: %d items, sha256 %.12s); resume with that same prompts file, unchanged, or start a new run without --resume",
			len(prompts), got, c.Prompts.Path, c.Prompts.Count, c.Prompts.SHA256)
	}
	if len(c.Unprocessed) == 0 {
		return nil, errors.New("resume: the cursor names no unprocessed item: the run that wrote it finished every item, so there is nothing to resume")
	}
	byID := make(map[string]int, len(prompts))
	for i, p := range prompts {
		byID[itemID(p, i)] = i
	}
	out := make([]Prompt, 0, len(c.Unprocessed))
	seen := make(map[string]bool, len(c.Unprocessed))
	for _, id := range c.Unprocessed {
		i, ok := byID[id]
		if !ok {
			return nil, fmt.Errorf("resume: the cursor names item %q, which is not in the prompts", id)
		}
		if seen[id] {
			return nil, fmt.Errorf("resume: the cursor names item %q twice", id)
		}
		seen[id] = true
		p := prompts[i]
		p.ID = id // keep a position-named item's name in the shorter list
		out = append(out, p)
	}
	return out, nil
}
