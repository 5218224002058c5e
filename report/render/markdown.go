package render

import (
	"bytes"
	"fmt"
	"strings"
)

// writeMarkdown draws d as GitHub-flavoured markdown, as a CI step summary
// shows it. Tables are written directly rather than with tablewriter,
// whose markdown renderer wraps long cells into extra rows and leaves "|"
// unescaped.
func writeMarkdown(buf *bytes.Buffer, d *doc) error {
	for i, b := range d.blocks {
		if i > 0 {
			buf.WriteByte('\n')
		}
		switch b := b.(type) {
		case heading:
			fmt.Fprintf(buf, "%s %s\n", strings.Repeat("#", b.level+1), mdEscape(b.text))
		case para:
			switch b.tone {
			case notice:
				fmt.Fprintf(buf, "> [!NOTE]\n> %s\n", mdEscape(b.text))
			case alarm:
				fmt.Fprintf(buf, "> [!WARNING]\n> %s\n", mdEscape(b.text))
			default:
				fmt.Fprintf(buf, "%s\n", mdEscape(b.text))
			}
		case list:
			if b.tone == alarm {
				buf.WriteString("**Warnings**\n\n")
			}
			for _, it := range b.items {
				fmt.Fprintf(buf, "- %s\n", mdEscape(it))
			}
		case table:
			mdTable(buf, b)
		case pre:
			fmt.Fprintf(buf, "%s\n\n```text\n", mdEscape(b.title))
			for _, l := range b.lines {
				fmt.Fprintln(buf, l)
			}
			buf.WriteString("```\n")
		}
	}
	return nil
}

func mdTable(buf *bytes.Buffer, t table) {
	row := func(cells []string) {
		buf.WriteByte('|')
		for _, c := range cells {
			fmt.Fprintf(buf, " %s |", mdCell(c))
		}
		buf.WriteByte('\n')
	}
	row(t.header)
	buf.WriteByte('|')
	for i := range t.header {
		if t.right[i] {
			buf.WriteString(" ---: |")
		} else {
			buf.WriteString(" --- |")
		}
	}
	buf.WriteByte('\n')
	for _, r := range t.rows {
		row(r)
	}
}

// mdCell escapes a table cell: "|" would end it and a newline the row.
func mdCell(s string) string {
	s = strings.ReplaceAll(mdEscape(s), "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}

// mdEscaper escapes the characters that would turn plain text into markup
// in the places this report puts text ("_" is left alone: GitHub does not
// emphasise inside words such as first_byte).
var mdEscaper = strings.NewReplacer(`\`, `\\`, "*", `\*`, "`", "\\`", "<", "&lt;", ">", "&gt;")

// mdEscape escapes s for use as markdown text.
func mdEscape(s string) string { return mdEscaper.Replace(s) }
