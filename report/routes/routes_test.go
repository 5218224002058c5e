package routes

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// specConfig is the example of SPEC §6.
func specConfig() *Config {
	return &Config{Routes: []Route{{
		Name:         "default",
		Timeouts:     Timeouts{Connect: 2 * time.Second, FirstToken: 10 * time.Second, Idle: 45 * time.Second, Total: 10 * time.Minute},
		Stream:       Stream{TTFT: 5 * time.Second, Gap: 10 * time.Second},
		NonStreaming: NonStreaming{Head: 90 * time.Second},
	}}}
}

func TestParseSpecExample(t *testing.T) {
	cfg, err := Load(filepath.Join("testdata", "spec.yaml"))
	if err != nil {
		t.Fatalf("SPEC §6's own example is refused: %v", err)
	}
	r, err := cfg.Route("default")
	if err != nil {
		t.Fatal(err)
	}
	want := specConfig().Routes[0]
	if r.Timeouts != want.Timeouts || r.Stream != want.Stream || r.NonStreaming != want.NonStreaming || r.Batch != want.Batch {
		t.Errorf("route = %+v %+v %+v %+v, want %+v %+v %+v", r.Timeouts, r.Stream, r.NonStreaming, r.Batch, want.Timeouts, want.Stream, want.NonStreaming)
	}
	// The example's route serves non-streaming calls with a 10 s first_token
	// (ADR 0016's consequence): legal, and warned about.
	if len(cfg.Warnings) != 1 || cfg.Warnings[0].Key != "routes[default].timeouts.first_token" || cfg.Warnings[0].Line != 5 {
		t.Errorf("warnings = %v, want one on timeouts.first_token at line 5", cfg.Warnings)
	}
}

// TestWriteGolden checks Write against golden files; the SPEC example's
// golden file is SPEC §6 verbatim. Refresh with go test -update.
func TestWriteGolden(t *testing.T) {
	full := specConfig()
	full.Routes[0].Batch = Batch{ItemCeiling: 3 * time.Minute, Attempts: 5, RetryBudget: 10 * time.Minute, JobDeadline: 5*time.Hour + 30*time.Minute}
	full.Routes = append(full.Routes, Route{
		Name:     "chat: interactive", // needs quoting
		Timeouts: Timeouts{Connect: 1500 * time.Millisecond, FirstToken: 8 * time.Second, Idle: 30 * time.Second},
		Stream:   Stream{Gap: 10 * time.Second},
	})
	for _, tc := range []struct {
		golden string
		cfg    *Config
	}{
		{"spec.yaml", specConfig()},
		{"full.golden.yaml", full},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, tc.cfg); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tc.golden)
			if *update && tc.golden != "spec.yaml" { // spec.yaml is SPEC §6, never rewritten
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if buf.String() != string(want) {
				t.Errorf("Write =\n%s\nwant (%s)\n%s", buf.String(), path, want)
			}
			// What Write wrote, Parse reads back to the same routes.
			back, err := Parse(buf.Bytes(), tc.golden)
			if err != nil {
				t.Fatalf("written config refused: %v", err)
			}
			if len(back.Routes) != len(tc.cfg.Routes) {
				t.Fatalf("round trip: %d routes, want %d", len(back.Routes), len(tc.cfg.Routes))
			}
			for i, r := range back.Routes {
				w := tc.cfg.Routes[i]
				if r.Name != w.Name || r.Timeouts != w.Timeouts || r.Stream != w.Stream || r.NonStreaming != w.NonStreaming || r.Batch != w.Batch {
					t.Errorf("round trip route %d = %+v, want %+v", i, r, w)
				}
			}
		})
	}
}

const base = `routes:
  - name: default
    timeouts:
      connect: 2s
      first_token: 10s
      idle: 45s
      total: 10m
`

// TestRefusals has one case per refusal; each names the key, the line, and
// a fragment of what to do.
func TestRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string
		key  string
		line int
		msg  string
	}{
		// A written 0 is not "off": leave the key out for that.
		{"zero ttft", base + "    stream:\n      ttft: 0s\n", "routes[default].stream.ttft", 9, "leave the key out"},
		{"negative idle", strings.Replace(base, "idle: 45s", "idle: -45s", 1), "routes[default].timeouts.idle", 6, "not positive"},
		{"zero connect", strings.Replace(base, "connect: 2s", "connect: 0s", 1), "routes[default].timeouts.connect", 4, "not positive"},
		{"zero head", base + "    non_streaming:\n      head: 0s\n", "routes[default].non_streaming.head", 9, "not positive"},
		{"zero attempts", base + "    batch:\n      attempts: 0\n", "routes[default].batch.attempts", 9, "1 or more"},
		{"missing idle", strings.Replace(base, "      idle: 45s\n", "", 1), "routes[default].timeouts.idle", 3, "missing"},
		{"bare number", strings.Replace(base, "idle: 45s", "idle: 45", 1), "routes[default].timeouts.idle", 6, "write it as a duration, e.g. 45s"},
		{"not a duration", strings.Replace(base, "idle: 45s", "idle: soon", 1), "routes[default].timeouts.idle", 6, "not a duration"},
		// connect + first_token = 12 s needs a total of 24 s (a whole margin: 12 s).
		{"first_token inside total", strings.Replace(base, "total: 10m", "total: 20s", 1), "routes[default].timeouts.total", 7, "raise timeouts.total to at least 24s"},
		// connect + head = 92 s needs 122 s; 2 m is not enough.
		{"head inside total", strings.Replace(base, "total: 10m", "total: 2m", 1) + "    non_streaming:\n      head: 90s\n", "routes[default].timeouts.total", 7, "at least 2m2s"},
		{"ttft inside total", strings.Replace(strings.Replace(base, "total: 10m", "total: 9s", 1), "first_token: 10s", "first_token: 1s", 1) + "    stream:\n      ttft: 5s\n", "routes[default].timeouts.total", 7, "stream.ttft"},
		{"head inside item ceiling", base + "    non_streaming:\n      head: 90s\n    batch:\n      item_ceiling: 100s\n", "routes[default].batch.item_ceiling", 0, "does not clear"},
		{"item ceiling above total", strings.Replace(base, "total: 10m", "total: 3m", 1) + "    batch:\n      item_ceiling: 5m\n", "routes[default].batch.item_ceiling", 0, "above timeouts.total"},
		{"job deadline below one item", base + "    batch:\n      item_ceiling: 3m\n      job_deadline: 3m\n", "routes[default].batch.job_deadline", 10, "raise the job deadline"},
		// ADR-0036 D3: the non-streaming head wait is never the shorter one.
		{"head below first_token", base + "    non_streaming:\n      head: 5s\n", "routes[default].non_streaming.head", 9, "ADR-0036 D3"},
		{"duplicate name", base + strings.Replace(base, "routes:\n", "", 1), "routes[default].name", 0, "used twice"},
		{"repeated key", strings.Replace(base, "      idle: 45s\n", "      idle: 45s\n      idle: 50s\n", 1), "routes[default].timeouts.idle", 7, "repeated (first at line 6)"},
		{"unknown key far from any", base + "    retries: 3\n", "routes[default].retries", 8, "the keys here are name, timeouts, stream, non_streaming, batch"},
		{"key in the wrong section", base + "      ttft: 5s\n", "routes[default].timeouts.ttft", 8, "ttft belongs under stream"},
		{"no routes", "routes: []\n", "routes", 0, "no routes"},
		{"not a list", "routes:\n  default: {}\n", "routes", 2, "must be a list"},
		{"empty file", "", "", 0, "empty"},
		{"two documents", base + "---\n" + base, "", 0, "more than one YAML document"},
		{"not YAML", "routes: [\n", "", 0, "not valid YAML"},
		{"missing name", strings.Replace(base, "  - name: default\n    timeouts:", "  - timeouts:", 1), "routes[0].name", 0, "needs a name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tc.yaml), "r.yaml")
			var rerr *Error
			if !errors.As(err, &rerr) {
				t.Fatalf("Parse = %+v, %v; want a refusal", cfg, err)
			}
			for _, p := range rerr.Problems {
				if p.Key == tc.key && (tc.line == 0 || p.Line == tc.line) && strings.Contains(p.Msg, tc.msg) {
					if p.Source != "r.yaml" {
						t.Errorf("problem does not name the file: %v", p)
					}
					return
				}
			}
			t.Errorf("no problem at key %q line %d containing %q in:\n%v", tc.key, tc.line, tc.msg, err)
		})
	}
}

// TestAllRefusalsListed: one pass reports every problem, not the first.
func TestAllRefusalsListed(t *testing.T) {
	y := strings.Replace(strings.Replace(base, "idle: 45s", "idel: 45s", 1), "connect: 2s", "connect: -1s", 1) + "    stream:\n      ttft: 0s\n"
	_, err := Parse([]byte(y), "r.yaml")
	var rerr *Error
	if !errors.As(err, &rerr) {
		t.Fatalf("err = %v, want *Error", err)
	}
	if len(rerr.Problems) != 3 {
		t.Errorf("%d problems, want 3 (connect, idel, ttft):\n%v", len(rerr.Problems), err)
	}
	msg := err.Error()
	for _, want := range []string{"r.yaml:4: routes[default].timeouts.connect", "r.yaml:6: routes[default].timeouts.idel", `did you mean "idle"`, "r.yaml:9: routes[default].stream.ttft"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
}

func TestTypoSuggestion(t *testing.T) {
	for _, tc := range []struct {
		typo, want string
	}{
		{"frist_token", "first_token"}, // transposition: one edit
		{"first-token", "first_token"},
		{"firsttoken", "first_token"},
		{"conect", "connect"},
		{"Idle", "idle"},
	} {
		y := strings.Replace(base, "first_token:", tc.typo+":", 1)
		if tc.typo == "conect" {
			y = strings.Replace(base, "connect:", "conect:", 1)
		}
		if tc.typo == "Idle" {
			y = strings.Replace(base, "idle:", "Idle:", 1)
		}
		_, err := Parse([]byte(y), "r.yaml")
		if err == nil || !strings.Contains(err.Error(), `did you mean "`+tc.want+`"?`) {
			t.Errorf("%s: err = %v, want a suggestion of %s", tc.typo, err, tc.want)
		}
	}
	// Far from every key: no suggestion, the list instead.
	if s, ok := nearest("deadline", sectionKeys["timeouts"]); ok {
		t.Errorf("nearest(deadline) = %q, want no suggestion", s)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{
		{"first_token", "first_token", 0},
		{"frist_token", "first_token", 1},
		{"gap", "ttft", 4},
		{"", "idle", 4},
		{"ca", "abc", 3}, // optimal string alignment, not unrestricted Damerau
	} {
		if got := editDistance(tc.a, tc.b); got != tc.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}

func TestRouteLookup(t *testing.T) {
	cfg, err := Parse([]byte(base+strings.Replace(strings.Replace(base, "routes:\n", "", 1), "default", "batch-jobs", 1)), "r.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if r, err := cfg.Route("batch-jobs"); err != nil || r.Name != "batch-jobs" {
		t.Errorf("Route(batch-jobs) = %v, %v", r, err)
	}
	_, err = cfg.Route("chat")
	if err == nil || !strings.Contains(err.Error(), `no route "chat"; its routes are: default, batch-jobs`) {
		t.Errorf("Route(chat) err = %v", err)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "nope.yaml") {
		t.Errorf("err = %v, want a not-exist error naming the file", err)
	}
}

func TestClearance(t *testing.T) {
	for _, tc := range []struct{ bound, want time.Duration }{
		{5 * time.Second, 5 * time.Second},   // short bounds need themselves again
		{30 * time.Second, 30 * time.Second}, // the crossover
		{90 * time.Second, 30 * time.Second}, // ADR-0036: a whole 30 s margin
		{10 * time.Minute, 30 * time.Second},
	} {
		if got := Clearance(tc.bound); got != tc.want {
			t.Errorf("Clearance(%s) = %s, want %s", tc.bound, got, tc.want)
		}
	}
	// ADR-0036's own boundary: a 90 s head wait loads under a 120 s cap
	// (after connect is 0) and not under 119 s.
	for _, tc := range []struct {
		total string
		ok    bool
	}{{"122s", true}, {"121s", false}} {
		y := strings.Replace(base, "total: 10m", "total: "+tc.total, 1) + "    non_streaming:\n      head: 90s\n"
		_, err := Parse([]byte(y), "r.yaml")
		if (err == nil) != tc.ok {
			t.Errorf("total %s with head 90s, connect 2s: err = %v, want ok=%v", tc.total, err, tc.ok)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{2 * time.Second, "2s"},
		{90 * time.Second, "90s"},
		{60 * time.Second, "60s"},
		{2 * time.Minute, "2m"},
		{10 * time.Minute, "10m"},
		{150 * time.Second, "2m30s"},
		{time.Hour, "60m"},
		{2 * time.Hour, "2h"},
		{5*time.Hour + 30*time.Minute, "5h30m"},
		{250 * time.Millisecond, "250ms"},
		{1500 * time.Millisecond, "1.5s"},
		{0, "0s"},
	} {
		if got := FormatDuration(tc.d); got != tc.want {
			t.Errorf("FormatDuration(%s) = %q, want %q", tc.d, got, tc.want)
		}
		if back, err := time.ParseDuration(FormatDuration(tc.d)); err != nil || back != tc.d {
			t.Errorf("FormatDuration(%s) = %q does not parse back: %v %v", tc.d, FormatDuration(tc.d), back, err)
		}
	}
}

func TestValidateBuiltInCode(t *testing.T) {
	cfg := specConfig()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("SPEC example refused: %v", err)
	}
	cfg.Routes[0].Timeouts.Idle = 0 // built in code, zero is "left out"
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "routes[default].timeouts.idle: missing") {
		t.Errorf("err = %v, want idle missing", err)
	}
}

// FuzzParse: Parse never panics, and what it accepts survives Write and
// Parse unchanged.
func FuzzParse(f *testing.F) {
	seed, _ := os.ReadFile(filepath.Join("testdata", "spec.yaml"))
	f.Add(seed)
	f.Add([]byte(base))
	f.Add([]byte("routes:\n  - name: x\n    timeouts: {connect: 1s, first_token: 1s, idle: 1s}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, "f.yaml")
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := Write(&buf, cfg); err != nil {
			t.Fatal(err)
		}
		back, err := Parse(buf.Bytes(), "f.yaml")
		if err != nil {
			t.Fatalf("accepted config refused after Write: %v\n%s", err, buf.String())
		}
		for i := range cfg.Routes {
			a, b := cfg.Routes[i], back.Routes[i]
			if a.Name != b.Name || a.Timeouts != b.Timeouts || a.Stream != b.Stream || a.NonStreaming != b.NonStreaming || a.Batch != b.Batch {
				t.Fatalf("round trip changed route %d: %+v -> %+v", i, a, b)
			}
		}
	})
}
