package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExecRun_KilledBetweenStartAndFinish kills a real `awr exec run` (and
// the command it runs) after the start is recorded and before the finish:
// the key is then unknown, a plain run again is refused with
// InvalidTransition naming the execution, and --retry-unknown runs it
// again as a new execution that names the one it retries.
// Slow: real processes killed at a recorded point, then run again.
func TestExecRun_KilledBetweenStartAndFinish(t *testing.T) {
	t.Parallel()
	bin := buildAWR(t)
	dir, awr := initialized(t, bin)
	out, err := awr("session", "start", "--work", "CART-1", "--agent", "a", "--claim", "--json").Output()
	require.NoError(t, err, "%s", out)
	var started struct {
		Session struct{ ID string } `json:"session"`
	}
	require.NoError(t, json.Unmarshal(out, &started))
	s := started.Session.ID

	// The command says it runs, then sleeps: by then execution_started is
	// committed.
	pidFile := filepath.Join(dir, "child.pid")
	run := awr("exec", "run", "--session", s, "--key", "migrate", "--", "sh", "-c", "echo $$ > "+pidFile+"; echo running; exec sleep 60")
	stdout, err := run.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, run.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "running\n", line)

	list := func(args ...string) map[string]any {
		out, err := awr(append([]string{"exec", "list", "--json"}, args...)...).Output()
		require.NoError(t, err, "%s", out)
		var v map[string]any
		require.NoError(t, json.Unmarshal(out, &v))
		return v
	}
	xs := list()["executions"].([]any)
	require.Len(t, xs, 1)
	x := xs[0].(map[string]any)
	require.Equal(t, "running", x["state"], "awr still runs it")
	id := x["id"].(string)

	doctor := func() string {
		out, err := awr("doctor", "--json").Output()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	require.NotContains(t, doctor(), "execution_unknown", "a running execution is no finding")
	out, err = awr("doctor", "repair", "abandon-execution", id, "--reason", "x", "--json").CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), `"code":"InvalidTransition"`, "a running execution is not abandoned")

	// A second run while the first one runs is refused, --retry-unknown or not.
	out, err = awr("exec", "run", "--session", s, "--key", "migrate", "--retry-unknown", "--json", "--", "true").CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), `"state":"running"`)

	// Kill awr, and the command it left behind.
	require.NoError(t, run.Process.Signal(syscall.SIGKILL))
	_ = run.Wait()
	raw, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	child, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	require.NoError(t, err)
	_ = syscall.Kill(child, syscall.SIGKILL)

	x = list()["executions"].([]any)[0].(map[string]any)
	require.Equal(t, "unknown", x["state"])
	require.Nil(t, x["exit_code"])
	require.Contains(t, doctor(), `"code":"execution_unknown","severity":"warning","subject":"`+id+`"`)
	require.Contains(t, doctor(), `"repair":"awr doctor repair abandon-execution `+id+` --reason 'WHAT YOU CHECKED'"`)

	out, err = awr("exec", "show", id, "--json").Output()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), `"state":"unknown"`)
	require.Contains(t, string(out), "--retry-unknown")

	// A plain run again is refused, naming the execution to look at.
	cmd := awr("exec", "run", "--session", s, "--key", "migrate", "--json", "--", "true")
	out, err = cmd.CombinedOutput()
	require.Error(t, err)
	require.Equal(t, 1, cmd.ProcessState.ExitCode())
	var fe struct {
		Code    string         `json:"code"`
		Hint    string         `json:"hint"`
		Details map[string]any `json:"details"`
	}
	require.NoError(t, json.Unmarshal(out, &fe), "%s", out)
	require.Equal(t, "InvalidTransition", fe.Code)
	require.Equal(t, "awr exec show "+id, fe.Hint)
	require.Equal(t, "unknown", fe.Details["state"])

	// With --retry-unknown it runs, as a new execution naming the old one.
	out, err = awr("exec", "run", "--session", s, "--key", "migrate", "--retry-unknown", "--json", "--", "true").Output()
	require.NoError(t, err, "%s", out)
	var res struct {
		Replayed  bool `json:"replayed"`
		Execution struct {
			ID, State, Retries string
		} `json:"execution"`
	}
	require.NoError(t, json.Unmarshal(out, &res))
	require.False(t, res.Replayed)
	require.Equal(t, "succeeded", res.Execution.State)
	require.Equal(t, id, res.Execution.Retries)
	require.NotEqual(t, id, res.Execution.ID)

	xs = list("--work", "CART-1")["executions"].([]any)
	require.Len(t, xs, 2)
	require.Equal(t, res.Execution.ID, xs[0].(map[string]any)["retried_by"])
	require.NotContains(t, doctor(), "execution_unknown", "a retried execution is no finding")

	// Another key killed the same way, then abandoned by the doctor's
	// repair: it is failed, with the reason as its error.
	run = awr("exec", "run", "--session", s, "--key", "deploy", "--", "sh", "-c", "echo $$ > "+pidFile+"; echo running; exec sleep 60")
	stdout, err = run.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, run.Start())
	line, err = bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "running\n", line)
	require.NoError(t, run.Process.Signal(syscall.SIGKILL))
	_ = run.Wait()
	raw, err = os.ReadFile(pidFile)
	require.NoError(t, err)
	child, err = strconv.Atoi(strings.TrimSpace(string(raw)))
	require.NoError(t, err)
	_ = syscall.Kill(child, syscall.SIGKILL)
	byKey := func(key string) map[string]any {
		for _, x := range list("--work", "CART-1")["executions"].([]any) {
			if x.(map[string]any)["key"] == key {
				return x.(map[string]any)
			}
		}
		t.Fatalf("no execution of key %s", key)
		return nil
	}
	deploy := byKey("deploy")
	require.Equal(t, "unknown", deploy["state"])
	require.Contains(t, doctor(), deploy["id"].(string))
	out, err = awr("doctor", "repair", "abandon-execution", deploy["id"].(string), "--reason", "the deploy log shows it never started", "--json").Output()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), `"kind":"execution_finished"`)
	deploy = byKey("deploy")
	require.Equal(t, "failed", deploy["state"])
	require.Contains(t, deploy["error"], "abandoned by awr doctor: the deploy log shows it never started")
	require.NotContains(t, doctor(), "execution_unknown")
	out, err = awr("doctor", "repair", "abandon-execution", deploy["id"].(string), "--reason", "again", "--json").CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), `"code":"InvalidTransition"`)

	out, err = awr("verify", "--json").Output()
	require.NoError(t, err, "%s", out)
}
