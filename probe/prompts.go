package probe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/tollgate-dev/tollgate/probe/wire"
)

// maxPromptLine bounds one line of a prompts file.
const maxPromptLine = 16 << 20

// LoadPrompts reads a JSONL prompts file: one object per line, either
// {"id": "...", "prompt": "text"} or {"id": "...", "system": "...",
// "messages": [{"role": "user", "content": "..."}], "max_tokens": N}.
// Blank lines and lines starting with # are skipped. An item without an
// id is named by its line number. Errors name the file and the line.
func LoadPrompts(path string) ([]Prompt, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read prompts: %w", err)
	}
	defer f.Close()
	prompts, err := ParsePrompts(f, path)
	if err != nil {
		return nil, err
	}
	return prompts, nil
}

// ParsePrompts reads prompts JSONL from r; name is used in errors.
func ParsePrompts(r io.Reader, name string) ([]Prompt, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxPromptLine)
	var prompts []Prompt
	seen := map[string]int{}
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		p, err := parsePromptLine(line)
		if err != nil {
			return nil, fmt.Errorf("read prompts %q line %d: %w", name, n, err)
		}
		if p.ID == "" {
			p.ID = strconv.Itoa(n)
		}
		if first, dup := seen[p.ID]; dup {
			return nil, fmt.Errorf("read prompts %q line %d: id %q is already used on line %d: ids must be unique so that a cursor can name items", name, n, p.ID, first)
		}
		seen[p.ID] = n
		prompts = append(prompts, p)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("read prompts %q: a line is longer than %d bytes", name, maxPromptLine)
		}
		return nil, fmt.Errorf("read prompts %q: %w", name, err)
	}
	if len(prompts) == 0 {
		return nil, fmt.Errorf("read prompts %q: no prompts in the file (want one JSON object per line)", name)
	}
	return prompts, nil
}

func parsePromptLine(line []byte) (Prompt, error) {
	var raw struct {
		ID        json.RawMessage `json:"id"`
		Prompt    *string         `json:"prompt"`
		System    string          `json:"system"`
		Messages  []wire.Message  `json:"messages"`
		MaxTokens int             `json:"max_tokens"`
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return Prompt{}, fmt.Errorf("%w (want {\"prompt\": \"...\"} or {\"messages\": [...]})", err)
	}
	p := Prompt{System: raw.System, Messages: raw.Messages, MaxTokens: raw.MaxTokens}
	if len(raw.ID) > 0 {
		var s string
		if err := json.Unmarshal(raw.ID, &s); err != nil {
			var num json.Number
			if err := json.Unmarshal(raw.ID, &num); err != nil {
				return Prompt{}, fmt.Errorf("id %s: want a string or a number", raw.ID)
			}
			s = num.String()
		}
		p.ID = s
	}
	switch {
	case raw.Prompt != nil && len(raw.Messages) > 0:
		return Prompt{}, errors.New(`give "prompt" or "messages", not both`)
	case raw.Prompt != nil:
		p.Messages = []wire.Message{{Role: "user", Content: *raw.Prompt}}
	case len(raw.Messages) == 0:
		return Prompt{}, errors.New(`no "prompt" and no "messages"`)
	}
	if raw.MaxTokens < 0 {
		return Prompt{}, fmt.Errorf("max_tokens %d: must not be negative", raw.MaxTokens)
	}
	for i, m := range p.Messages {
		if m.Role == "" {
			return Prompt{}, fmt.Errorf("messages[%d]: no role", i)
		}
	}
	return p, nil
}

// BuiltinPrompts is the workload used when no prompts file is given: short
// support-chat questions, like the path measured in design note 002.
func BuiltinPrompts() []Prompt {
	texts := []string{
		"My order hasn't arrived yet. What can I do?",
		"How do I reset my password?",
		"Can you explain the difference between the Basic and Pro plans?",
		"I was charged twice this month. How do I get a refund?",
		"Write a short, friendly reply thanking a customer for their feedback.",
		"Summarise our return policy in three sentences.",
		"How do I export my data as CSV?",
		"What are your support hours?",
	}
	prompts := make([]Prompt, len(texts))
	for i, t := range texts {
		prompts[i] = Prompt{ID: "builtin-" + strconv.Itoa(i+1), Messages: []wire.Message{{Role: "user", Content: t}}}
	}
	return prompts
}
