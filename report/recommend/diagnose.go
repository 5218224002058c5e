package recommend

import (
	"fmt"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/histo"
	"github.com/tollgate-dev/tollgate/report"
	"github.com/tollgate-dev/tollgate/report/routes"
)

// diagnose adds the warnings that the numbers alone do not show.
func (b *builder) diagnose() {
	b.pingMasking()
	b.intermediaries()
	b.mixedMode()
	b.censored()
	b.belowPercentile()
	b.tooFewCalls()
}

// pingMasking: bytes that keep flowing through a content stall (pings,
// keep-alive comments) keep a byte-level idle timeout happy, so only the
// content-level gap deadline can catch a stalled generation (002).
func (b *builder) pingMasking() {
	maxGap := b.m.h(report.PathStream, histo.MetricMaxGap)
	maxByte := b.m.h(report.PathStream, histo.MetricMaxByteGap)
	if maxGap == nil || maxByte == nil {
		return
	}
	g := time.Duration(maxGap.Max()) * time.Microsecond
	bg := time.Duration(maxByte.Max()) * time.Microsecond
	if g < time.Second || float64(g) < b.p.PingMaskRatio*float64(bg) {
		return
	}
	b.warnf("ping masking: content paused for up to %s (max_gap) while the wire never went quiet for more than %s (max_byte_gap): pings or keep-alives flow through content stalls, so timeouts.idle (%s) cannot catch a stalled generation — only stream.gap (%s) can; run the content-level clocks, not only the transport ones",
		human(g), human(bg), routes.FormatDuration(time.Duration(b.rec.Timeouts.Idle)), routes.FormatDuration(time.Duration(b.rec.Stream.Gap)))
}

// intermediaries: a proxy or load balancer between client and provider
// closes a connection that is silent for its idle limit. A healthy call is
// silent on the wire between its request and its response head (for a
// non-streaming call that is the whole generation) and across its largest
// byte gap; the longer of the two, per path, is compared with each limit.
// (The head metric starts when the connection is ready, so the request
// upload is included: the silence is overstated by at most that.)
func (b *builder) intermediaries() {
	for _, path := range []string{report.PathStream, report.PathBatch} {
		var silent time.Duration
		var what, bound string
		var boundD time.Duration
		if h := b.m.h(path, histo.MetricHead); h != nil {
			silent, what = time.Duration(h.Max())*time.Microsecond, "waiting for the response head"
			bound, boundD = SettingFirstToken, time.Duration(b.rec.Timeouts.FirstToken)
			if path == report.PathBatch {
				what = "waiting for the response head, which a non-streaming call sends only with the whole answer"
				bound, boundD = SettingHead, time.Duration(b.rec.Batch.Head)
			}
		}
		if h := b.m.h(path, histo.MetricMaxByteGap); h != nil {
			if g := time.Duration(h.Max()) * time.Microsecond; g > silent {
				silent, what = g, "between body reads (max_byte_gap)"
				bound, boundD = SettingIdle, time.Duration(b.rec.Timeouts.Idle)
			}
		}
		var cut []string
		for _, im := range b.p.Intermediaries {
			if silent > im.Idle {
				cut = append(cut, fmt.Sprintf("%s (default %s)", im.Setting, routes.FormatDuration(im.Idle)))
			}
		}
		if len(cut) == 0 {
			continue
		}
		b.warnf("intermediaries: healthy %s calls were silent on the wire for up to %s, %s; %s would cut them — raise it to at least %s (%s) on every hop between client and provider",
			path, human(silent), what, strings.Join(cut, ", "), routes.FormatDuration(boundD), bound)
	}
}

// mixedMode: first_token is one clock for both modes (ADR 0016), so on a
// route that serves non-streaming calls it must wait for their whole
// answer, and a stream that stalls before its first byte waits as long.
func (b *builder) mixedMode() {
	if !b.m.stream || !b.m.batch {
		return
	}
	ft := time.Duration(b.rec.Timeouts.FirstToken)
	streamFT := rule(b.p.FirstToken, b.m.h(report.PathStream, histo.MetricFirstByte), "")
	streamOnly := histo.RoundUpHuman(streamFT.value)
	var batchFB string
	if h := b.m.h(report.PathBatch, histo.MetricFirstByte); h != nil {
		batchFB = fmt.Sprintf(" (batch first_byte up to %s)", human(time.Duration(h.Max())*time.Microsecond))
	}
	var streamFB string
	if h := b.m.h(report.PathStream, histo.MetricFirstByte); h != nil {
		streamFB = fmt.Sprintf(" (stream first_byte p99 %s)", human(h.QuantileDuration(99)))
	}
	b.warnf("mixed-mode route: it serves streaming and non-streaming calls, and first_token is one clock for both (ADR 0016); non-streaming calls send their first body byte only with the whole answer%s, so first_token is %s where the streams alone need %s%s, and a stream that stalls before its first byte waits %s (stream.ttft %s still catches it if the gateway runs content clocks) — split the route: a streaming route with first_token %s and a non-streaming route with first_token %s",
		batchFB, routes.FormatDuration(ft), routes.FormatDuration(streamOnly), streamFB, routes.FormatDuration(ft),
		routes.FormatDuration(time.Duration(b.rec.Stream.TTFT)), routes.FormatDuration(streamOnly), routes.FormatDuration(ft))
}

// runClock pairs one of the run's clocks with what it censors.
type runClock struct {
	clock, flag string
	limit       time.Duration
	metric      string
	setting     string
}

// censored: a call the run's own clock cut is not in the histogram of the
// phase it died in, so the recommendation never saw its value. When such
// calls exist, the tail the setting was derived from stops at the clock.
func (b *builder) censored() {
	c := b.m.r.Run.Clocks
	for _, path := range []string{report.PathStream, report.PathBatch} {
		pp := b.m.r.Paths[path]
		if pp == nil {
			continue
		}
		head := runClock{"head", "--head", time.Duration(c.Head), histo.MetricHead, SettingFirstToken}
		if path == report.PathBatch {
			head = runClock{"head", "--head-batch", time.Duration(c.HeadBatch), histo.MetricHead, SettingHead}
		}
		for _, rc := range []runClock{
			{"connect", "--connect", time.Duration(c.Connect), histo.MetricConnect, SettingConnect},
			head,
			{"first_token", "--first-token", time.Duration(c.FirstToken), histo.MetricFirstByte, SettingFirstToken},
			{"idle", "--idle", time.Duration(c.Idle), histo.MetricMaxByteGap, SettingIdle},
			{"total", "--total", time.Duration(c.Total), histo.MetricTotal, SettingTotal},
			{"ttft", "--ttft", time.Duration(c.TTFT), histo.MetricTTFT, SettingTTFT},
			{"gap", "--gap", time.Duration(c.Gap), histo.MetricMaxGap, SettingGap},
		} {
			n := pp.Outcomes["timeout."+rc.clock]
			if rc.limit <= 0 || n == 0 {
				continue
			}
			b.warnf("censored tail: the run's own %s clock (%s %s) cut %d %s calls; they are not in the %s histogram, so %s was derived from a tail that stops at %s — if those calls were healthy, rerun with %s 0 (off) or higher to measure them",
				rc.clock, rc.flag, routes.FormatDuration(rc.limit), n, path, rc.metric, rc.setting, routes.FormatDuration(rc.limit), rc.flag)
		}
	}
}

// belowPercentile: a deadline should clear the tail it guards; one at or
// below the ClearPercentile of its own histogram kills more than that
// share of healthy calls by the definition of a percentile (002).
func (b *builder) belowPercentile() {
	for _, r := range b.rec.Rationale {
		h := b.judged[r.Setting]
		if h == nil || r.DetectsStallIn == 0 {
			continue
		}
		q := h.QuantileDuration(b.p.ClearPercentile)
		v := time.Duration(r.DetectsStallIn)
		if v > q {
			continue
		}
		b.warnf("%s %s sits at or below the %s of what it guards (%s): it would have killed %d of %d healthy calls — raise its multiple in the policy",
			r.Setting, r.Value, pctName(b.p.ClearPercentile), human(q), r.WouldHaveKilled, r.Of)
	}
}

// tooFewCalls: with none killed among N, the 95% bound on the false-kill
// rate is 3/N; below 3/TargetKillRate calls the data cannot support the
// target, whatever the deadline.
func (b *builder) tooFewCalls() {
	type evidence struct {
		killed, of int64
		upper      float64
	}
	var order []evidence
	settings := map[evidence][]string{}
	for _, r := range b.rec.Rationale {
		if r.Of == 0 || r.FalseKillUpper95 <= b.p.TargetKillRate {
			continue
		}
		e := evidence{r.WouldHaveKilled, r.Of, r.FalseKillUpper95}
		if settings[e] == nil {
			order = append(order, e)
		}
		settings[e] = append(settings[e], r.Setting)
	}
	if len(order) == 0 {
		return
	}
	var weak []string
	for _, e := range order {
		weak = append(weak, fmt.Sprintf("%s: %d/%d killed, up to %s", strings.Join(settings[e], ", "), e.killed, e.of, pct(e.upper)))
	}
	need := int64(3/b.p.TargetKillRate + 0.5)
	b.warnf("too few calls to support a %s false-kill rate at 95%% (%s); with none killed that takes at least %d calls — run more before trusting these numbers",
		pct(b.p.TargetKillRate), strings.Join(weak, "; "), need)
}

func pct(f float64) string {
	switch {
	case f >= 0.1:
		return fmt.Sprintf("%.0f%%", f*100)
	case f >= 0.01:
		return fmt.Sprintf("%.1f%%", f*100)
	}
	return fmt.Sprintf("%.2f%%", f*100)
}
