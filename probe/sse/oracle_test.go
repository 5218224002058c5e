package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	gosse "github.com/tmaxmax/go-sse"
)

// The differential tests use github.com/tmaxmax/go-sse v0.12.0's Read as an
// oracle. Read yields events only (no comments, no retry), leaves Type empty
// where WHATWG says "message" (normalized below), and deviates from WHATWG
// on two rules; inputs that reach them are excluded by oracleDeviates, and
// TestOracleDeviations pins both down so that an oracle upgrade that fixes
// them shows up:
//
//  1. Read dispatches a block that has an event or id field but no data
//     line (its "dirty" flag is set by those fields); WHATWG dispatches only
//     when the data buffer is not empty.
//  2. Read strips a UTF-8 BOM at the start of its first event, even when
//     blank lines come before it; WHATWG strips it only at the first byte
//     of the stream.

// oracleEvent is an event as both readers can report it.
type oracleEvent struct {
	Type, Data, ID string
}

// oracleEvents returns the events go-sse reads from in.
func oracleEvents(in []byte) ([]oracleEvent, error) {
	var out []oracleEvent
	for e, err := range gosse.Read(bytes.NewReader(in), &gosse.ReadConfig{MaxEventSize: 4 << 20}) {
		if err != nil {
			return out, err
		}
		typ := e.Type
		if typ == "" {
			typ = "message"
		}
		out = append(out, oracleEvent{typ, e.Data, e.LastEventID})
	}
	return out, nil
}

// ourEvents returns the events (comments left out) among items.
func ourEvents(items []got) []oracleEvent {
	var out []oracleEvent
	for _, it := range items {
		if it.Kind == KindEvent {
			out = append(out, oracleEvent{it.Type, it.Data, it.ID})
		}
	}
	return out
}

// refLines splits a stream into its complete lines by a naive reading of
// the WHATWG rules (BOM stripped at the start; CRLF, LF and CR end lines),
// independent of the Reader's code.
func refLines(in []byte) [][]byte {
	in = bytes.TrimPrefix(in, utf8BOM)
	var lines [][]byte
	for {
		i := bytes.IndexAny(in, "\r\n")
		if i < 0 {
			return lines
		}
		lines = append(lines, in[:i])
		if in[i] == '\r' && i+1 < len(in) && in[i+1] == '\n' {
			i++
		}
		in = in[i+1:]
	}
}

// oracleDeviates returns why go-sse would read in differently from WHATWG
// (see the list above), or "" when it reads it by the rules.
func oracleDeviates(in []byte) string {
	if i := bytes.Index(in, utf8BOM); i > 0 || (i == 0 && bytes.Contains(in[3:], utf8BOM)) {
		return "BOM after the first byte"
	}
	hasData, hasOther := false, false
	for _, line := range refLines(in) {
		if len(line) == 0 {
			if hasOther && !hasData {
				return "event or id field in a block without data"
			}
			hasData, hasOther = false, false
			continue
		}
		name, _, _ := bytes.Cut(line, []byte(":"))
		switch string(name) {
		case "data":
			hasData = true
		case "event", "id":
			hasOther = true
		}
	}
	return ""
}

// The deviations the differential tests exclude are real: the oracle reads
// these inputs differently from this Reader, in the way documented above.
func TestOracleDeviations(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ours []oracleEvent
		its  []oracleEvent
	}{
		// Rule 1: a block with an event field but no data line.
		{"dataless block", "event: ping\n\ndata: a\n\n",
			[]oracleEvent{{"message", "a", ""}},
			[]oracleEvent{{"ping", "", ""}, {"message", "a", ""}}},
		// Rule 2: a BOM after a leading blank line.
		{"late BOM", "\n\xEF\xBB\xBFdata: a\n\n",
			nil,
			[]oracleEvent{{"message", "a", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if oracleDeviates([]byte(tt.in)) == "" {
				t.Errorf("oracleDeviates does not exclude %q", tt.in)
			}
			items, _, err := readAll(strings.NewReader(tt.in), Options{})
			if err != io.EOF || !reflect.DeepEqual(ourEvents(items), tt.ours) {
				t.Errorf("Reader: %v (err %v), want %v", ourEvents(items), err, tt.ours)
			}
			its, err := oracleEvents([]byte(tt.in))
			if err != nil || !reflect.DeepEqual(its, tt.its) {
				t.Errorf("go-sse: %v (err %v), want %v", its, err, tt.its)
			}
		})
	}
}

// genStream returns a random stream made of the lines the rules are about:
// data (with and without the space, without a colon), event, id (some with
// NUL), retry, comments, unknown fields, blank lines, with every kind of
// line end, a BOM at the start now and then, and sometimes no blank line or
// no line end at all at the end.
func genStream(rng *rand.Rand) []byte {
	var b bytes.Buffer
	if rng.IntN(8) == 0 {
		b.Write(utf8BOM)
	}
	values := []string{"", "x", " lead", "a:b", "{\"type\":\"ping\"}", "tab\there", "ü", "trail "}
	value := func() string { return values[rng.IntN(len(values))] }
	prevCR := false
	for range rng.IntN(30) {
		var line string
		switch rng.IntN(11) {
		case 0, 1, 2:
			line = "data: " + value()
		case 3:
			line = "data:" + value()
		case 4:
			line = "data"
		case 5:
			line = "event: " + value()
		case 6:
			line = "id: " + value()
			if rng.IntN(4) == 0 {
				line += "\x00"
			}
		case 7:
			line = "retry: " + []string{"100", "x", "-5", ""}[rng.IntN(4)]
		case 8:
			line = ":" + value()
		case 9:
			line = []string{"foo: bar", "Data: x", "dat", "eventx: y", " data: z"}[rng.IntN(5)]
		default:
			line = ""
		}
		ends := []string{"\n", "\r", "\r\n"}
		// A CR then an empty line ended by LF would be one CRLF: keep the
		// blank line a blank line.
		if prevCR && line == "" {
			ends = ends[1:]
		}
		end := ends[rng.IntN(len(ends))]
		b.WriteString(line)
		b.WriteString(end)
		prevCR = end == "\r"
	}
	switch rng.IntN(3) {
	case 0:
		if !prevCR {
			b.WriteString("\n")
		}
	case 1:
		b.WriteString("data: unterminated")
	}
	return b.Bytes()
}

// Generated streams read the same as by go-sse, except where go-sse
// deviates from WHATWG (excluded and counted).
func TestReaderMatchesOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	compared, excluded := 0, map[string]int{}
	for i := range 5000 {
		in := genStream(rng)
		if why := oracleDeviates(in); why != "" {
			excluded[why]++
			continue
		}
		compared++
		if err := compareWithOracle(in); err != nil {
			t.Fatalf("stream %d %q: %v", i, in, err)
		}
	}
	t.Logf("compared %d streams with go-sse, excluded %v", compared, excluded)
	if compared < 2000 {
		t.Errorf("only %d of 5000 streams compared: the generator hits the exclusions too often", compared)
	}
}

// compareWithOracle reads in with both readers and says how they differ.
func compareWithOracle(in []byte) error {
	items, _, err := readAll(bytes.NewReader(in), Options{})
	if err != io.EOF {
		return fmt.Errorf("Reader ended with %v, want io.EOF", err)
	}
	its, err := oracleEvents(in)
	if err != nil {
		return fmt.Errorf("go-sse: %w", err)
	}
	if ours := ourEvents(items); !sameEvents(ours, its) {
		return fmt.Errorf("events differ:\nReader %q\ngo-sse %q", ours, its)
	}
	return nil
}

// sameEvents reports whether two event lists are equal, nil and empty alike.
func sameEvents(a, b []oracleEvent) bool {
	return len(a) == 0 && len(b) == 0 || reflect.DeepEqual(a, b)
}

// FuzzReader checks the invariants on any input: no panic; the same items,
// error and discarded event however the input is cut into reads; memory
// bounded by MaxEventSize; and the same events as go-sse wherever go-sse
// follows the rules.
func FuzzReader(f *testing.F) {
	seeds := []string{
		"data: a\n\n", "data: a\r\n\r\n", "data: a\r\r", "\xEF\xBB\xBFdata: a\n\n", ": ping\n",
		"event: e\nid: 1\nretry: 10\ndata: x\ndata\n\n", "id: a\x00b\ndata: c\n\n",
		"data: unterminated", "data: a\n\ndata: b\n", ":\r\n\r\n\n\r", "\xEF\xBB", "data:\xEF\xBB\xBF\n\n",
		string(anthropicStream(3)), string(openAIChatStream(3)),
	}
	for _, s := range seeds {
		f.Add([]byte(s), uint16(1))
	}
	// The captured provider streams join the corpus when they are there.
	fixtures, _ := filepath.Glob(filepath.Join(fixtureDir, "*", "*.*"))
	for _, path := range fixtures {
		if data, err := os.ReadFile(path); err == nil {
			f.Add(data, uint16(len(data)/2))
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		f.Add(genStream(rng), uint16(rng.IntN(64)))
	}
	f.Fuzz(func(t *testing.T, in []byte, cut uint16) {
		for _, max := range []int{0, 64} {
			opts := Options{MaxEventSize: max}
			wantItems, wantDisc, wantErr := readAll(bytes.NewReader(in), opts)
			if wantErr != io.EOF && !errors.Is(wantErr, ErrEventTooLarge) {
				t.Fatalf("max %d: whole read ended with %v, want io.EOF or ErrEventTooLarge", max, wantErr)
			}
			chunkings := map[string]io.Reader{
				"one byte":                            iotest.OneByteReader(bytes.NewReader(in)),
				"half":                                iotest.HalfReader(bytes.NewReader(in)),
				fmt.Sprintf("cut at %d", cut):         &splitReader{data: in, cuts: []int{int(cut)}},
				fmt.Sprintf("cuts every %d", cut%7+1): &splitReader{data: in, cuts: every(len(in), int(cut%7)+1)},
			}
			for how, src := range chunkings {
				items, disc, err := readAll(src, opts)
				if !reflect.DeepEqual(items, wantItems) || !reflect.DeepEqual(disc, wantDisc) ||
					errors.Is(err, ErrEventTooLarge) != errors.Is(wantErr, ErrEventTooLarge) {
					t.Fatalf("max %d, %s: items %v discarded %v err %v;\nwhole read: %v discarded %v err %v",
						max, how, items, disc, err, wantItems, wantDisc, wantErr)
				}
			}
			if max > 0 {
				checkBounded(t, in, max)
			}
		}
		if oracleDeviates(in) == "" {
			if err := compareWithOracle(in); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// every returns the offsets 0 < n, 2n, ... < size.
func every(size, n int) []int {
	var cuts []int
	for c := n; c < size; c += n {
		cuts = append(cuts, c)
	}
	return cuts
}

// checkBounded reads in one byte at a time with a small MaxEventSize and
// checks, after every item, that no buffer grew past what the limit allows.
func checkBounded(t *testing.T, in []byte, max int) {
	t.Helper()
	r := NewReader(iotest.OneByteReader(bytes.NewReader(in)), Options{MaxEventSize: max})
	for {
		it, err := r.Next()
		if cap(r.buf) != readBufferSize || len(r.data) > max || len(r.eventType) > max || len(r.lastID) > max {
			t.Fatalf("max %d: buffers grew: read %d, data %d, type %d, id %d",
				max, cap(r.buf), len(r.data), len(r.eventType), len(r.lastID))
		}
		if err != nil {
			return
		}
		if len(it.Data) > max || len(it.Comment) > max {
			t.Fatalf("max %d: item larger than the limit: data %d, comment %d", max, len(it.Data), len(it.Comment))
		}
	}
}
