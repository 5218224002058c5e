package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckConfigArgs(t *testing.T) {
	var got *CheckConfigOptions
	c := newCmdCheckConfigWith(IOStreams{}, func(o *CheckConfigOptions) error { got = o; return nil })
	c.SetArgs([]string{"routes.yaml"})
	if err := c.Execute(); err != nil || got.Path != "routes.yaml" {
		t.Fatalf("err %v, options %+v", err, got)
	}
	if code, _, _ := runTollgate(t, "check-config"); code != ExitUsage {
		t.Errorf("no argument: exit %d, want %d", code, ExitUsage)
	}
}

func TestCheckConfigExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string { return writeTestFile(t, dir, name, body) }
	spec := filepath.Join("..", "report", "routes", "testdata", "spec.yaml")
	good := write("good.yaml", `routes:
  - name: chat
    timeouts:
      connect: 2s
      first_token: 10s
      idle: 45s
      total: 10m
    stream:
      ttft: 5s
      gap: 10s
`)
	typo := write("typo.yaml", strings.Replace(readFile(t, good), "first_token", "frist_token", 1))
	tight := write("tight.yaml", strings.Replace(strings.Replace(readFile(t, good), "total: 10m", "total: 12s", 1), "ttft: 5s", "ttft: 0s", 1))
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		out, err []string
	}{
		// Passes: a summary a line a route.
		{"passes", []string{good}, ExitOK, []string{"good.yaml: ok, 1 route", "chat: connect 2s, first_token 10s, idle 45s, total 10m, stream.ttft 5s, stream.gap 10s"}, nil},
		// SPEC §6's example passes, with ADR 0016's mixed-mode warning.
		{"spec example", []string{spec}, ExitOK, []string{"ok, 1 route", "warning: ", "split the route"}, nil},
		{"typo", []string{typo}, ExitUsage, nil, []string{"typo.yaml:5: routes[chat].timeouts.frist_token", `did you mean "first_token"?`}},
		// Every refusal is listed, not only the first.
		{"two refusals", []string{tight}, ExitUsage, nil, []string{"2 problems", "tight.yaml:7: routes[chat].timeouts.total", "tight.yaml:9: routes[chat].stream.ttft"}},
		{"missing file", []string{filepath.Join(dir, "nope.yaml")}, ExitUsage, nil, []string{"nope.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runTollgate(t, append([]string{"check-config"}, tc.args...)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
			}
			for _, w := range tc.out {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.err {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
		})
	}
}

// writeTestFile writes body to dir/name and returns the path.
func writeTestFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
