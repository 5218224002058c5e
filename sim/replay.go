package sim

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
)

// replayEvent is one event block of a captured stream, with its raw bytes
// (blank-line terminator included) and whether it carries content.
type replayEvent struct {
	raw     []byte
	content bool
}

// contentData matches the data of a content delta in any of the three
// APIs: Anthropic text, thinking and tool-input deltas; chat content,
// refusal, reasoning and tool-call arguments; Responses *.delta text.
var contentData = regexp.MustCompile(`"(?:text|thinking|partial_json|content|refusal|reasoning_content|reasoning|arguments|delta)":"[^"]`)

// LoadReplay reads a captured .sse file for Config.Replay.
func LoadReplay(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read replay: %w", err)
	}
	if len(parseReplay(data)) == 0 {
		return nil, fmt.Errorf("replay %q: no event in the file", path)
	}
	return data, nil
}

// parseReplay cuts a captured stream after every blank line, keeping its
// bytes exactly (a file that ends without a final blank line keeps that
// last, unterminated block as it is).
func parseReplay(data []byte) []replayEvent {
	var out []replayEvent
	for len(data) > 0 {
		end := len(data)
		for _, sep := range [][]byte{[]byte("\n\n"), []byte("\r\n\r\n"), []byte("\r\r")} {
			if i := bytes.Index(data, sep); i >= 0 && i+len(sep) < end {
				end = i + len(sep)
			}
		}
		raw := data[:end]
		data = data[end:]
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		out = append(out, replayEvent{raw: raw, content: isContent(raw)})
	}
	return out
}

// isContent tells a content delta by its data: pings, comments, lifecycle
// events and empty deltas are not content.
func isContent(raw []byte) bool {
	for line := range bytes.Lines(raw) {
		if bytes.HasPrefix(line, []byte("data:")) && !bytes.Contains(line, []byte("signature_delta")) && contentData.Match(line) {
			return true
		}
	}
	return false
}

// replayPlan spaces the captured events by the call's schedule: the events
// before the first content delta go with the head, content delta i at the
// schedule's delta i (the schedule's gaps are reused in turn when the
// capture has more deltas than the schedule), and every other event right
// after the event before it.
func (c *call) replayPlan(ans *answer) *plan {
	s := ans.sched
	p := &plan{}
	at := s.Head
	n := 0
	for _, ev := range c.srv.replay {
		if ev.content {
			switch {
			case n == 0:
				at = s.TTFT
			case len(s.Gaps) > 0:
				g := (n - 1) % len(s.Gaps)
				at += s.Gaps[g]
				if s.Pauses != nil {
					at += s.Pauses[g]
				}
			}
			n++
		}
		// One step per event, so that a fault can cut between any two;
		// play still sends the events due together in one write.
		p.buf = append(p.buf, ev.raw...)
		p.steps = append(p.steps, step{at: at, end: len(p.buf), content: ev.content})
	}
	return p
}
