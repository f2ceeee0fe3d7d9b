package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/stretchr/testify/require"
)

// TestReleaseBinaryIgnoresTestHooks: the binary `go build` makes (no
// awrtest tag) holds none of the test hooks' variable names (AWR_TEST_NOW,
// AWR_TEST_CRASHPOINT, AWR_VERIFY_PAYLOADS), dates its
// events and leases by the real clock with AWR_TEST_NOW set to 2100, and
// records sessions and checkpoints in a git repository, clean and dirty,
// with AWR_VERIFY_PAYLOADS=1 set, into a log that verifies. The test
// build the scripts run honours both (testdata/script/test_hooks.txtar),
// and the hint runner of AWR_TEST_HINTS (hintrun_awrtest.go).
// Slow: it builds the release binary (a link of its own flags) and runs it as processes.
func TestReleaseBinaryIgnoresTestHooks(t *testing.T) {
	testkit.PlainOnly(t, "the release binary, run as processes")
	t.Parallel()
	bin := testkit.Release(t, testkit.AWR)
	raw, err := os.ReadFile(bin)
	require.NoError(t, err)
	for _, name := range []string{"AWR_TEST_", "AWR_VERIFY_PAYLOADS"} {
		require.False(t, bytes.Contains(raw, []byte(name)), "the shipped binary holds %s", name)
	}

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"), []byte("# TODO\n\n- [ ] W-1: Work\n"), 0o644))
	env := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid",
		"AWR_TEST_NOW=4102444800000", "AWR_VERIFY_PAYLOADS=1")
	run := func(name string, args ...string) []byte {
		t.Helper()
		c := exec.Command(name, args...)
		c.Dir, c.Env = dir, env
		var stderr bytes.Buffer
		c.Stderr = &stderr
		out, err := c.Output()
		require.NoError(t, err, "%s %v: %s", name, args, stderr.String())
		return out
	}
	run("git", "init", "-q", "-b", "main")
	run("git", "add", "-A")
	run("git", "commit", "-q", "-m", "the register")

	run(bin, "init", "--accept", "--json")
	var started struct {
		Session struct{ ID string }
		Claim   struct {
			ExpiresAt int64 `json:"expires_at"`
		}
	}
	require.NoError(t, json.Unmarshal(run(bin, "session", "start", "--work", "W-1", "--agent", "a", "--claim", "--json"), &started))
	run(bin, "session", "checkpoint", "--session", started.Session.ID, "--agent", "a", "--digest", "clean", "--next-action", "edit", "--json")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.md"), []byte("dirty\n"), 0o644))
	run(bin, "session", "checkpoint", "--session", started.Session.ID, "--agent", "a", "--digest", "dirty", "--next-action", "commit", "--json")

	soon := time.Now().Add(time.Hour).UnixMilli()
	require.Less(t, started.Claim.ExpiresAt, soon+2*time.Hour.Milliseconds(), "the lease runs from the real clock, not AWR_TEST_NOW")
	var log struct {
		Events []struct {
			Seq        int64  `json:"seq"`
			Kind       string `json:"kind"`
			OccurredAt int64  `json:"occurred_at"`
		}
	}
	require.NoError(t, json.Unmarshal(run(bin, "log", "--json"), &log))
	require.Len(t, log.Events, 6) // init, source, session, claim, two checkpoints
	for _, e := range log.Events {
		require.Less(t, e.OccurredAt, soon, "seq %d %s is dated by AWR_TEST_NOW", e.Seq, e.Kind)
	}
	run(bin, "verify", "--json")
}
