// Package deploy holds deployment examples (Kubernetes manifests, a
// Dockerfile); its tests check that the manifests run the commands they
// claim to, with flags tollgate accepts.
package deploy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/tollgate-dev/tollgate/cmd"
	"github.com/tollgate-dev/tollgate/probe/shard"
)

// job is the part of a Kubernetes Job the tests read.
type job struct {
	Kind     string
	Metadata struct{ Name string }
	Spec     struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    int
		Parallelism    int
		Template       struct {
			Spec struct {
				RestartPolicy string `yaml:"restartPolicy"`
				Containers    []struct {
					Name    string
					Command []string
					Args    []string
					Env     []struct {
						Name      string
						Value     string
						ValueFrom *struct {
							SecretKeyRef *struct{ Name, Key string } `yaml:"secretKeyRef"`
						} `yaml:"valueFrom"`
					}
				}
			}
		}
	}
}

// readJob returns the Job in a manifest file.
func readJob(t *testing.T, file string) job {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var j job
		err := dec.Decode(&j)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if j.Kind == "Job" {
			return j
		}
	}
	t.Fatalf("%s has no Job", file)
	return job{}
}

// runScript runs the container's shell script with env (plus the
// manifest's plain env values), /out replaced by a temporary directory,
// and a fake tollgate on PATH that writes each invocation's arguments, one
// per line, to a log. It returns the invocations and the temporary /out.
func runScript(t *testing.T, j job, env map[string]string, prepare func(out string)) ([][]string, string, error) {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on this machine:", err)
	}
	c := j.Spec.Template.Spec.Containers[0]
	if len(c.Command) != 2 || c.Command[0] != "/bin/sh" || c.Command[1] != "-c" || len(c.Args) != 1 {
		t.Fatalf("container runs %q %q; the test expects /bin/sh -c SCRIPT", c.Command, c.Args)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		prepare(out)
	}
	bin := filepath.Join(dir, "bin")
	log := filepath.Join(dir, "calls.log")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	fake := "#!/bin/sh\n{ echo '---'; for a in \"$@\"; do printf '%s\\n' \"$a\"; done; } >> " + log + "\n"
	if err := os.WriteFile(filepath.Join(bin, "tollgate"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	script := strings.ReplaceAll(c.Args[0], "/out/", out+"/")
	run := exec.Command(sh, "-c", script)
	run.Env = []string{"PATH=" + bin + ":/usr/bin:/bin"}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			run.Env = append(run.Env, e.Name+"="+e.Value)
		}
	}
	for k, v := range env {
		run.Env = append(run.Env, k+"="+v)
	}
	var stderr bytes.Buffer
	run.Stderr = &stderr
	err = run.Run()
	if err != nil {
		err = fmt.Errorf("%w: %s", err, stderr.String())
	}
	var calls [][]string
	b, _ := os.ReadFile(log)
	for _, block := range strings.Split(string(b), "---\n")[1:] {
		calls = append(calls, strings.Split(strings.TrimSuffix(block, "\n"), "\n"))
	}
	return calls, out, err
}

func envValue(t *testing.T, j job, name string) string {
	t.Helper()
	for _, e := range j.Spec.Template.Spec.Containers[0].Env {
		if e.Name == name {
			return e.Value
		}
	}
	t.Fatalf("job %s sets no %s", j.Metadata.Name, name)
	return ""
}

// Each pod of the Indexed Job runs its own shard of one probe, with flags
// tollgate probe accepts, and writes a file the merge job picks up.
func TestIndexedJobRunsOneShardPerIndex(t *testing.T) {
	j := readJob(t, "k8s-indexed-job.yaml")
	s := j.Spec
	if s.CompletionMode != "Indexed" || s.Completions < 2 || s.Parallelism != s.Completions {
		t.Fatalf("job spec: mode %q completions %d parallelism %d; want Indexed, all shards at once", s.CompletionMode, s.Completions, s.Parallelism)
	}
	if s.Template.Spec.RestartPolicy != "Never" {
		t.Errorf("restartPolicy %q, want Never (podFailurePolicy needs it)", s.Template.Spec.RestartPolicy)
	}
	if got := envValue(t, j, "SHARDS"); got != fmt.Sprint(s.Completions) {
		t.Errorf("SHARDS=%s but completions %d", got, s.Completions)
	}
	// The key comes from a Secret, never from a literal.
	keyFromSecret := false
	for _, e := range s.Template.Spec.Containers[0].Env {
		if e.Name == "ANTHROPIC_API_KEY" {
			keyFromSecret = e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.Value == ""
		}
	}
	if !keyFromSecret {
		t.Error("ANTHROPIC_API_KEY is not read from a Secret")
	}
	runID := envValue(t, j, "RUN_ID")
	covered := map[int]bool{}
	for index := range s.Completions {
		calls, out, err := runScript(t, j, map[string]string{"JOB_COMPLETION_INDEX": fmt.Sprint(index)}, nil)
		if err != nil {
			t.Fatalf("index %d: script: %v", index, err)
		}
		if len(calls) != 1 || len(calls[0]) == 0 || calls[0][0] != "probe" {
			t.Fatalf("index %d: tollgate ran %q, want one probe", index, calls)
		}
		var got *cmd.ProbeOptions
		var stderr bytes.Buffer
		c := cmd.NewCmdProbe(cmd.IOStreams{Out: io.Discard, ErrOut: &stderr}, func(_ context.Context, o *cmd.ProbeOptions) error { got = o; return nil })
		c.SetArgs(calls[0][1:])
		c.SetErr(&stderr)
		if err := c.ExecuteContext(context.Background()); err != nil {
			t.Fatalf("index %d: tollgate probe %q: %v %s", index, calls[0][1:], err, stderr.String())
		}
		sh, err := shard.ParseShard(got.Shard)
		if err != nil || sh.Count != s.Completions || sh.Index != index+1 {
			t.Errorf("index %d: --shard %q, want %d/%d", index, got.Shard, index+1, s.Completions)
		}
		covered[sh.Index] = true
		if want := filepath.Join(out, runID, fmt.Sprintf("shard-%d.json", index)); got.Out != want {
			t.Errorf("index %d: -o %q, want %q", index, got.Out, want)
		}
		if got.APIKeyEnv != "ANTHROPIC_API_KEY" || got.Target == "" {
			t.Errorf("index %d: --api-key-env %q --target %q", index, got.APIKeyEnv, got.Target)
		}
	}
	if len(covered) != s.Completions {
		t.Errorf("the indexes cover shards %v of %d", covered, s.Completions)
	}
}

// The merge job merges exactly the shard files of its RUN_ID and refuses
// to merge a partial set.
func TestMergeJobMergesEveryShard(t *testing.T) {
	probeJob := readJob(t, "k8s-indexed-job.yaml")
	j := readJob(t, "k8s-merge-job.yaml")
	n := probeJob.Spec.Completions
	runID := envValue(t, j, "RUN_ID")
	if envValue(t, j, "SHARDS") != fmt.Sprint(n) || runID != envValue(t, probeJob, "RUN_ID") {
		t.Fatalf("merge job SHARDS/RUN_ID do not match the probe job")
	}
	writeShards := func(count int) func(string) {
		return func(out string) {
			if err := os.MkdirAll(filepath.Join(out, runID), 0o755); err != nil {
				t.Fatal(err)
			}
			for i := range count {
				if err := os.WriteFile(filepath.Join(out, runID, fmt.Sprintf("shard-%d.json", i)), []byte("{}"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	calls, out, err := runScript(t, j, nil, writeShards(n))
	if err != nil {
		t.Fatalf("script: %v", err)
	}
	if len(calls) < 1 || len(calls[0]) != 3+n || calls[0][0] != "merge" || calls[0][1] != "-o" ||
		calls[0][2] != filepath.Join(out, runID, "merged.json") {
		t.Fatalf("tollgate ran %q, want merge -o merged.json and %d shard files", calls, n)
	}
	for i, f := range calls[0][3:] {
		if filepath.Dir(f) != filepath.Join(out, runID) || !strings.HasPrefix(filepath.Base(f), "shard-") {
			t.Errorf("merge input %d is %q", i, f)
		}
	}
	// One shard short: the script refuses before tollgate runs.
	calls, _, err = runScript(t, j, nil, writeShards(n-1))
	if err == nil || len(calls) != 0 || !strings.Contains(err.Error(), fmt.Sprintf("%d of %d shard files", n-1, n)) {
		t.Errorf("partial set: err %v, calls %q", err, calls)
	}
}
