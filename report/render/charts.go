package render

import (
	"bytes"
	"fmt"
	"html"
	"image/color"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/tollgate-dev/tollgate/histo"
	"github.com/tollgate-dev/tollgate/report"
)

// Chart sizes in points; the page scales them to its width.
const (
	chartWidth  = 720
	chartHeight = 320
)

// Colours of the charts, chosen to stay apart for common colour blindness.
var (
	colBlue   = color.RGBA{0x1f, 0x77, 0xb4, 0xff}
	colOrange = color.RGBA{0xe6, 0x7e, 0x22, 0xff}
	colGreen  = color.RGBA{0x2c, 0xa0, 0x2c, 0xff}
	colRed    = color.RGBA{0xc0, 0x39, 0x2b, 0xff}
	colPurple = color.RGBA{0x8e, 0x44, 0xad, 0xff}
	colGray   = color.RGBA{0x7f, 0x7f, 0x7f, 0xff}
	colDark   = color.RGBA{0x33, 0x33, 0x33, 0xff}
)

// newPlot returns a plot whose text uses a sans-serif face. The SVG names
// the face and does not embed it: the browser uses its own copy or a
// fallback, so the report fetches no font and stays small.
func newPlot(title string) *plot.Plot {
	p := plot.New()
	sans := func(f *font.Font) { f.Variant = "Sans" }
	sans(&p.Title.TextStyle.Font)
	sans(&p.X.Label.TextStyle.Font)
	sans(&p.Y.Label.TextStyle.Font)
	sans(&p.X.Tick.Label.Font)
	sans(&p.Y.Tick.Label.Font)
	sans(&p.Legend.TextStyle.Font)
	p.Title.Text = title
	p.Title.Padding = vg.Points(8)
	p.Legend.Top = true
	p.Legend.Padding = vg.Points(2)
	return p
}

// svgOpen matches what vgsvg writes before and in the <svg> start tag up to
// its namespace declarations, which the HTML parser supplies itself.
var svgOpen = regexp.MustCompile(`(?s)^.*?<svg\s+width="[^"]*"\s+height="[^"]*"\s+(viewBox="[^"]*")\s+xmlns="[^"]*"\s+xmlns:xlink="[^"]*">`)

// renderSVG draws p as an <svg> element ready to inline in HTML: the XML
// prologue and namespace declarations gone, an id, and a <title> for
// screen readers and tests.
func renderSVG(p *plot.Plot, id, title string, w, h vg.Length) ([]byte, error) {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("chart %s: %w", id, err)
	}
	b := buf.Bytes()
	loc := svgOpen.FindSubmatchIndex(b)
	if loc == nil {
		return nil, fmt.Errorf("chart %s: unexpected SVG from vgsvg", id)
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, `<svg id="%s" class="chart" role="img" %s><title>%s</title>`,
		html.EscapeString(id), b[loc[2]:loc[3]], html.EscapeString(title))
	out.Write(b[loc[1]:])
	return out.Bytes(), nil
}

// rect is one filled rectangle in data coordinates.
type rect struct {
	x0, x1, y0, y1 float64
	fill           color.Color
}

// rects is a plotter of filled rectangles: histogram bars and bar-chart
// bars on log axes, where plotter.Histogram and plotter.BarChart would
// start their bars at 0.
type rects []rect

// Plot implements plot.Plotter.
func (rs rects) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, r := range rs {
		pts := []vg.Point{
			{X: trX(r.x0), Y: trY(r.y0)}, {X: trX(r.x1), Y: trY(r.y0)},
			{X: trX(r.x1), Y: trY(r.y1)}, {X: trX(r.x0), Y: trY(r.y1)},
		}
		c.FillPolygon(r.fill, c.ClipPolygonXY(pts))
	}
}

// DataRange implements plot.DataRanger.
func (rs rects) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, ymin = math.Inf(1), math.Inf(1)
	xmax, ymax = math.Inf(-1), math.Inf(-1)
	for _, r := range rs {
		xmin, xmax = math.Min(xmin, r.x0), math.Max(xmax, r.x1)
		ymin, ymax = math.Min(ymin, r.y0), math.Max(ymax, r.y1)
	}
	return xmin, xmax, ymin, ymax
}

// swatch is a legend entry drawn as a filled square.
type swatch struct{ fill color.Color }

// Thumbnail implements plot.Thumbnailer.
func (s swatch) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(s.fill, []vg.Point{
		{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y},
		{X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y},
	})
}

// durationTicks labels a millisecond log axis at 1, 10, 100 ... with
// units (1ms, 10ms, 1s), and marks 2 and 5 of each decade.
type durationTicks struct{}

// Ticks implements plot.Ticker. When the range holds fewer than two
// decades, 2 and 5 are labelled too, so that an axis always reads.
func (durationTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	labelled := 0
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			if v := m * math.Pow(10, e); v >= lo && v <= hi {
				ticks = append(ticks, plot.Tick{Value: v})
				if m == 1 {
					labelled++
				}
			}
		}
	}
	for i, t := range ticks {
		m := t.Value / math.Pow(10, math.Floor(math.Log10(t.Value)+1e-9))
		if labelled < 2 || math.Abs(m-1) < 1e-6 {
			ticks[i].Label = tickLabel(t.Value)
		}
	}
	return ticks
}

// tickLabel labels a tick at ms milliseconds in one unit per range (500µs,
// 20ms, 100s), so a log axis reads 1s, 10s, 100s rather than 1m40s.
func tickLabel(ms float64) string {
	switch {
	case ms < 1:
		return strconv.FormatFloat(ms*1000, 'g', 4, 64) + "µs"
	case ms < 1000:
		return strconv.FormatFloat(ms, 'g', 4, 64) + "ms"
	}
	return strconv.FormatFloat(ms/1000, 'g', 6, 64) + "s"
}

// countTicks labels a count log axis at 1, 10, 100 ...
type countTicks struct{}

// Ticks implements plot.Ticker.
func (countTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Max(0, math.Floor(math.Log10(lo))); e <= math.Ceil(math.Log10(hi)); e++ {
		v := math.Pow(10, e)
		if v >= lo && v <= hi {
			ticks = append(ticks, plot.Tick{Value: v, Label: fmtNum(v)})
		}
	}
	return ticks
}

// ninesTicks labels the "nines" axis, where x = -log10(1 - p/100): 50,
// 90, 99, 99.9 ... sit at equal steps.
type ninesTicks struct{}

// Ticks implements plot.Ticker.
func (ninesTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := []plot.Tick{{Value: 0, Label: "0"}, {Value: math.Log10(2), Label: "50"}}
	label := "9"
	for x := 1.0; x <= hi+1e-9; x++ {
		if x == 1 {
			label = "90"
		} else if x == 2 {
			label = "99"
		} else {
			label += "9"
			if x == 3 {
				label = "99.9"
			}
		}
		ticks = append(ticks, plot.Tick{Value: x, Label: label})
	}
	return ticks
}

// vline is a vertical line at x across the plot with a legend entry.
func vline(p *plot.Plot, x, y0, y1 float64, c color.Color, dashed bool, legend string) error {
	l, err := plotter.NewLine(plotter.XYs{{X: x, Y: y0}, {X: x, Y: y1}})
	if err != nil {
		return fmt.Errorf("line at %g: %w", x, err)
	}
	l.Color = c
	l.Width = vg.Points(2)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(4)}
	}
	p.Add(l)
	p.Legend.Add(legend, l)
	return nil
}

// minSpectrumCount is the fewest values worth a percentile spectrum: below
// it the line would not reach p90.
const minSpectrumCount = 10

// spectrumMetrics are drawn on a path's percentile spectrum.
var spectrumMetrics = []struct {
	name string
	col  color.Color
}{{histo.MetricTTFT, colBlue}, {histo.MetricTotal, colOrange}, {histo.MetricHead, colGreen}}

// spectrumDeadline is the recommended deadline that bounds metric on
// path, 0 when none does.
func spectrumDeadline(path, metric string, rec *report.Recommendation) time.Duration {
	switch {
	case rec == nil:
		return 0
	case metric == histo.MetricTTFT && path == report.PathStream:
		return time.Duration(rec.Stream.TTFT)
	case metric == histo.MetricTotal:
		return time.Duration(rec.Timeouts.Total)
	case metric == histo.MetricHead && path == report.PathBatch:
		return time.Duration(rec.Batch.Head)
	}
	return 0
}

// legendHeadroom is the top of a log axis from lo whose data reach hi,
// with room above hi for a legend of n entries, so that no line crosses it.
func legendHeadroom(lo, hi float64, n int) float64 {
	// A legend entry is about 14pt of the roughly 250pt a chart's data area has.
	frac := math.Min(0.6, float64(n*14+10)/250)
	decades := math.Log10(hi/lo) / (1 - frac)
	return lo * math.Pow(10, decades)
}

// maxDeadlineReach is how far above the slowest line a recommended deadline
// is still drawn on a spectrum: further up it would squash the lines.
const maxDeadlineReach = 20

// spectrumChart draws latency by percentile of ttft, total and head on a
// log latency axis against a "nines" axis, so the tail gets as much room
// as the median, and the recommended deadline of each as a dashed line in
// its colour, so the headroom it leaves shows.
func spectrumChart(path string, ms map[string]*report.Metric, rec *report.Recommendation) ([]byte, bool, error) {
	p := newPlot(path + ": latency by percentile")
	p.X.Label.Text = "percentile"
	p.Y.Label.Text = "latency"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = durationTicks{}
	p.X.Tick.Marker = ninesTicks{}
	p.Legend.Left = true
	type deadline struct {
		metric string
		d      time.Duration
		col    color.Color
	}
	var deadlines []deadline
	drawn, xmax, ymin, ymax := false, 0.0, math.Inf(1), 0.0
	for _, sm := range spectrumMetrics {
		h := metricHistogram(ms[sm.name])
		if h == nil || h.Count() < minSpectrumCount {
			continue
		}
		// The largest percentile a histogram resolves is 1 - 1/count;
		// beyond it every point would be the maximum.
		top := math.Log10(float64(h.Count()))
		var xys plotter.XYs
		const steps = 200
		for i := 0; i <= steps; i++ {
			x := top * float64(i) / steps
			pct := 100 * (1 - math.Pow(10, -x))
			xys = append(xys, plotter.XY{X: x, Y: usToMS(h.Quantile(pct))})
		}
		xys = append(xys, plotter.XY{X: top, Y: usToMS(h.Max())})
		ymax = math.Max(ymax, usToMS(h.Max()))
		xmax = math.Max(xmax, top)
		ymin = math.Min(ymin, xys[0].Y)
		if d := spectrumDeadline(path, sm.name, rec); d > 0 {
			deadlines = append(deadlines, deadline{sm.name, d, sm.col})
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, false, fmt.Errorf("spectrum %s: %w", sm.name, err)
		}
		l.Color = sm.col
		l.Width = vg.Points(2)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s (n=%d)", sm.name, h.Count()), l)
		drawn = true
	}
	if !drawn {
		return nil, false, nil
	}
	top := ymax
	for _, dl := range deadlines {
		ms := float64(dl.d) / float64(time.Millisecond)
		if ms > ymax*maxDeadlineReach {
			continue
		}
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: ms}, {X: xmax, Y: ms}})
		if err != nil {
			return nil, false, fmt.Errorf("spectrum %s deadline: %w", dl.metric, err)
		}
		l.Color = dl.col
		l.Width = vg.Points(1.5)
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(4)}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s deadline %s", dl.metric, dl.d), l)
		top = math.Max(top, ms)
	}
	p.X.Min = 0
	p.Y.Min = ymin / 1.2
	p.Y.Max = legendHeadroom(p.Y.Min, top, len(spectrumMetrics)+len(deadlines))
	b, err := renderSVG(p, "chart-spectrum-"+path, path+": latency by percentile (ttft, total, head)", chartWidth, chartHeight)
	return b, err == nil, err
}

// usToMS converts µs to ms, never below 1 µs so a log axis can hold it.
func usToMS(us int64) float64 { return float64(max(us, 1)) / 1000 }

// metricHistogram decodes m's histogram, or nil when there is none.
func metricHistogram(m *report.Metric) *histo.Histogram {
	if m == nil || m.Count == 0 {
		return nil
	}
	h, err := m.Histogram()
	if err != nil || h.Count() == 0 {
		return nil
	}
	return h
}

// chartBars is how many log-scale bars a histogram chart has.
const chartBars = 48

// gapChart draws a gap histogram (content gaps or byte gaps) on log axes
// with the recommended deadline as a vertical line, and where the gaps
// fall into two populations, each in its own colour with the split
// between them drawn. xlo and xhi (ms) are shared by a path's gap charts so
// that ping masking shows as byte gaps that stop where content gaps go on.
func gapChart(path, name string, h *histo.Histogram, rec *report.Recommendation, xlo, xhi float64) ([]byte, error) {
	what := map[string]string{
		histo.MetricGap:     "gaps between content deltas",
		histo.MetricByteGap: "gaps between body reads (pings included)",
	}[name]
	title := fmt.Sprintf("%s %s: %s", path, name, what)
	p := newPlot(title)
	p.X.Label.Text = "gap"
	p.Y.Label.Text = "count"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = durationTicks{}, countTicks{}

	split, hasSplit := histo.SplitLog(h)
	var bars rects
	var peak int64
	for _, b := range h.Bars(chartBars) {
		peak = max(peak, b.Count)
		if b.Count == 0 {
			continue
		}
		fill := color.Color(colBlue)
		if hasSplit && b.Lo > split.At {
			fill = colOrange
		}
		// A bar of zeros has no width on a log axis: it is drawn from 1 µs
		// (where usToMS puts 0) to 1.5 µs.
		x0, x1 := usToMS(b.Lo), usToMS(b.Hi+1)
		if x1 <= x0 {
			x1 = x0 * 1.5
		}
		bars = append(bars, rect{x0: x0, x1: x1, y0: 0.5, y1: float64(b.Count), fill: fill})
	}
	p.Add(bars)
	// A decade of headroom keeps the legend clear of the bars; the
	// vertical lines stop below it.
	ytop, ylines := float64(peak)*10, float64(peak)*2
	if hasSplit {
		p.Legend.Add(populationText(split.Lower), swatch{colBlue})
		p.Legend.Add(populationText(split.Upper), swatch{colOrange})
		if err := vline(p, usToMS(split.At), 0.5, ylines, colDark, true, "split at "+fmtMicros(split.At)); err != nil {
			return nil, err
		}
	} else {
		p.Legend.Add(fmt.Sprintf("%d %s", h.Count(), name), swatch{colBlue})
	}
	if label, d := deadlineFor(name, rec); d > 0 {
		if err := vline(p, float64(d)/float64(time.Millisecond), 0.5, ylines, colRed, false, fmt.Sprintf("%s %s", label, d)); err != nil {
			return nil, err
		}
	}
	p.X.Min, p.X.Max = xlo, xhi
	p.Y.Min, p.Y.Max = 0.5, ytop
	return renderSVG(p, "chart-"+name+"-"+path, title, chartWidth, chartHeight)
}

// gapRange is the x range (ms) shared by a path's gap charts: every
// observed gap and the deadlines drawn on them.
func gapRange(hs []*histo.Histogram, rec *report.Recommendation) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, h := range hs {
		lo = math.Min(lo, usToMS(h.Min()))
		hi = math.Max(hi, usToMS(h.Max()+1)*1.5)
	}
	for _, m := range []string{histo.MetricGap, histo.MetricByteGap} {
		if _, d := deadlineFor(m, rec); d > 0 {
			hi = math.Max(hi, 1.5*float64(d)/float64(time.Millisecond))
		}
	}
	return lo / 1.5, hi
}

// outcomeColor colours an outcome class: ok green, timeouts orange, HTTP
// errors red, stream errors purple, the rest grey.
func outcomeColor(class string) color.Color {
	switch {
	case class == "ok":
		return colGreen
	case strings.HasPrefix(class, "timeout."):
		return colOrange
	case strings.HasPrefix(class, "http."):
		return colRed
	case strings.HasPrefix(class, "stream_error."):
		return colPurple
	}
	return colGray
}

// outcomeChart draws one horizontal bar per outcome and phase on a log
// count axis, so that a handful of timeouts still shows beside thousands
// of ok calls.
func outcomeChart(path string, p0 *report.Path) ([]byte, bool, error) {
	rows := outcomeRows(p0)
	if len(rows) == 0 {
		return nil, false, nil
	}
	title := path + ": outcomes by phase"
	p := newPlot(title)
	p.X.Label.Text = "calls"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = countTicks{}
	p.Legend.Top = false
	var bars rects
	var names []string
	var peak float64
	// Rows are listed top-down; NominalY counts from the bottom.
	for i, r := range rows {
		y := float64(len(rows) - 1 - i)
		n := float64(r.n)
		peak = math.Max(peak, n)
		label := r.class
		if r.phase != "" {
			label += " · " + r.phase
		}
		names = append([]string{fmt.Sprintf("%s (%d)", label, r.n)}, names...)
		bars = append(bars, rect{x0: 0.5, x1: math.Max(n, 0.5), y0: y - 0.35, y1: y + 0.35, fill: outcomeColor(r.class)})
	}
	p.Add(bars)
	p.NominalY(names...)
	p.X.Min, p.X.Max = 0.5, math.Max(peak, 1)*2
	p.Y.Min, p.Y.Max = -0.6, float64(len(rows))-0.4
	hgt := vg.Points(float64(90 + 28*len(rows)))
	b, err := renderSVG(p, "chart-outcomes-"+path, title, chartWidth, hgt)
	return b, err == nil, err
}
