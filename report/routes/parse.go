package routes

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// The known keys, section by section, in the order Write writes them.
var (
	topKeys     = []string{"routes"}
	routeKeys   = []string{"name", "timeouts", "stream", "non_streaming", "batch"}
	sectionKeys = map[string][]string{
		"timeouts":      {"connect", "first_token", "idle", "total"},
		"stream":        {"ttft", "gap"},
		"non_streaming": {"head"},
		"batch":         {"item_ceiling", "attempts", "retry_budget", "job_deadline"},
	}
)

// Parse reads a route config from data and checks it; source names the
// file in messages. It walks the YAML node tree rather than decoding into
// structs so that every problem carries its line, and it collects every
// problem before it returns: the *Error lists them all, each with the key,
// the reason and what to do. Warnings (legal but probably wrong) are in the
// returned Config's Warnings.
func Parse(data []byte, source string) (*Config, error) {
	p := &parser{source: source}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, &Error{Source: source, Problems: []Problem{{Source: source, Msg: fmt.Sprintf("not valid YAML: %v", err)}}}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, &Error{Source: source, Problems: []Problem{{Source: source, Line: extra.Line,
			Msg: "more than one YAML document (a second `---`); put every route under the one `routes:` list"}}}
	}
	cfg := &Config{Source: source}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &Error{Source: source, Problems: []Problem{{Source: source,
			Msg: "empty; a route config starts with `routes:` and a list of routes (see `tollgate check-config --help`)"}}}
	}
	root := resolve(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		p.add(root.Line, "", "the top level must be a mapping with the key `routes`")
	} else {
		p.mapping(root, "", topKeys, func(key string, k, v *yaml.Node) {
			cfg.Routes = p.routes(v)
		})
		if !hasKey(root, "routes") {
			p.add(root.Line, "routes", "missing; a route config lists its routes under `routes:`")
		}
	}
	// The semantic checks run even after syntactic problems, so that one
	// pass lists everything; a broken `routes:` has been reported already.
	if !p.reported("routes") {
		var verr *Error
		if err := cfg.Validate(); errors.As(err, &verr) {
			p.problems = append(p.problems, verr.Problems...)
		}
	}
	if len(p.problems) > 0 {
		sortByLine(p.problems)
		return nil, &Error{Source: source, Problems: dedupe(p.problems)}
	}
	return cfg, nil
}

// parser accumulates the syntactic problems of one file.
type parser struct {
	source   string
	problems []Problem
}

// reported reports whether a problem was already found at key.
func (p *parser) reported(key string) bool {
	for _, q := range p.problems {
		if q.Key == key {
			return true
		}
	}
	return false
}

func (p *parser) add(line int, key, format string, a ...any) {
	p.problems = append(p.problems, Problem{Source: p.source, Line: line, Key: key, Msg: fmt.Sprintf(format, a...)})
}

// resolve follows an alias to the node it names.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func hasKey(m *yaml.Node, key string) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return true
		}
	}
	return false
}

// mapping calls each for every known key of m, and refuses unknown and
// repeated keys. path is the key path of m, for messages. It returns the
// known keys it suggested for typos, which are then not also missing.
func (p *parser) mapping(m *yaml.Node, path string, known []string, each func(key string, k, v *yaml.Node)) (suggested []string) {
	first := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], resolve(m.Content[i+1])
		full := join(path, k.Value)
		if line, dup := first[k.Value]; dup {
			p.add(k.Line, full, "repeated (first at line %d); keep one", line)
			continue
		}
		first[k.Value] = k.Line
		if !contains(known, k.Value) {
			p.add(k.Line, full, "%s", unknownKey(k.Value, path, known))
			if s, ok := nearest(k.Value, known); ok {
				suggested = append(suggested, s)
			}
			continue
		}
		each(k.Value, k, v)
	}
	return suggested
}

// routes reads the list under `routes:`.
func (p *parser) routes(seq *yaml.Node) []Route {
	if seq.Kind != yaml.SequenceNode {
		p.add(seq.Line, "routes", "must be a list of routes (each item starts with `- name: ...`)")
		return nil
	}
	out := make([]Route, 0, len(seq.Content))
	for i, item := range seq.Content {
		item = resolve(item)
		r := Route{lines: map[string]int{}}
		key := fmt.Sprintf("routes[%d]", i)
		if item.Kind != yaml.MappingNode {
			p.add(item.Line, key, "must be a mapping with name and timeouts")
			continue
		}
		// Name the route in messages once its name is known.
		for j := 0; j+1 < len(item.Content); j += 2 {
			if item.Content[j].Value == "name" && item.Content[j+1].Kind == yaml.ScalarNode && item.Content[j+1].Value != "" {
				key = routeKey(item.Content[j+1].Value, i)
			}
		}
		p.mapping(item, key, routeKeys, func(section string, k, v *yaml.Node) {
			if section == "name" {
				r.lines["name"] = k.Line
				if v.Kind != yaml.ScalarNode {
					p.add(v.Line, key+".name", "must be a string")
					return
				}
				r.Name = v.Value
				return
			}
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				r.lines[section] = k.Line
				return
			}
			if v.Kind != yaml.MappingNode {
				p.add(v.Line, key+"."+section, "must be a mapping of %s", strings.Join(sectionKeys[section], ", "))
				return
			}
			r.lines[section] = k.Line
			typos := p.mapping(v, key+"."+section, sectionKeys[section], func(name string, k, v *yaml.Node) {
				rel := section + "." + name
				r.lines[rel] = k.Line
				if rel == "batch.attempts" {
					n, ok := p.integer(v, key+"."+rel)
					if ok {
						r.Batch.Attempts = n
					} else {
						r.markBad(rel)
					}
					return
				}
				d, ok := p.duration(v, key+"."+rel)
				if !ok {
					r.markBad(rel)
					return
				}
				*r.field(rel) = d
			})
			for _, name := range typos {
				r.markBad(section + "." + name)
			}
		})
		out = append(out, r)
	}
	return out
}

// field returns the duration a relative key path names.
func (r *Route) field(rel string) *time.Duration {
	for _, k := range durationKeys {
		if k.key == rel {
			return k.field(r)
		}
	}
	panic("routes: no duration key " + rel)
}

// markBad records that key was written but could not be read, so that the
// semantic checks do not also call it missing or zero.
func (r *Route) markBad(key string) {
	if r.bad == nil {
		r.bad = map[string]bool{}
	}
	r.bad[key] = true
}

// duration reads a Go duration string; a bare number is refused because
// its unit would be a guess.
func (p *parser) duration(v *yaml.Node, key string) (time.Duration, bool) {
	if v.Kind != yaml.ScalarNode {
		p.add(v.Line, key, "must be a duration such as 10s, 2m or 1m30s")
		return 0, false
	}
	if v.Tag == "!!int" || v.Tag == "!!float" {
		p.add(v.Line, key, "%s has no unit; write it as a duration, e.g. %ss", v.Value, v.Value)
		return 0, false
	}
	d, err := time.ParseDuration(v.Value)
	if err != nil {
		p.add(v.Line, key, "%q is not a duration; write e.g. 10s, 2m or 1m30s", v.Value)
		return 0, false
	}
	return d, true
}

// integer reads a whole number.
func (p *parser) integer(v *yaml.Node, key string) (int, bool) {
	n, err := strconv.Atoi(v.Value)
	if v.Kind != yaml.ScalarNode || v.Tag != "!!int" || err != nil {
		p.add(v.Line, key, "%q is not a whole number; write e.g. 5", v.Value)
		return 0, false
	}
	return n, true
}

// unknownKey says what to do about key, unknown under path: use the nearest
// known key at this level when it is close, or move the key to the section
// it belongs to, or pick from the list.
func unknownKey(key, path string, known []string) string {
	if s, ok := nearest(key, known); ok {
		return fmt.Sprintf("unknown key %q; did you mean %q?", key, s)
	}
	for _, section := range routeKeys[1:] {
		if contains(sectionKeys[section], key) && !strings.HasSuffix(path, "."+section) {
			return fmt.Sprintf("unknown key %q here; %s belongs under %s:", key, key, section)
		}
	}
	return fmt.Sprintf("unknown key %q; the keys here are %s", key, strings.Join(known, ", "))
}

// nearest returns the known key closest to key by Damerau–Levenshtein
// distance (optimal string alignment: a swap of two neighbours is one
// edit), when it is within a third of the key's length, at least 1 and at
// most 3 — close enough to be a typo and not another word.
func nearest(key string, known []string) (string, bool) {
	lk := strings.ToLower(key)
	best, bestD := "", 1<<30
	for _, k := range known {
		if d := editDistance(lk, k); d < bestD {
			best, bestD = k, d
		}
	}
	limit := min(3, max(1, len(best)/3))
	return best, best != "" && bestD <= limit
}

// editDistance is the optimal-string-alignment distance between a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// sortByLine orders problems by line, keeping those without a line (and
// the order among equal lines) as found.
func sortByLine(ps []Problem) {
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && ps[j].Line > 0 && ps[j-1].Line > ps[j].Line; j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}

// dedupe drops a problem identical to the one before it.
func dedupe(ps []Problem) []Problem {
	out := ps[:0]
	for i, p := range ps {
		if i > 0 && p == ps[i-1] {
			continue
		}
		out = append(out, p)
	}
	return out
}
