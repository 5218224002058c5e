// Package render writes a results file for people and machines: a
// terminal table, GitHub-flavoured markdown, indented JSON and a
// self-contained HTML report with SVG charts.
//
// Every renderer builds its whole output in memory and then writes it
// once, so a failed write is returned, never dropped, and a reader never
// sees half a report.
package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/tollgate-dev/tollgate/report"
)

// Output formats accepted by Write.
const (
	FormatTable    = "table"
	FormatMarkdown = "markdown"
	FormatJSON     = "json"
	FormatHTML     = "html"
)

// Formats lists the formats Write accepts, in the order a help text shows them.
var Formats = []string{FormatTable, FormatMarkdown, FormatJSON, FormatHTML}

// DefaultWidth is the terminal width the table format fits when
// Options.Width is 0.
const DefaultWidth = 100

// Options tune the human-readable formats.
type Options struct {
	// Color adds ANSI colour to the table format. The caller decides,
	// typically only when stdout is a terminal.
	Color bool
	// Width is the terminal width in columns the table format fits; 0
	// means DefaultWidth.
	Width int
}

// Write renders r to w in format (table, markdown, json or html) and
// returns the first error, write errors included.
func Write(w io.Writer, r *report.Results, format string, opt Options) error {
	if r == nil {
		return fmt.Errorf("render %s: no results", format)
	}
	if opt.Width <= 0 {
		opt.Width = DefaultWidth
	}
	var buf bytes.Buffer
	var err error
	switch format {
	case FormatTable, FormatMarkdown:
		// Markdown and HTML do not wrap to a terminal: width 0.
		width := 0
		if format == FormatTable {
			width = opt.Width
		}
		var d *doc
		if d, err = buildDoc(r, width, false); err != nil {
			break
		}
		if format == FormatTable {
			err = writeText(&buf, d, opt)
		} else {
			err = writeMarkdown(&buf, d)
		}
	case FormatJSON:
		err = writeJSON(&buf, r)
	case FormatHTML:
		var d *doc
		if d, err = buildDoc(r, 0, true); err != nil {
			break
		}
		err = writeHTML(&buf, d, r)
	default:
		return fmt.Errorf("render: unknown format %q (want one of %v)", format, Formats)
	}
	if err != nil {
		return fmt.Errorf("render %s: %w", format, err)
	}
	return flush(w, &buf, format)
}

// WriteRecommendation renders only a recommendation (its settings,
// evidence and warnings) as a terminal table or markdown.
func WriteRecommendation(w io.Writer, rec *report.Recommendation, format string) error {
	if rec == nil {
		return fmt.Errorf("render recommendation: no recommendation")
	}
	width := 0
	if format == FormatTable {
		width = DefaultWidth
	}
	d := &doc{}
	d.recommendation(rec, width)
	var buf bytes.Buffer
	var err error
	switch format {
	case FormatTable:
		err = writeText(&buf, d, Options{Width: DefaultWidth})
	case FormatMarkdown:
		err = writeMarkdown(&buf, d)
	default:
		return fmt.Errorf("render recommendation: unknown format %q (want table or markdown)", format)
	}
	if err != nil {
		return fmt.Errorf("render recommendation %s: %w", format, err)
	}
	return flush(w, &buf, "recommendation "+format)
}

// ValidFormat reports whether Write accepts format.
func ValidFormat(format string) bool { return slices.Contains(Formats, format) }

func flush(w io.Writer, buf *bytes.Buffer, what string) error {
	if _, err := buf.WriteTo(w); err != nil {
		return fmt.Errorf("write %s: %w", what, err)
	}
	return nil
}

func writeJSON(buf *bytes.Buffer, r *report.Results) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	buf.Write(b)
	buf.WriteByte('\n')
	return nil
}
