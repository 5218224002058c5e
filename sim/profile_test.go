package sim

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// quantile is the q-quantile of sorted xs (nearest rank).
func quantile(xs []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[max(i, 0)]
}

func within(t *testing.T, name string, got, want time.Duration, tol float64) {
	t.Helper()
	if d := math.Abs(float64(got-want)) / float64(want); d > tol {
		t.Errorf("%s = %v, want %v within %.0f%% (off by %.1f%%)", name, got, want, tol*100, d*100)
	}
}

// TestRealisticStatistics draws 20,000 calls' schedules without sleeping and
// checks them against the numbers the profile documents (design note 002).
// 20,000 TTFT draws put the sampling error of the p99 near 1.3%, well
// inside the 5% asked.
func TestRealisticStatistics(t *testing.T) {
	p := Realistic()
	const calls = 20000
	var ttft, gaps, pauses []time.Duration
	var withPause int
	var outTotal []time.Duration
	for i := range uint64(calls) {
		s := p.Schedule(scheduleRNG(42, i), 0)
		if s.Head > s.TTFT {
			t.Fatalf("call %d: head %v after ttft %v", i, s.Head, s.TTFT)
		}
		if len(s.Gaps) != s.Tokens-1 {
			t.Fatalf("call %d: %d gaps for %d tokens", i, len(s.Gaps), s.Tokens)
		}
		ttft = append(ttft, s.TTFT)
		gaps = append(gaps, s.Gaps...)
		has := false
		for _, d := range s.Pauses {
			if d > 0 {
				pauses = append(pauses, d)
				has = true
			}
		}
		if has {
			withPause++
		}
		outTotal = append(outTotal, s.Total())
	}
	slices.Sort(ttft)
	slices.Sort(gaps)
	slices.Sort(pauses)
	slices.Sort(outTotal)
	within(t, "ttft p50", quantile(ttft, 0.50), 640*time.Millisecond, 0.05)
	within(t, "ttft p99", quantile(ttft, 0.99), 2100*time.Millisecond, 0.05)
	within(t, "gap p50", quantile(gaps, 0.50), 40*time.Millisecond, 0.05)
	within(t, "gap p99", quantile(gaps, 0.99), 180*time.Millisecond, 0.05)

	// The second population: pauses of seconds in about 18% of calls,
	// well above the token gaps (p1 of pauses over 5x the gap p99).
	if frac := float64(withPause) / calls; frac < 0.15 || frac > 0.21 {
		t.Errorf("%.1f%% of calls have a structural pause, want about 18%%", frac*100)
	}
	if len(pauses) == 0 {
		t.Fatal("no structural pause drawn")
	}
	within(t, "pause p50", quantile(pauses, 0.50), 3*time.Second, 0.10)
	if lo := quantile(pauses, 0.01); lo < 5*quantile(gaps, 0.99) {
		t.Errorf("pause p1 %v is not five times the gap p99 %v: no second population", lo, quantile(gaps, 0.99))
	}
	// "A call streams a few seconds."
	if med := quantile(outTotal, 0.5); med < 2*time.Second || med > 8*time.Second {
		t.Errorf("median call length %v, want a few seconds", med)
	}
}

func TestThinkingProfile(t *testing.T) {
	p := Thinking()
	for i := range uint64(200) {
		s := p.Schedule(scheduleRNG(1, i), 0)
		if s.Thinking < 1 || s.Thinking >= s.Tokens {
			t.Fatalf("call %d: %d thinking tokens of %d: want thinking before text", i, s.Thinking, s.Tokens)
		}
	}
}

func TestScheduleDeterminism(t *testing.T) {
	for _, name := range ProfileNames() {
		p, err := NamedProfile(name)
		if err != nil {
			t.Fatal(err)
		}
		a := p.Schedule(scheduleRNG(7, 3), 0)
		b := p.Schedule(scheduleRNG(7, 3), 0)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: same seed and index gave different schedules", name)
		}
		if c := p.Schedule(scheduleRNG(8, 3), 0); reflect.DeepEqual(a, c) {
			t.Errorf("%s: seeds 7 and 8 gave the same schedule", name)
		}
		if c := p.Schedule(scheduleRNG(7, 4), 0); reflect.DeepEqual(a, c) {
			t.Errorf("%s: requests 3 and 4 gave the same schedule", name)
		}
	}
}

// TestScheduleMaxTokensCutsTail checks that max_tokens only cuts the tail:
// the deltas that are sent keep their times.
func TestScheduleMaxTokensCutsTail(t *testing.T) {
	p := Realistic()
	full := p.Schedule(scheduleRNG(5, 9), 0)
	if full.Tokens < 4 {
		t.Skipf("drawn answer too short (%d tokens)", full.Tokens)
	}
	cut := p.Schedule(scheduleRNG(5, 9), 3)
	if cut.Tokens != 3 || !cut.MaxTokens || full.MaxTokens {
		t.Fatalf("cut: %d tokens max=%t, full max=%t", cut.Tokens, cut.MaxTokens, full.MaxTokens)
	}
	for i := range 3 {
		if cut.At(i) != full.At(i) {
			t.Errorf("delta %d at %v when cut, %v in full", i, cut.At(i), full.At(i))
		}
	}
}

func TestParseProfile(t *testing.T) {
	yamlDoc := `
name: mine
head: {dist: constant, value: 100ms}
ttft: {dist: lognormal, p50: 300ms, p99: 1s}
gap: {dist: uniform, min: 10ms, max: 20ms}
output_tokens: {dist: uniform, min: 10, max: 20}
pause: {probability: 0.5, min_count: 1, max_count: 2, length: {dist: constant, value: 2s}}
ping_interval: 3s
keep_alive: 15s
`
	p, err := ParseProfile([]byte(yamlDoc))
	if err != nil {
		t.Fatalf("yaml: %v", err)
	}
	if p.TTFT.P50 != Quantity(300*time.Millisecond) || p.OutputTokens.Max != 20 || p.PingInterval != Duration(3*time.Second) || p.KeepAlive != Duration(15*time.Second) {
		t.Errorf("parsed %+v", p)
	}
	jsonDoc := `{"name":"j","head":{"dist":"constant","value":"1ms"},"ttft":{"dist":"constant","value":"5ms"},
		"gap":{"dist":"constant","value":"1ms"},"output_tokens":{"dist":"constant","value":4}}`
	if _, err := ParseProfile([]byte(jsonDoc)); err != nil {
		t.Errorf("json: %v", err)
	}

	for _, tc := range []struct {
		name, doc, want string
	}{
		// A misspelt key is named, not ignored.
		{"unknown key", yamlDoc + "ttft_p50: 1s\n", "ttft_p50"},
		{"unknown nested key", strings.Replace(yamlDoc, "p99: 1s", "p99: 1s, p95: 1s", 1), "p95"},
		{"bad dist", strings.Replace(yamlDoc, "dist: uniform, min: 10ms", "dist: gamma, min: 10ms", 1), "gamma"},
		{"bad duration", strings.Replace(yamlDoc, "300ms", "300 parsecs", 1), "300 parsecs"},
		{"p99 below p50", strings.Replace(yamlDoc, "p99: 1s", "p99: 1ms", 1), "ttft"},
		{"missing gap", strings.Replace(yamlDoc, "gap: {dist: uniform, min: 10ms, max: 20ms}\n", "", 1), "gap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseProfile([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want one naming %q", err, tc.want)
			}
		})
	}

	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte(yamlDoc), 0o600); err != nil {
		t.Fatal(err)
	}
	if p, err := LoadProfile(path); err != nil || p.Name != "mine" {
		t.Errorf("LoadProfile: %v %v", p, err)
	}
	if _, err := LoadProfile(path + ".missing"); err == nil || !strings.Contains(err.Error(), "p.yaml.missing") {
		t.Errorf("missing file: %v", err)
	}
}

func TestParseFaultRate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want FaultRate
		err  string
	}{
		{in: "http-429@0.05", want: FaultRate{FaultHTTP429, 0.05}},
		{in: "truncate@2%", want: FaultRate{FaultTruncate, 0.02}},
		{in: "refuse@1", want: FaultRate{FaultRefuse, 1}},
		{in: "http-429", err: "NAME@RATE"},
		{in: "bogus@0.1", err: `unknown fault "bogus"`},
		{in: "truncate@1.5", err: "within 0..1"},
		{in: "truncate@x", err: "rate"},
	} {
		got, err := ParseFaultRate(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %v %v, want %v", tc.in, got, err, tc.want)
		}
	}
}

// FuzzParseProfile: any input is refused with an error or gives a profile
// whose schedules can be drawn (no panic, no negative time, the cap held).
func FuzzParseProfile(f *testing.F) {
	f.Add([]byte(`{"name":"j","head":{"dist":"constant","value":"1ms"},"ttft":{"dist":"constant","value":"5ms"},"gap":{"dist":"constant","value":"1ms"},"output_tokens":{"dist":"constant","value":4}}`))
	f.Add([]byte("name: x\nhead: {dist: uniform, min: 0s, max: 1s}\nttft: {dist: lognormal, p50: 1s, p99: 2s}\ngap: {dist: constant, value: 0s}\noutput_tokens: {dist: lognormal, p50: 3, p99: 9}\npause: {probability: 1, min_count: 1, max_count: 3, length: {dist: constant, value: 1s}}\nthinking: {probability: 0.5, tokens: {dist: uniform, min: 0, max: 4}}\n"))
	f.Add([]byte("name: [\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseProfile(data)
		if err != nil {
			return
		}
		for i := range uint64(3) {
			s := p.ScheduleFor(1, i, 64)
			if s.Tokens < 1 || s.Tokens > 64 || s.TTFT < 0 || s.Head < 0 || s.Head > s.TTFT {
				t.Fatalf("schedule %+v", s)
			}
			for _, g := range s.Gaps {
				if g < 0 {
					t.Fatalf("negative gap in %+v", s)
				}
			}
		}
	})
}
