package mcpserver_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServer_PathsStayInTheProject: over MCP every path resolves inside
// the project: awr_anchor's to (../x, an absolute path, a link out),
// awr_verify's anchors_file, awr_recovery_verify's input, awr_seat_add's
// cwd are refused with InvalidInput (rule outside_project) and nothing is
// written outside; a file awr reads is never a device or a FIFO (the
// server would read /dev/zero forever, or block on the FIFO).
func TestServer_PathsStayInTheProject(t *testing.T) {
	t.Parallel()
	dir := initProject(t)
	cs := connect(t, dir)
	outside := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "out")))
	for _, to := range []string{"../x", filepath.Join(outside, "anchors.txt"), "out/anchors.txt", "/tmp/awr-anchor-test"} {
		out := fails(t, cs, "awr_anchor", map[string]any{"to": to}, "InvalidInput")
		require.Equal(t, "outside_project", out["details"].(map[string]any)["rule"], "%v", out)
	}
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing written outside the project")
	_, err = os.Stat("/tmp/awr-anchor-test")
	require.ErrorIs(t, err, os.ErrNotExist)

	fails(t, cs, "awr_anchor", map[string]any{"to": ".awr/awr.db"}, "InvalidInput")
	anchored, isErr := call(t, cs, "awr_anchor", map[string]any{"to": "anchors.txt"})
	require.False(t, isErr, "%v", anchored)
	require.Equal(t, "file", anchored["to"])

	out := fails(t, cs, "awr_verify", map[string]any{"anchors": true, "anchors_file": "/etc/passwd"}, "InvalidInput")
	require.Equal(t, "outside_project", out["details"].(map[string]any)["rule"])
	require.NotContains(t, out["hint"], "/etc/passwd")
	out = fails(t, cs, "awr_seat_add", map[string]any{"address": "b@r", "runtime": "claude", "cwd": "/etc"}, "InvalidInput")
	require.Equal(t, "outside_project", out["details"].(map[string]any)["rule"])

	started := ok(t, cs, "awr_session_start", map[string]any{"work": "CART-1", "agent": "a"})
	session := started["session"].(map[string]any)["id"]
	out = fails(t, cs, "awr_recovery_verify", map[string]any{"session": session, "input": "/dev/zero"}, "InvalidInput")
	require.Equal(t, "outside_project", out["details"].(map[string]any)["rule"])
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	for _, in := range []string{"fifo", "."} {
		out = fails(t, cs, "awr_recovery_verify", map[string]any{"session": session, "input": in}, "InvalidInput")
		require.Equal(t, "not_regular", out["details"].(map[string]any)["rule"])
	}
	out = fails(t, cs, "awr_verify", map[string]any{"anchors": true, "anchors_file": "fifo"}, "InvalidInput")
	require.Equal(t, "not_regular", out["details"].(map[string]any)["rule"])
}
