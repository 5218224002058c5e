package histo

import "testing"

// FuzzDecode feeds Decode arbitrary strings: it must return an error or a
// histogram, never panic, and whatever it returns must encode and decode
// to the same histogram.
func FuzzDecode(f *testing.F) {
	h := New()
	h.RecordValues(40_000, 10)
	h.RecordValue(3_000_000)
	s, err := h.Encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(s)
	f.Add("")
	f.Add("HISTFAAAAA==")
	f.Add(s[:len(s)/2])
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Decode(s)
		if err != nil {
			return
		}
		again, err := got.Encode()
		if err != nil {
			t.Fatalf("decoded histogram does not encode: %v", err)
		}
		back, err := Decode(again)
		if err != nil || !back.Equal(got) {
			t.Fatalf("re-encoding changed the histogram: %v", err)
		}
	})
}
