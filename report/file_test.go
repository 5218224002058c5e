package report

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// sampleResults is a results value with every section filled, so that a
// round trip through Save and Load would show any field that is lost.
func sampleResults() *Results {
	started := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	return &Results{
		Schema: Schema,
		Tool:   Tool{Name: "tollgate", Version: "v0.1.0-test"},
		Run: Run{
			Started: started, Ended: started.Add(90 * time.Second),
			Target: "http://127.0.0.1:1", API: "anthropic", Model: "m", Mode: "stream",
			Load:   Load{Requests: 100, Concurrency: 4, Seed: 7, Shard: "1/2"},
			Clocks: Clocks{Connect: Duration(2 * time.Second), Gap: Duration(10 * time.Second)},
		},
		Paths: map[string]*Path{
			PathStream: {
				Calls:    100,
				Outcomes: map[string]int64{"ok": 97, "timeout.gap": 3},
				Phases:   map[string]map[string]int64{"timeout.gap": {"mid_stream": 3}},
				Metrics: map[string]*Metric{
					"ttft": {Count: 97, Min: 1.5, Mean: 20.25, P50: 19, P90: 30, P95: 31, P99: 40, P999: 41, Max: 41, Unit: "ms",
						HDR: "HISTFAAAACl4nJNpmSzMwMDAzQABzFCaEUzOmnZ4BoTJzMoyQ4jAEw=="},
				},
			},
		},
		Recommendation: &Recommendation{
			Timeouts:  RouteTimeouts{Connect: Duration(2 * time.Second)},
			Rationale: []Rationale{{Setting: "gap", Value: "10s", Basis: "p999", Of: 97}},
			Warnings:  []string{"few samples"},
		},
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.json")
	want := sampleResults()
	if err := SaveFile(path, want); err != nil {
		t.Fatalf("SaveFile: %v", err)
	}
	got, err := LoadFile(path)
	if err != nil {
		t.Fatalf("LoadFile: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip changed the results:\n got %+v\nwant %+v", got, want)
	}
	// No temporary file is left next to the result.
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only out.json", len(entries))
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
}

func TestSaveReplacesExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.json")
	if err := os.WriteFile(path, []byte("old contents that are longer than the new ones would be? no"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SaveFile(path, sampleResults()); err != nil {
		t.Fatalf("SaveFile: %v", err)
	}
	if _, err := LoadFile(path); err != nil {
		t.Fatalf("Load after overwrite: %v", err)
	}
}

func TestSaveIntoMissingDirectoryFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "dir", "out.json")
	err := SaveFile(path, sampleResults())
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Save into a missing directory: err = %v, want an error naming %q", err, path)
	}
}

func TestLoadErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name     string
		contents string // "" means: do not create the file
		wantMsg  string
	}{
		// A file that is not there.
		{"missing.json", "", "no such file"},
		// Not JSON at all.
		{"garbage.json", "hello", "not a tollgate results file"},
		// JSON without a schema key.
		{"noschema.json", `{"paths":{}}`, `no "schema" key`},
		// Another schema version.
		{"v2.json", `{"schema":"tollgate.results/v2"}`, "not supported"},
		// A null path.
		{"nullpath.json", `{"schema":"tollgate.results/v1","paths":{"stream":null}}`, "paths.stream is null"},
		// A null metric.
		{"nullmetric.json", `{"schema":"tollgate.results/v1","paths":{"stream":{"calls":1,"metrics":{"ttft":null}}}}`, "paths.stream.metrics.ttft is null"},
	}
	for _, tc := range cases {
		path := filepath.Join(dir, tc.name)
		if tc.contents != "" {
			if err := os.WriteFile(path, []byte(tc.contents), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := LoadFile(path)
		if err == nil {
			t.Errorf("%s: Load succeeded, want an error", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.wantMsg) {
			t.Errorf("%s: error %q should name the file and say %q", tc.name, err, tc.wantMsg)
		}
	}
}
