package render

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// externalRef matches a reference that would make a browser fetch
// something: any scheme-qualified or protocol-relative URL. Fragment
// references (#id) and data: URLs stay inside the file.
var externalRef = regexp.MustCompile(`(?i)^\s*([a-z][a-z0-9+.-]*:|//)`)

// cssRef finds url(...) and @import in CSS text.
var cssRef = regexp.MustCompile(`(?i)url\(\s*['"]?([^'")]*)|@import`)

func TestHTMLIsSelfContainedAndHoldsEveryChart(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, sampleResults(t), FormatHTML, Options{}); err != nil {
		t.Fatal(err)
	}
	root, err := html.Parse(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	ids := map[string]string{} // svg id -> its <title>
	var scripts int
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "iframe", "object", "embed", "link":
				if n.Data == "script" {
					scripts++
				}
				if n.Data != "script" {
					t.Errorf("<%s> element in a self-contained report", n.Data)
				}
			case "style":
				if n.FirstChild != nil {
					checkCSS(t, "<style>", n.FirstChild.Data)
				}
			case "svg":
				id := attr(n, "id")
				title := ""
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					if c.Type == html.ElementNode && c.Data == "title" && c.FirstChild != nil {
						title = c.FirstChild.Data
					}
				}
				ids[id] = title
			}
			for _, a := range n.Attr {
				key := strings.ToLower(a.Key)
				if a.Namespace != "" {
					key = a.Namespace + ":" + key
				}
				switch {
				case key == "src" || key == "href" || strings.HasSuffix(key, ":href") || key == "srcset" || key == "action" || key == "poster":
					if externalRef.MatchString(a.Val) && !strings.HasPrefix(strings.ToLower(strings.TrimSpace(a.Val)), "data:") {
						t.Errorf("<%s %s=%q> refers outside the file", n.Data, a.Key, a.Val)
					}
				case key == "style":
					checkCSS(t, "<"+n.Data+" style>", a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	if scripts > 0 {
		t.Errorf("%d <script> elements; the report must work without script", scripts)
	}
	for _, want := range []struct{ id, titleHas string }{
		{"chart-spectrum-stream", "latency by percentile"},
		{"chart-spectrum-batch", "latency by percentile"},
		{"chart-outcomes-stream", "outcomes by phase"},
		{"chart-outcomes-batch", "outcomes by phase"},
		{"chart-gap-stream", "gaps between content deltas"},
		{"chart-byte_gap-stream", "gaps between body reads"},
	} {
		title, ok := ids[want.id]
		if !ok {
			t.Errorf("no <svg id=%q> (have %v)", want.id, keys(ids))
			continue
		}
		if !strings.Contains(title, want.titleHas) {
			t.Errorf("svg %s title %q lacks %q", want.id, title, want.titleHas)
		}
	}
	page := buf.String()
	for _, want := range []string{
		"embedded simulator",       // the simulated run says so
		"Recommended timeouts",     // the recommendation table
		"stream.gap",               // with its settings
		"0/400",                    // and evidence
		"pings every 1s keep byte", // and warnings
		"claude-sim-1",             // run metadata
		"gap deadline 10s",         // the deadline drawn on the gap chart (legend)
		"split at",                 // and the split between the populations
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func checkCSS(t *testing.T, where, css string) {
	t.Helper()
	for _, m := range cssRef.FindAllStringSubmatch(css, -1) {
		if m[0] == "@import" || (len(m) > 1 && !strings.HasPrefix(strings.ToLower(m[1]), "data:") && !strings.HasPrefix(m[1], "#")) {
			t.Errorf("%s refers outside the file: %q", where, m[0])
		}
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
