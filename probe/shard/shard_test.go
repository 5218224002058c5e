package shard

import (
	"strings"
	"testing"
)

func TestParseShard(t *testing.T) {
	cases := []struct {
		in      string
		want    Shard
		wantErr string // "" means no error
	}{
		// The first of four.
		{"1/4", Shard{1, 4}, ""},
		// The last of four.
		{"4/4", Shard{4, 4}, ""},
		// One shard is the whole run.
		{"1/1", Shard{1, 1}, ""},
		// Spaces around the numbers are tolerated.
		{" 2 / 3 ", Shard{2, 3}, ""},
		// Shards count from 1, not 0.
		{"0/4", Shard{}, "between 1 and 4"},
		// Index past the count.
		{"5/4", Shard{}, "between 1 and 4"},
		// No slash.
		{"3", Shard{}, "want I/N"},
		// Not numbers.
		{"a/4", Shard{}, `index "a"`},
		{"1/b", Shard{}, `count "b"`},
		// Zero shards.
		{"0/0", Shard{}, "at least 1"},
		// Empty.
		{"", Shard{}, "want I/N"},
	}
	for _, tc := range cases {
		got, err := ParseShard(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseShard(%q) err = %v, want it to say %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if got.String() != strings.ReplaceAll(tc.in, " ", "") {
			t.Errorf("String() = %q, want %q", got.String(), strings.ReplaceAll(tc.in, " ", ""))
		}
	}
}

// Every item belongs to exactly one shard, Items counts what Owns selects,
// and shard sizes differ by at most one.
func TestOwnsPartitionsItems(t *testing.T) {
	for n := 1; n <= 7; n++ {
		for _, total := range []int{0, 1, 5, 6, 7, 100, 1001} {
			owners := make([]int, total)
			minSize, maxSize := total+1, -1
			for i := 1; i <= n; i++ {
				s := Shard{Index: i, Count: n}
				size := 0
				for item := range total {
					if s.Owns(item) {
						owners[item]++
						size++
					}
				}
				if got := s.Items(total); got != size {
					t.Errorf("%v.Items(%d) = %d, Owns selects %d", s, total, got, size)
				}
				minSize, maxSize = min(minSize, size), max(maxSize, size)
			}
			for item, c := range owners {
				if c != 1 {
					t.Fatalf("N=%d: item %d owned by %d shards, want 1", n, item, c)
				}
			}
			if maxSize-minSize > 1 {
				t.Errorf("N=%d total=%d: shard sizes range %d..%d, want a spread of at most 1", n, total, minSize, maxSize)
			}
		}
	}
}

func TestOwnsIsRoundRobin(t *testing.T) {
	s := Shard{Index: 2, Count: 3}
	var got []int
	for i := range 10 {
		if s.Owns(i) {
			got = append(got, i)
		}
	}
	want := []int{1, 4, 7}
	if len(got) != len(want) || got[0] != 1 || got[1] != 4 || got[2] != 7 {
		t.Errorf("shard 2/3 owns %v of 0..9, want %v", got, want)
	}
}

func TestZeroShardOwnsEverything(t *testing.T) {
	var s Shard
	if !s.IsZero() || s.String() != "" {
		t.Errorf("zero Shard: IsZero %v String %q", s.IsZero(), s.String())
	}
	for i := range 5 {
		if !s.Owns(i) {
			t.Errorf("zero Shard does not own item %d", i)
		}
	}
	if s.Items(9) != 9 || s.Rate(12.5) != 12.5 {
		t.Errorf("zero Shard: Items(9) = %d, Rate(12.5) = %v", s.Items(9), s.Rate(12.5))
	}
}

func TestRateSplitsEvenly(t *testing.T) {
	total := 10.0
	sum := 0.0
	for i := 1; i <= 4; i++ {
		r := Shard{Index: i, Count: 4}.Rate(total)
		if r != 2.5 {
			t.Errorf("shard %d/4 rate = %v, want 2.5", i, r)
		}
		sum += r
	}
	if sum != total {
		t.Errorf("shard rates sum to %v, want %v", sum, total)
	}
}
