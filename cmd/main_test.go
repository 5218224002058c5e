package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// envRunMain makes the test binary behave as the tollgate binary, so that
// subprocess tests (signals, exit codes) need no separate build.
const envRunMain = "TOLLGATE_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(envRunMain) == "1" {
		var args []string
		if err := json.Unmarshal([]byte(os.Getenv(envRunMain+"_ARGS")), &args); err != nil {
			panic(err)
		}
		os.Args = append([]string{"tollgate"}, args...)
		os.Exit(Execute())
	}
	goleak.VerifyTestMain(m)
}

// runTollgate runs `tollgate args...` in-process and returns the exit code,
// stdout and stderr.
func runTollgate(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	code := run(context.Background(), NewCmdRoot(streams), args, &errOut)
	return code, out.String(), errOut.String()
}
