package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// LoadFile reads and validates a results file written by SaveFile. Every
// error names the file: a missing or unreadable file, JSON that does not
// parse, a schema other than Schema, or a path or metric that is null.
// (The name is not Load because Load is the type of Run.Load.)
func LoadFile(path string) (*Results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read results %q: %w", path, err)
	}
	r, err := Decode(b)
	if err != nil {
		return nil, fmt.Errorf("results %q: %w", path, err)
	}
	return r, nil
}

// Decode parses and validates the bytes of a results file (see LoadFile).
func Decode(b []byte) (*Results, error) {
	var r Results
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("not a tollgate results file: %w", err)
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// Validate checks what every reader of a results file relies on: the schema
// and that no path or metric is null. It does not decode histograms.
func (r *Results) Validate() error {
	if r.Schema == "" {
		return errors.New(`not a tollgate results file: no "schema" key`)
	}
	if r.Schema != Schema {
		return fmt.Errorf("schema %q is not supported (want %q)", r.Schema, Schema)
	}
	for name, p := range r.Paths {
		if p == nil {
			return fmt.Errorf("paths.%s is null", name)
		}
		for m, v := range p.Metrics {
			if v == nil {
				return fmt.Errorf("paths.%s.metrics.%s is null", name, m)
			}
		}
	}
	return nil
}

// SaveFile writes r to path as indented JSON, atomically: it writes a
// temporary file in the same directory, syncs it and renames it over path,
// so a reader (or a crash) never sees half a file. The file is readable by
// all (0644). An empty Schema is set to Schema.
func SaveFile(path string, r *Results) error {
	if r == nil {
		return fmt.Errorf("save results %q: nil results", path)
	}
	if r.Schema == "" {
		r.Schema = Schema
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("save results %q: encode: %w", path, err)
	}
	b = append(b, '\n')
	return writeFileAtomic(path, b)
}

// writeFileAtomic writes b to a temporary file next to path and renames it
// over path; on any failure the temporary file is removed and path is left
// as it was.
func writeFileAtomic(path string, b []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("save results %q: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if _, err = f.Write(b); err != nil {
		return fmt.Errorf("save results %q: write %q: %w", path, tmp, err)
	}
	if err = f.Chmod(0o644); err != nil {
		return fmt.Errorf("save results %q: chmod %q: %w", path, tmp, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("save results %q: sync %q: %w", path, tmp, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("save results %q: close %q: %w", path, tmp, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("save results %q: rename %q: %w", path, tmp, err)
	}
	return nil
}
