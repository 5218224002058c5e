package render

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// ANSI escapes used when Options.Color is set.
const (
	ansiBold   = "\x1b[1m"
	ansiYellow = "\x1b[33m"
	ansiRed    = "\x1b[31m"
	ansiReset  = "\x1b[0m"
)

// writeText draws d for a terminal: tables with box-drawing borders,
// paragraphs wrapped to opt.Width.
func writeText(buf *bytes.Buffer, d *doc, opt Options) error {
	paint := func(code, s string) string {
		if !opt.Color {
			return s
		}
		return code + s + ansiReset
	}
	toneCode := map[tone]string{notice: ansiBold + ansiYellow, alarm: ansiBold + ansiRed}
	for i, b := range d.blocks {
		if i > 0 {
			switch b.(type) {
			case heading, pre:
				buf.WriteByte('\n')
			}
		}
		switch b := b.(type) {
		case heading:
			line := b.text
			if b.level == 1 {
				line = strings.ToUpper(line[:1]) + line[1:]
			}
			fmt.Fprintln(buf, paint(ansiBold, line))
			if b.level == 1 {
				fmt.Fprintln(buf, strings.Repeat("=", min(utf8.RuneCountInString(line), opt.Width)))
			}
		case para:
			for _, l := range wrapWords(b.text, opt.Width) {
				fmt.Fprintln(buf, paint(toneCode[b.tone], l))
			}
		case list:
			bullet := "- "
			if b.tone == alarm {
				bullet = "! "
			}
			for _, it := range b.items {
				for j, l := range wrapWords(it, opt.Width-2) {
					lead := bullet
					if j > 0 {
						lead = "  "
					}
					fmt.Fprintln(buf, paint(toneCode[b.tone], lead+l))
				}
			}
		case table:
			if err := textTable(buf, b); err != nil {
				return err
			}
		case pre:
			fmt.Fprintln(buf, b.title)
			for _, l := range b.lines {
				fmt.Fprintln(buf, "  "+l)
			}
		}
	}
	return nil
}

// textTable draws t with tablewriter, wrapping t.wrap so that the table
// fits t.width columns.
func textTable(buf *bytes.Buffer, t table) error {
	align := make(tw.Alignment, len(t.header))
	for i := range align {
		align[i] = tw.AlignLeft
		if t.right[i] {
			align[i] = tw.AlignRight
		}
	}
	opts := []tablewriter.Option{
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleLight)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAutoWrap(tw.WrapNormal),
	}
	if t.wrap >= 0 {
		opts = append(opts, tablewriter.WithColumnWidths(tw.NewMapper[int, int]().Set(t.wrap, max(t.spare(), minWrapWidth))))
	}
	tb := tablewriter.NewTable(buf, opts...)
	tb.Header(t.header)
	if err := tb.Bulk(t.rows); err != nil {
		return fmt.Errorf("table %v: %w", t.header, err)
	}
	if err := tb.Render(); err != nil {
		return fmt.Errorf("table %v: %w", t.header, err)
	}
	return nil
}

// minWrapWidth is the narrowest a wrapping column gets, however narrow
// the terminal.
const minWrapWidth = 16

// spare is the width left for the wrapping column once every other column
// has its widest cell, borders and padding included; it may be negative.
func (t table) spare() int {
	used := 1 + 3*len(t.header) // "│" then " cell │" per column
	for c := range t.header {
		if c == t.wrap {
			continue
		}
		w := utf8.RuneCountInString(t.header[c])
		for _, r := range t.rows {
			w = max(w, utf8.RuneCountInString(r[c]))
		}
		used += w
	}
	return t.width - used
}

// wrapWords breaks s into lines of at most width runes at spaces.
func wrapWords(s string, width int) []string {
	var lines []string
	var line strings.Builder
	for _, w := range strings.Fields(s) {
		if line.Len() > 0 && utf8.RuneCountInString(line.String())+1+utf8.RuneCountInString(w) > width {
			lines = append(lines, line.String())
			line.Reset()
		}
		if line.Len() > 0 {
			line.WriteByte(' ')
		}
		line.WriteString(w)
	}
	if line.Len() > 0 {
		lines = append(lines, line.String())
	}
	return lines
}
