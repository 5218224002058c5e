package sim

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Profile is a latency model of a provider: how long until the head, until
// the first content delta, between deltas, how long an answer is, and how
// often the model pauses to think or call a tool.
//
// The named profiles are:
//
//	realistic  head       lognormal p50 250ms, p99 800ms
//	           ttft       lognormal p50 640ms, p99 2.1s
//	           gap        lognormal p50 40ms, p99 180ms
//	           tokens     lognormal p50 80, p99 250
//	           pauses     18% of calls: 1-3 pauses, lognormal p50 3s, p99 9s
//	           ping       every 5s without content; no keep-alive
//	fast       head 1ms, ttft uniform 1-3ms, gap uniform 0.2-1ms,
//	           tokens uniform 16-48, no pauses, ping every 10ms without content
//	thinking   head and ttft as realistic, gap lognormal p50 30ms, p99 120ms,
//	           text tokens lognormal p50 60, p99 200, and on every call a
//	           thinking block first: lognormal p50 300, p99 900 tokens
//
// The realistic numbers are those of the support-chat path measured in the
// design note 002 (TTFT 640 ms / 2.1 s, gaps 40 ms / 180 ms at p50 / p99, and
// a second, seconds-wide population of pauses). A profile file (YAML or
// JSON, see LoadProfile) uses the same fields as the yaml tags below.
type Profile struct {
	// Name identifies the profile in logs and reports.
	Name string `yaml:"name"`
	// Description says what the profile models.
	Description string `yaml:"description"`
	// Head is the time from the request to the response head; it is clamped
	// to the call's TTFT so that the head never comes after content.
	Head Dist `yaml:"head"`
	// TTFT is the time from the request to the first content delta
	// (thinking or text).
	TTFT Dist `yaml:"ttft"`
	// Gap is the ordinary spacing between consecutive content deltas.
	Gap Dist `yaml:"gap"`
	// OutputTokens is the drawn answer length in tokens (one delta each),
	// before the request's max_tokens caps it.
	OutputTokens Dist `yaml:"output_tokens"`
	// Pause describes structural pauses (thinking, tool use) mid-stream.
	Pause PauseSpec `yaml:"pause"`
	// Thinking describes a thinking block streamed before the text.
	Thinking ThinkingSpec `yaml:"thinking"`
	// PingInterval is how often an Anthropic stream sends a ping event while
	// no content flows; 0 sends only the first ping after message_start.
	PingInterval Duration `yaml:"ping_interval"`
	// KeepAlive is how often an OpenAI stream sends a ": keep-alive" comment
	// while no content flows; 0 sends none.
	KeepAlive Duration `yaml:"keep_alive"`
}

// PauseSpec is the second population of gaps: pauses of seconds inside a
// healthy stream.
type PauseSpec struct {
	// Probability is the fraction of calls that have pauses.
	Probability float64 `yaml:"probability"`
	// MinCount and MaxCount bound the number of pauses in such a call
	// (uniform, inclusive).
	MinCount int `yaml:"min_count"`
	// MaxCount is the largest number of pauses in one call.
	MaxCount int `yaml:"max_count"`
	// Length is the length of one pause, added to the ordinary gap it
	// replaces.
	Length Dist `yaml:"length"`
}

// ThinkingSpec describes thinking deltas streamed before the text.
type ThinkingSpec struct {
	// Probability is the fraction of calls that think first.
	Probability float64 `yaml:"probability"`
	// Tokens is the number of thinking tokens (one delta each).
	Tokens Dist `yaml:"tokens"`
}

// Dist is a distribution of durations or counts. Kind is one of:
//
//	constant   Value
//	uniform    Min .. Max
//	lognormal  P50 and P99 (the median and 99th percentile), optionally cut to Min .. Max
//
// Durations are written as Go durations ("640ms"); counts as numbers.
type Dist struct {
	// Kind is constant, uniform or lognormal.
	Kind string `yaml:"dist"`
	// Value is the constant's value.
	Value Quantity `yaml:"value"`
	// Min is the lower bound (uniform, and a floor for lognormal when > 0).
	Min Quantity `yaml:"min"`
	// Max is the upper bound (uniform, and a ceiling for lognormal when > 0).
	Max Quantity `yaml:"max"`
	// P50 is the lognormal's median.
	P50 Quantity `yaml:"p50"`
	// P99 is the lognormal's 99th percentile.
	P99 Quantity `yaml:"p99"`
}

// Quantity is a number, written in a profile file either as a plain number
// (a count) or as a Go duration string (stored in nanoseconds).
type Quantity float64

// UnmarshalYAML reads a number or a Go duration string.
func (q *Quantity) UnmarshalYAML(n *yaml.Node) error {
	var f float64
	if err := n.Decode(&f); err == nil {
		*q = Quantity(f)
		return nil
	}
	d, err := durationNode(n)
	if err != nil {
		return err
	}
	*q = Quantity(d)
	return nil
}

// durationNode reads a Go duration string from a YAML node.
func durationNode(n *yaml.Node) (time.Duration, error) {
	var s string
	if err := n.Decode(&s); err != nil {
		return 0, fmt.Errorf("line %d: want a number or a duration: %w", n.Line, err)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("line %d: %w", n.Line, err)
	}
	return d, nil
}

// Duration is a time.Duration written as a Go duration string in a profile file.
type Duration time.Duration

// UnmarshalYAML reads a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := durationNode(n)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// z99 is the standard normal quantile of 0.99.
const z99 = 2.3263478740408408

func (d Dist) validate(name string) error {
	switch d.Kind {
	case "constant":
		if d.Value < 0 {
			return fmt.Errorf("%s: value must not be negative", name)
		}
	case "uniform":
		if d.Min < 0 || d.Max < d.Min {
			return fmt.Errorf("%s: uniform needs 0 <= min <= max", name)
		}
	case "lognormal":
		if d.P50 <= 0 || d.P99 < d.P50 {
			return fmt.Errorf("%s: lognormal needs 0 < p50 <= p99", name)
		}
		if d.Max > 0 && d.Max < d.Min {
			return fmt.Errorf("%s: max must not be below min", name)
		}
	default:
		return fmt.Errorf("%s: dist %q: want constant, uniform or lognormal", name, d.Kind)
	}
	return nil
}

// draw samples one value.
func (d Dist) draw(rng *rand.Rand) float64 {
	switch d.Kind {
	case "constant":
		return float64(d.Value)
	case "uniform":
		return float64(d.Min) + rng.Float64()*float64(d.Max-d.Min)
	case "lognormal":
		mu := math.Log(float64(d.P50))
		sigma := math.Log(float64(d.P99)/float64(d.P50)) / z99
		v := math.Exp(mu + sigma*rng.NormFloat64())
		if d.Min > 0 && v < float64(d.Min) {
			v = float64(d.Min)
		}
		if d.Max > 0 && v > float64(d.Max) {
			v = float64(d.Max)
		}
		return v
	}
	return 0
}

func (d Dist) duration(rng *rand.Rand) time.Duration { return time.Duration(d.draw(rng)) }

func (d Dist) count(rng *rand.Rand) int { return int(math.Round(d.draw(rng))) }

// Validate reports the first field of p that cannot be drawn from.
func (p *Profile) Validate() error {
	if p.Name == "" {
		return errors.New("profile: name is required")
	}
	for _, c := range []struct {
		name string
		d    Dist
	}{{"head", p.Head}, {"ttft", p.TTFT}, {"gap", p.Gap}, {"output_tokens", p.OutputTokens}} {
		if err := c.d.validate(c.name); err != nil {
			return fmt.Errorf("profile %s: %w", p.Name, err)
		}
	}
	if p.Pause.Probability < 0 || p.Pause.Probability > 1 || p.Thinking.Probability < 0 || p.Thinking.Probability > 1 {
		return fmt.Errorf("profile %s: probabilities must be within 0..1", p.Name)
	}
	if p.Pause.Probability > 0 {
		if p.Pause.MinCount < 1 || p.Pause.MaxCount < p.Pause.MinCount || p.Pause.MaxCount > 1000 {
			return fmt.Errorf("profile %s: pause: need 1 <= min_count <= max_count <= 1000", p.Name)
		}
		if err := p.Pause.Length.validate("pause.length"); err != nil {
			return fmt.Errorf("profile %s: %w", p.Name, err)
		}
	}
	if p.Thinking.Probability > 0 {
		if err := p.Thinking.Tokens.validate("thinking.tokens"); err != nil {
			return fmt.Errorf("profile %s: %w", p.Name, err)
		}
	}
	if p.PingInterval < 0 || p.KeepAlive < 0 {
		return fmt.Errorf("profile %s: ping_interval and keep_alive must not be negative", p.Name)
	}
	return nil
}

func lognormal(p50, p99 time.Duration) Dist {
	return Dist{Kind: "lognormal", P50: Quantity(p50), P99: Quantity(p99)}
}

func uniform(lo, hi float64) Dist { return Dist{Kind: "uniform", Min: Quantity(lo), Max: Quantity(hi)} }

func constant(v float64) Dist { return Dist{Kind: "constant", Value: Quantity(v)} }

// Realistic is the support-chat path of design note 002.
func Realistic() *Profile {
	return &Profile{
		Name:         "realistic",
		Description:  "support-chat path: TTFT 640ms/2.1s, gaps 40ms/180ms (p50/p99), structural pauses of seconds in 18% of calls",
		Head:         Dist{Kind: "lognormal", P50: Quantity(250 * time.Millisecond), P99: Quantity(800 * time.Millisecond)},
		TTFT:         lognormal(640*time.Millisecond, 2100*time.Millisecond),
		Gap:          lognormal(40*time.Millisecond, 180*time.Millisecond),
		OutputTokens: Dist{Kind: "lognormal", P50: 80, P99: 250, Min: 1, Max: 4096},
		Pause: PauseSpec{
			Probability: 0.18, MinCount: 1, MaxCount: 3,
			Length: Dist{Kind: "lognormal", P50: Quantity(3 * time.Second), P99: Quantity(9 * time.Second), Max: Quantity(30 * time.Second)},
		},
		PingInterval: Duration(5 * time.Second),
	}
}

// Fast is a millisecond-scale profile for tests and benchmarks.
func Fast() *Profile {
	return &Profile{
		Name:         "fast",
		Description:  "millisecond scale for tests and benchmarks: TTFT ~2ms, gaps 0.2-1ms",
		Head:         constant(float64(time.Millisecond)),
		TTFT:         uniform(float64(time.Millisecond), float64(3*time.Millisecond)),
		Gap:          uniform(float64(200*time.Microsecond), float64(time.Millisecond)),
		OutputTokens: uniform(16, 48),
		PingInterval: Duration(10 * time.Millisecond),
	}
}

// Thinking streams a long thinking block before the text on every call.
func Thinking() *Profile {
	return &Profile{
		Name:         "thinking",
		Description:  "extended thinking: p50 300 thinking tokens before the text on every call",
		Head:         Dist{Kind: "lognormal", P50: Quantity(250 * time.Millisecond), P99: Quantity(800 * time.Millisecond)},
		TTFT:         lognormal(640*time.Millisecond, 2100*time.Millisecond),
		Gap:          lognormal(30*time.Millisecond, 120*time.Millisecond),
		OutputTokens: Dist{Kind: "lognormal", P50: 60, P99: 200, Min: 1, Max: 4096},
		Thinking:     ThinkingSpec{Probability: 1, Tokens: Dist{Kind: "lognormal", P50: 300, P99: 900, Min: 1, Max: 8192}},
		PingInterval: Duration(5 * time.Second),
	}
}

// zeroDelay is fast without any wait: every event is written at once. It
// measures what serving costs (BenchmarkServe) and is not a named profile.
func zeroDelay() *Profile {
	return &Profile{
		Name: "zero", Head: constant(0), TTFT: constant(0), Gap: constant(0),
		OutputTokens: constant(32),
	}
}

var profiles = map[string]func() *Profile{
	"realistic": Realistic,
	"fast":      Fast,
	"thinking":  Thinking,
}

// ProfileNames lists the named profiles, sorted.
func ProfileNames() []string {
	names := make([]string, 0, len(profiles))
	for n := range profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NamedProfile returns a fresh copy of the named profile.
func NamedProfile(name string) (*Profile, error) {
	f, ok := profiles[name]
	if !ok {
		return nil, fmt.Errorf("unknown profile %q (want one of %s)", name, strings.Join(ProfileNames(), ", "))
	}
	return f(), nil
}

// ParseProfile reads a profile from YAML or JSON (JSON is YAML). It is
// strict: an unknown key is an error that names it, and the profile must
// validate. Fields left out are zero (a dist must be given for head, ttft,
// gap and output_tokens).
func ParseProfile(data []byte) (*Profile, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var p Profile
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("parse profile: %w", err)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// LoadProfile reads a profile file (YAML or JSON) with ParseProfile.
func LoadProfile(path string) (*Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read profile: %w", err)
	}
	p, err := ParseProfile(data)
	if err != nil {
		return nil, fmt.Errorf("profile file %q: %w", path, err)
	}
	return p, nil
}

// Schedule is the drawn timing of one answer, a pure function of the
// profile, the random source and max_tokens: it can be drawn without
// sleeping. Offsets are from the moment the request was read.
type Schedule struct {
	// Head is when the response head is sent (never after TTFT).
	Head time.Duration
	// TTFT is when the first content delta is sent.
	TTFT time.Duration
	// Gaps[i] is the ordinary token gap before delta i+1 (len Tokens-1).
	Gaps []time.Duration
	// Pauses[i] is the structural pause added before delta i+1 (0 for most;
	// nil when the call has no pause).
	Pauses []time.Duration
	// Thinking is how many of the deltas are thinking deltas (they come first).
	Thinking int
	// Tokens is the number of content deltas, one token each (thinking included).
	Tokens int
	// MaxTokens tells that the answer was cut by the request's max_tokens.
	MaxTokens bool
}

// At returns the offset of content delta i (0-based) from the request.
func (s *Schedule) At(i int) time.Duration {
	t := s.TTFT
	for j := 0; j < i && j < len(s.Gaps); j++ {
		t += s.Gaps[j]
		if s.Pauses != nil {
			t += s.Pauses[j]
		}
	}
	return t
}

// Total returns the offset of the last content delta, which is when a
// complete answer ends.
func (s *Schedule) Total() time.Duration {
	if s.Tokens == 0 {
		return s.TTFT
	}
	return s.At(s.Tokens - 1)
}

// maxDrawnTokens bounds one drawn answer, whatever a profile's tail, so
// that a schedule always fits in memory.
const maxDrawnTokens = 1 << 20

// Schedule draws one answer's timing. maxTokens <= 0 means no cap.
//
// The draws are made in a fixed order so that the same rng state gives the
// same schedule whatever the max_tokens: the cap only cuts the tail. The
// pauses are drawn before the gaps, over the uncut length, and the gaps
// last, one per delta sent, so that cutting costs nothing and moves nothing.
func (p *Profile) Schedule(rng *rand.Rand, maxTokens int) Schedule {
	var s Schedule
	s.TTFT = p.TTFT.duration(rng)
	s.Head = min(p.Head.duration(rng), s.TTFT)
	text := min(max(p.OutputTokens.count(rng), 1), maxDrawnTokens)
	if p.Thinking.Probability > 0 && rng.Float64() < p.Thinking.Probability {
		s.Thinking = min(max(p.Thinking.Tokens.count(rng), 1), maxDrawnTokens)
	}
	full := s.Thinking + text
	n := full
	if maxTokens > 0 && n > maxTokens {
		n = maxTokens
		s.MaxTokens = true
		s.Thinking = min(s.Thinking, n)
	}
	s.Tokens = n
	type pause struct {
		at int
		d  time.Duration
	}
	var pauses []pause
	if p.Pause.Probability > 0 && rng.Float64() < p.Pause.Probability && full > 1 {
		count := p.Pause.MinCount + rng.IntN(p.Pause.MaxCount-p.Pause.MinCount+1)
		for range count {
			pauses = append(pauses, pause{at: rng.IntN(full - 1), d: p.Pause.Length.duration(rng)})
		}
	}
	if n > 1 {
		s.Gaps = make([]time.Duration, n-1)
		for i := range s.Gaps {
			s.Gaps[i] = p.Gap.duration(rng)
		}
		for _, ps := range pauses {
			if ps.at < n-1 {
				if s.Pauses == nil {
					s.Pauses = make([]time.Duration, n-1)
				}
				s.Pauses[ps.at] += ps.d
			}
		}
	}
	return s
}

// ScheduleFor is the schedule a Server with this profile and seed draws
// for request number index (0-based, in arrival order) with the request's
// max_tokens (0: the server's default of 4096). Tests use it to know, without
// sleeping, what the simulator will send.
func (p *Profile) ScheduleFor(seed int64, index uint64, maxTokens int) Schedule {
	if maxTokens <= 0 {
		maxTokens = defaultMaxTokens
	}
	return p.Schedule(scheduleRNG(seed, index), maxTokens)
}

// scheduleRNG is the random source of request index idx under seed: the
// schedule depends on (profile, seed, idx) alone.
func scheduleRNG(seed int64, idx uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), idx))
}

// faultRNG is a source independent of scheduleRNG, so that adding a fault
// rate does not change the schedules of the calls it spares.
func faultRNG(seed int64, idx uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed)^0x9e3779b97f4a7c15, idx))
}
