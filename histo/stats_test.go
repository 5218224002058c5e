package histo

import (
	"math"
	"testing"
	"time"
)

func TestUpperBound95(t *testing.T) {
	cases := []struct {
		killed, n int64
		want      float64
		why       string
	}{
		{0, 100, 0.03, "rule of three"},
		{0, 3000, 0.001, "rule of three on a large run"},
		{0, 2, 1, "rule of three capped at 1"},
		{0, 0, 1, "no observations bound nothing"},
		{5, 5, 1, "every one killed"},
		// Exact one-sided Clopper–Pearson values, checked against a direct
		// sum of binomial probabilities.
		{1, 100, 0.046560, "one of a hundred"},
		{5, 100, 0.102253, "five of a hundred"},
		{1, 10, 0.394163, "small sample"},
		{9, 10, 0.994884, "nearly all"},
		{10, 1000, 0.016903, "1% observed"},
		{50, 1000, 0.062863, "5% observed"},
		{3, 20000, 0.000388, "rare kills on a large run"},
	}
	for _, c := range cases {
		got := UpperBound95(c.killed, c.n)
		if math.Abs(got-c.want) > 5e-6 {
			t.Errorf("UpperBound95(%d, %d) = %.6f, want %.6f (%s)", c.killed, c.n, got, c.want, c.why)
		}
		if c.n > 0 && got < float64(c.killed)/float64(c.n) {
			t.Errorf("UpperBound95(%d, %d) = %v is below the observed rate", c.killed, c.n, got)
		}
	}
}

func TestRoundUpHuman(t *testing.T) {
	cases := []struct {
		in, want time.Duration
		why      string
	}{
		{0, 0, "zero stays zero"},
		{-time.Second, 0, "negative is zero"},
		{1, time.Microsecond, "a nanosecond rounds to the smallest step"},
		{3 * time.Millisecond, 5 * time.Millisecond, "1-2-5 below 10 ms"},
		{10 * time.Millisecond, 10 * time.Millisecond, "on the ladder: unchanged"},
		{11 * time.Millisecond, 20 * time.Millisecond, "just above a step"},
		{201 * time.Millisecond, 250 * time.Millisecond, "250 ms is a step"},
		{251 * time.Millisecond, 500 * time.Millisecond, ""},
		{501 * time.Millisecond, time.Second, ""},
		{4200 * time.Millisecond, 5 * time.Second, "2 x the article's p99 of 2.1 s"},
		{5 * time.Second, 5 * time.Second, "5 s exactly"},
		{5250 * time.Millisecond, 10 * time.Second, "2.5 x 2.1 s is 5.25 s: the next step is 10 s"},
		{31 * time.Second, 45 * time.Second, ""},
		{61 * time.Second, 90 * time.Second, ""},
		{77500 * time.Millisecond, 90 * time.Second, "3 x ADR-0036's 25,833 ms"},
		{91 * time.Second, 2 * time.Minute, "after 90 s come minutes"},
		{4 * time.Minute, 5 * time.Minute, ""},
		{46 * time.Minute, time.Hour, ""},
		{61 * time.Minute, 90 * time.Minute, ""},
		{5*time.Hour + 30*time.Minute, 6 * time.Hour, ""},
		{13 * time.Hour, 24 * time.Hour, ""},
		{25 * time.Hour, 48 * time.Hour, "beyond a day: whole days"},
		{math.MaxInt64, math.MaxInt64, "no overflow"},
	}
	for _, c := range cases {
		if got := RoundUpHuman(c.in); got != c.want {
			t.Errorf("RoundUpHuman(%v) = %v, want %v %s", c.in, got, c.want, c.why)
		}
	}
}

func TestRoundUpHumanIsMonotoneAndNotBelow(t *testing.T) {
	prev := time.Duration(0)
	for d := time.Duration(0); d < 3*time.Hour; d = d*11/10 + time.Microsecond {
		got := RoundUpHuman(d)
		if got < d || got < prev {
			t.Fatalf("RoundUpHuman(%v) = %v (previous %v)", d, got, prev)
		}
		prev = got
	}
}
