package routes

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// The comment on each section, as SPEC §6 shows them, aligned in one column.
var sectionComments = map[string]string{
	"timeouts":      "# ADR 0016's four",
	"stream":        "# content-level deadlines (pings do not reset them)",
	"non_streaming": "# ADR-0036's patient head wait",
	"batch":         "# the bulk path (002): per-call ceiling, retries, job deadline",
}

const commentColumn = 25

// Write writes cfg as the YAML of SPEC §6, comments included, durations
// as FormatDuration writes them. Keys whose value is zero (left out) are
// not written, nor sections that would be empty. Write does not check cfg;
// call Validate first when it was built in code.
func Write(w io.Writer, cfg *Config) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("routes:\n")
	for _, r := range cfg.Routes {
		fmt.Fprintf(bw, "  - name: %s\n", scalar(r.Name))
		t, s, ns, b := r.Timeouts, r.Stream, r.NonStreaming, r.Batch
		section(bw, "timeouts", []kv{
			{"connect", dur(t.Connect)}, {"first_token", dur(t.FirstToken)},
			{"idle", dur(t.Idle)}, {"total", dur(t.Total)},
		})
		section(bw, "stream", []kv{{"ttft", dur(s.TTFT)}, {"gap", dur(s.Gap)}})
		section(bw, "non_streaming", []kv{{"head", dur(ns.Head)}})
		attempts := ""
		if b.Attempts != 0 {
			attempts = strconv.Itoa(b.Attempts)
		}
		section(bw, "batch", []kv{
			{"item_ceiling", dur(b.ItemCeiling)}, {"attempts", attempts},
			{"retry_budget", dur(b.RetryBudget)}, {"job_deadline", dur(b.JobDeadline)},
		})
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write route config: %w", err)
	}
	return nil
}

// kv is one key and its written value; an empty value is left out.
type kv struct{ key, value string }

func section(w *bufio.Writer, name string, keys []kv) {
	var lines []string
	for _, k := range keys {
		if k.value != "" {
			lines = append(lines, fmt.Sprintf("      %s: %s\n", k.key, k.value))
		}
	}
	if len(lines) == 0 {
		return
	}
	head := "    " + name + ":"
	fmt.Fprintf(w, "%s%s%s\n", head, strings.Repeat(" ", max(1, commentColumn-len(head))), sectionComments[name])
	for _, l := range lines {
		w.WriteString(l)
	}
}

func dur(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return FormatDuration(d)
}

// scalar writes s as a YAML scalar, quoted only when YAML needs it.
func scalar(s string) string {
	b, err := yaml.Marshal(s)
	if err != nil {
		return strconv.Quote(s)
	}
	return strings.TrimSuffix(string(b), "\n")
}
