package histo

import (
	"math"
	"time"
)

// UpperBound95 is a one-sided 95% upper confidence bound on a rate of
// which killed events were seen in n trials (such as healthy calls a
// deadline would have killed). With none seen it is the rule of three,
// 3/n (the exact bound is 1 - 0.05^(1/n), which 3/n approximates from
// above). Otherwise it is the exact Clopper–Pearson bound: the rate p at
// which seeing killed or fewer in n trials has probability 5%. It is 1
// when n <= 0 (nothing observed bounds nothing) or killed >= n.
func UpperBound95(killed, n int64) float64 {
	switch {
	case n <= 0 || killed >= n:
		return 1
	case killed <= 0:
		return math.Min(1, 3/float64(n))
	}
	// P(X <= k | n, p) = I_{1-p}(n-k, k+1) falls as p grows; bisect for the
	// p where it crosses 0.05. 60 halvings reach float64 resolution.
	k, nf := float64(killed), float64(n)
	lo, hi := k/nf, 1.0
	for range 60 {
		mid := (lo + hi) / 2
		if regIncBeta(nf-k, k+1, 1-mid) > 0.05 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// regIncBeta is the regularized incomplete beta function I_x(a, b), by the
// continued fraction of Numerical Recipes (§6.4), with the symmetry
// I_x(a, b) = 1 - I_{1-x}(b, a) where the fraction converges slowly.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

// betaCF evaluates the continued fraction of the incomplete beta function
// by the modified Lentz method.
func betaCF(a, b, x float64) float64 {
	const (
		maxIter = 10_000
		eps     = 1e-15
	)
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, nonZero(1-qab*x/qap)
	d = 1 / d
	h := d
	// step applies one term aa of the fraction to the Lentz state and
	// returns the factor it multiplies the result by.
	step := func(aa float64) float64 {
		d = 1 / nonZero(1+aa*d)
		c = nonZero(1 + aa/c)
		return d * c
	}
	for m := 1; m <= maxIter; m++ {
		mf := float64(m)
		m2 := 2 * mf
		h *= step(mf * (b - mf) * x / ((qam + m2) * (a + m2)))
		del := step(-(a + mf) * (qab + mf) * x / ((a + m2) * (qap + m2)))
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// nonZero keeps Lentz's method away from dividing by zero.
func nonZero(v float64) float64 {
	const tiny = 1e-300
	if math.Abs(v) < tiny {
		return tiny
	}
	return v
}

// humanSteps are the values RoundUpHuman rounds up to, ascending.
var humanSteps = func() []time.Duration {
	var s []time.Duration
	// Below 10 ms: the 1-2-5 series, from 1 µs.
	for unit := time.Microsecond; unit < 10*time.Millisecond; unit *= 10 {
		s = append(s, unit, 2*unit, 5*unit)
	}
	ms := []time.Duration{10, 20, 50, 100, 200, 250, 500}
	for _, v := range ms {
		s = append(s, v*time.Millisecond)
	}
	secs := []time.Duration{1, 2, 3, 5, 10, 15, 20, 30, 45, 60, 90}
	for _, v := range secs {
		s = append(s, v*time.Second)
	}
	mins := []time.Duration{2, 3, 5, 10, 15, 20, 30, 45, 60, 90}
	for _, v := range mins {
		s = append(s, v*time.Minute)
	}
	hours := []time.Duration{2, 3, 4, 6, 8, 12, 24}
	for _, v := range hours {
		s = append(s, v*time.Hour)
	}
	return s
}()

// RoundUpHuman rounds d up to the nearest value a person would write in a
// config file: the 1-2-5 series below 10 ms (1 µs, 2 µs, 5 µs, 10 µs, ...
// 5 ms); then 10, 20, 50, 100, 200, 250, 500 ms; 1, 2, 3, 5, 10, 15, 20,
// 30, 45, 60, 90 s; 2, 3, 5, 10, 15, 20, 30, 45, 60, 90 m; 2, 3, 4, 6, 8,
// 12, 24 h; and beyond a day, whole days. A value already on the ladder is
// returned unchanged; d <= 0 returns 0. The rounding is exact: 5 s stays
// 5 s, and 5.25 s (2.5 x 2.1 s) becomes 10 s.
func RoundUpHuman(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	for _, s := range humanSteps {
		if d <= s {
			return s
		}
	}
	const day = 24 * time.Hour
	if d > math.MaxInt64-day {
		return d // no whole day above d is representable
	}
	return (d + day - 1) / day * day
}
