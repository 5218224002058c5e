// Package routes reads, checks and writes tollgate's route configuration:
// the YAML of SPEC §6 that `probe --config-out` and `recommend -o` write,
// `check-config` validates, and `probe --route-config` runs under.
//
// # Keys
//
//	routes:
//	  - name: default          required, unique
//	    timeouts:              ADR 0016's four
//	      connect: 2s          required: call start -> connection ready
//	      first_token: 10s     required: connection ready -> first BODY byte
//	      idle: 45s            required: between body reads (pings reset it)
//	      total: 10m           optional: call start -> body end
//	    stream:                optional: content-level deadlines
//	      ttft: 5s             call start -> first content delta
//	      gap: 10s             between content deltas (pings do not reset it)
//	    non_streaming:         optional: ADR-0036's patient head wait
//	      head: 90s
//	    batch:                 optional: the bulk path of 002
//	      item_ceiling: 3m     one batch call, start -> body end
//	      attempts: 5          calls per item, first one included
//	      retry_budget: 10m    waiting allowed between an item's attempts
//	      job_deadline: 5h30m  the whole job; it stops and leaves a cursor
//
// # Zero and absent
//
// A key that is left out turns its clock off (or, for the batch keys, leaves
// the probe's own default). A key that is written must be positive: a 0 in a
// file reads like a configured bound that cuts every call at once (ADR-0036
// D3 refuses it for that reason), so "off" is said by leaving the key out.
// connect, first_token and idle cannot be left out: ADR 0016 gives every
// route all three, and without them a dead dial, a provider that stops after
// the headers, or a silent connection hangs until total (or forever).
//
// # Refusals
//
// Parse refuses, with file, line, key and what to do, every configuration
// that cannot be right: a key it does not know (suggesting the nearest known
// one), a value that is not a duration, a duration that is not positive, a
// duplicate route name, a bound spent inside a cap that does not clear the
// cap by a whole margin (see Clearance), and a non-streaming head wait
// shorter than the streaming one (ADR-0036 D3). What is legal but probably
// wrong — a first_token below the non-streaming head wait on a route that
// serves both modes (ADR 0016's consequence) — is a warning, not a refusal.
package routes

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// Config is a route configuration file: one or more named routes.
type Config struct {
	Routes []Route
	// Source names the file the config came from, for messages; empty for
	// a config built in code.
	Source string
	// Warnings are what Parse found legal but probably wrong.
	Warnings []Problem
}

// Route is one route's timeouts. A zero duration is a key that was left out
// (its clock is off); see the package comment.
type Route struct {
	Name         string
	Timeouts     Timeouts
	Stream       Stream
	NonStreaming NonStreaming
	Batch        Batch

	// lines maps a key path ("timeouts.connect") to its line in the file,
	// so that checks run after parsing can still point at the line.
	lines map[string]int
	// bad holds the key paths that were written but could not be read;
	// they were refused already and are not checked again.
	bad map[string]bool
}

// Timeouts are ADR 0016's four route timeouts.
type Timeouts struct {
	Connect    time.Duration
	FirstToken time.Duration
	Idle       time.Duration
	Total      time.Duration
}

// Stream holds the content-level deadlines that pings do not reset.
type Stream struct {
	TTFT time.Duration
	Gap  time.Duration
}

// NonStreaming holds ADR-0036's head wait for non-streaming calls.
type NonStreaming struct {
	Head time.Duration
}

// Batch holds the bulk path's settings (002's right-hand column).
type Batch struct {
	// ItemCeiling caps one batch call from its start to its body end.
	ItemCeiling time.Duration
	// Attempts is how many calls an item may take, the first included.
	Attempts int
	// RetryBudget is how long an item may wait between its attempts in all.
	RetryBudget time.Duration
	// JobDeadline bounds the whole job.
	JobDeadline time.Duration
}

// Margin is the clearance ADR-0036 demands of a bound spent inside a cap:
// "a whole MaxRequestMarginSeconds", 30 s there. See Clearance.
const Margin = 30 * time.Second

// Clearance is how far a cap must sit above a bound spent inside it: a
// whole margin, which is Margin or the bound itself, whichever is smaller.
// The remainder is what the rest of the call (the body after the head, the
// stream after its first token) runs in once the bound is met; a cap that
// clears a bound by less cuts the call just as it starts to deliver, and
// reports the cap rather than the phase that was slow (ADR-0036 D3, #2819
// C34). Taking the smaller keeps short test routes usable: a 5 s ttft needs
// a total of at least 10 s, a 90 s head wait one of at least 120 s.
func Clearance(bound time.Duration) time.Duration {
	return min(Margin, bound)
}

// Problem is one refusal or warning, located in the file.
type Problem struct {
	// Source is the file name; empty for a config built in code.
	Source string
	// Line is the 1-based line in Source; 0 when unknown.
	Line int
	// Key is the key's path, e.g. "routes[default].timeouts.first_token".
	Key string
	// Msg says what is wrong and what to do.
	Msg string
}

// String formats p as "file:line: key: message".
func (p Problem) String() string {
	var b strings.Builder
	if p.Source != "" {
		b.WriteString(p.Source)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
		}
		b.WriteString(": ")
	} else if p.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", p.Line)
	}
	if p.Key != "" {
		b.WriteString(p.Key)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Error is a refused configuration: every problem found, in file order.
type Error struct {
	Source   string
	Problems []Problem
}

// Error lists every problem, one a line.
func (e *Error) Error() string {
	var b strings.Builder
	name := e.Source
	if name == "" {
		name = "route config"
	}
	n := len(e.Problems)
	fmt.Fprintf(&b, "%s refused (%d problem%s):", name, n, plural(n))
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Load reads and checks the route config at path (see Parse).
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read route config %q: %w", path, err)
	}
	return Parse(data, path)
}

// Route returns the route called name, or an error that lists the names
// the config has.
func (c *Config) Route(name string) (*Route, error) {
	for i := range c.Routes {
		if c.Routes[i].Name == name {
			return &c.Routes[i], nil
		}
	}
	names := make([]string, len(c.Routes))
	for i, r := range c.Routes {
		names[i] = r.Name
	}
	src := c.Source
	if src == "" {
		src = "route config"
	}
	return nil, fmt.Errorf("%s has no route %q; its routes are: %s", src, name, strings.Join(names, ", "))
}

// Validate runs the checks of Parse that need no file — every refusal but
// the syntactic ones — on a config built in code, and stores the warnings
// in c.Warnings. It returns an *Error when anything is refused.
func (c *Config) Validate() error {
	var refused []Problem
	c.Warnings = nil
	if len(c.Routes) == 0 {
		refused = append(refused, Problem{Source: c.Source, Key: "routes",
			Msg: "no routes; add at least one route with a name and timeouts"})
	}
	seen := map[string]int{}
	for i := range c.Routes {
		r := &c.Routes[i]
		key := routeKey(r.Name, i)
		if r.Name == "" {
			refused = append(refused, Problem{Source: c.Source, Line: r.lines["name"], Key: key + ".name",
				Msg: "a route needs a name; add `name: default` (or another name)"})
		} else if first, dup := seen[r.Name]; dup {
			refused = append(refused, Problem{Source: c.Source, Line: r.lines["name"], Key: key + ".name",
				Msg: fmt.Sprintf("route name %q is used twice (first by routes[%d]); give each route its own name", r.Name, first)})
		} else {
			seen[r.Name] = i
		}
		rp, wp := r.check()
		for _, p := range rp {
			refused = append(refused, c.locate(r, key, p))
		}
		for _, p := range wp {
			c.Warnings = append(c.Warnings, c.locate(r, key, p))
		}
	}
	if len(refused) > 0 {
		return &Error{Source: c.Source, Problems: refused}
	}
	return nil
}

// locate turns a route-relative problem (Key "timeouts.idle") into a
// file-located one.
// A key that is missing is located at its section, or else at the route.
func (c *Config) locate(r *Route, routeKey string, p Problem) Problem {
	line, ok := r.lines[p.Key]
	if !ok {
		section, _, _ := strings.Cut(p.Key, ".")
		if line, ok = r.lines[section]; !ok {
			line = r.lines["name"]
		}
	}
	return Problem{Source: c.Source, Line: line, Key: routeKey + "." + p.Key, Msg: p.Msg}
}

func routeKey(name string, i int) string {
	if name == "" {
		return fmt.Sprintf("routes[%d]", i)
	}
	return fmt.Sprintf("routes[%s]", name)
}

// check returns one route's refusals and warnings, with Key relative to
// the route ("timeouts.idle").
func (r *Route) check() (refused, warned []Problem) {
	refuse := func(key, format string, a ...any) {
		refused = append(refused, Problem{Key: key, Msg: fmt.Sprintf(format, a...)})
	}
	t, s, ns, b := r.Timeouts, r.Stream, r.NonStreaming, r.Batch

	// Required keys and signs; see the package comment for why a written
	// 0 is refused rather than read as "off".
	for _, k := range durationKeys {
		d, why := *k.field(r), k.required
		if r.bad[k.key] {
			continue
		}
		switch {
		case d < 0 && why != "":
			refuse(k.key, "%s is not positive; write a positive duration", FormatDuration(d))
		case d < 0:
			refuse(k.key, "%s is not positive; write a positive duration, or leave the key out to turn the clock off", FormatDuration(d))
		case d == 0 && why != "" && r.present(k.key):
			refuse(k.key, "0 is not positive: it would cut every call at once; write a positive duration (without it %s)", why)
		case d == 0 && r.present(k.key):
			refuse(k.key, "0 is not positive: it reads like a bound that cuts every call at once; write a positive duration, or leave the key out to turn the clock off")
		case d == 0 && why != "":
			refuse(k.key, "missing; ADR 0016 gives every route connect, first_token and idle — without it %s", why)
		}
	}
	if !r.bad["batch.attempts"] && (b.Attempts < 0 || (b.Attempts == 0 && r.present("batch.attempts"))) {
		refuse("batch.attempts", "%d is not positive; write 1 or more (1 means no retries), or leave the key out", b.Attempts)
	}

	// Bounds spent inside a cap must clear it by a whole margin.
	capped := func(capKey string, capD time.Duration, parts []string, bound time.Duration) {
		if capD <= 0 || bound <= 0 {
			return
		}
		need := bound + Clearance(bound)
		if capD >= need {
			return
		}
		refuse(capKey, "%s does not clear %s = %s by a whole margin (%s); the cap would cut calls as that phase completes — raise %s to at least %s or lower the bound",
			FormatDuration(capD), strings.Join(parts, " + "), FormatDuration(bound), FormatDuration(Clearance(bound)), capKey, FormatDuration(need))
	}
	if t.Connect > 0 && t.FirstToken > 0 {
		capped("timeouts.total", t.Total, []string{"timeouts.connect", "timeouts.first_token"}, t.Connect+t.FirstToken)
	}
	capped("timeouts.total", t.Total, []string{"stream.ttft"}, s.TTFT)
	if ns.Head > 0 {
		capped("timeouts.total", t.Total, []string{"timeouts.connect", "non_streaming.head"}, t.Connect+ns.Head)
		capped("batch.item_ceiling", b.ItemCeiling, []string{"timeouts.connect", "non_streaming.head"}, t.Connect+ns.Head)
	}
	if b.ItemCeiling > 0 && t.Total > 0 && b.ItemCeiling > t.Total {
		refuse("batch.item_ceiling", "%s is above timeouts.total (%s), which cuts every call on the route first; lower the ceiling or raise total",
			FormatDuration(b.ItemCeiling), FormatDuration(t.Total))
	}
	if b.JobDeadline > 0 && b.ItemCeiling > 0 && b.JobDeadline < b.ItemCeiling+Clearance(b.ItemCeiling) {
		refuse("batch.job_deadline", "%s does not leave room for even one item under batch.item_ceiling (%s) and a margin; raise the job deadline",
			FormatDuration(b.JobDeadline), FormatDuration(b.ItemCeiling))
	}

	// ADR-0036 D3: a non-streamer is strictly more patient than a streamer.
	if ns.Head > 0 && t.FirstToken > 0 && ns.Head < t.FirstToken {
		refuse("non_streaming.head", "%s is shorter than the streaming bound timeouts.first_token (%s); a non-streaming call's head IS its answer, so it needs the longer wait (ADR-0036 D3) — raise it to at least %s",
			FormatDuration(ns.Head), FormatDuration(t.FirstToken), FormatDuration(t.FirstToken))
	}

	// ADR 0016's consequence: first_token is one clock for both modes.
	if ns.Head > 0 && t.FirstToken > 0 && t.FirstToken < ns.Head {
		warned = append(warned, Problem{Key: "timeouts.first_token", Msg: fmt.Sprintf(
			"%s is below non_streaming.head (%s); first_token is the same clock for non-streaming calls (ADR 0016), whose first body byte comes only with the whole answer, so it cuts them at %s — raise first_token to %s or split the route into a streaming and a non-streaming route",
			FormatDuration(t.FirstToken), FormatDuration(ns.Head), FormatDuration(t.FirstToken), FormatDuration(ns.Head))})
	}
	if b.Attempts > 1 && b.RetryBudget == 0 && r.hasBatch() {
		warned = append(warned, Problem{Key: "batch.retry_budget", Msg: fmt.Sprintf(
			"not set with batch.attempts %d; retries will not wait for a retry-after, so a rate-limit episode spends every attempt at once", b.Attempts)})
	}
	return refused, warned
}

// durationKeys are a route's duration keys in the order Write writes them:
// where each is held, and why ADR 0016 requires it ("" when optional).
var durationKeys = []struct {
	key      string
	field    func(*Route) *time.Duration
	required string
}{
	{"timeouts.connect", func(r *Route) *time.Duration { return &r.Timeouts.Connect }, "a dead dial would hang until total"},
	{"timeouts.first_token", func(r *Route) *time.Duration { return &r.Timeouts.FirstToken }, "a provider that stops after the headers would hang until total (ADR 0016)"},
	{"timeouts.idle", func(r *Route) *time.Duration { return &r.Timeouts.Idle }, "a silent connection would hang until total"},
	{"timeouts.total", func(r *Route) *time.Duration { return &r.Timeouts.Total }, ""},
	{"stream.ttft", func(r *Route) *time.Duration { return &r.Stream.TTFT }, ""},
	{"stream.gap", func(r *Route) *time.Duration { return &r.Stream.Gap }, ""},
	{"non_streaming.head", func(r *Route) *time.Duration { return &r.NonStreaming.Head }, ""},
	{"batch.item_ceiling", func(r *Route) *time.Duration { return &r.Batch.ItemCeiling }, ""},
	{"batch.retry_budget", func(r *Route) *time.Duration { return &r.Batch.RetryBudget }, ""},
	{"batch.job_deadline", func(r *Route) *time.Duration { return &r.Batch.JobDeadline }, ""},
}

// present reports whether key was written in the file (always false for a
// config built in code).
func (r *Route) present(key string) bool {
	_, ok := r.lines[key]
	return ok
}

func (r *Route) hasBatch() bool { return r.Batch != Batch{} }

// FormatDuration writes d as a person writes it and as the route config
// shows it: whole seconds up to 90 s ("45s", "90s"), whole minutes from 2 m
// ("2m", "10m"), whole hours from 2 h ("2h"), and Go's form without its
// zero parts otherwise ("1m45s", "5h30m", "250ms", "1.5s").
func FormatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d < 0:
		return "-" + FormatDuration(-d)
	case d < 2*time.Minute && d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	case d >= 2*time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d >= 2*time.Minute && d%time.Minute == 0 && d < 2*time.Hour:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
