package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// childCounters are the counters Linux keeps in /proc/PID/stat for the
// children a process has started and reaped: minor and major faults,
// user and system time. Any program that ran moves cminflt.
func childCounters(t *testing.T, pid string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		t.Skipf("no /proc on this system: %v", err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // f[0] is field 3
	return fmt.Sprintf("cminflt=%s cmajflt=%s cutime=%s cstime=%s", f[8], f[10], f[13], f[14])
}

// TestNoProcessOnAgentsWord calls every tool of the built awr-mcp, the
// evidence and seat tools with commands that would create a marker, and
// checks on the server process itself that it started no process at all:
// Linux's counters of its reaped children stay at zero. PATH is empty, so
// the fixed helpers awr drives by name (git for repository state and
// anchors, tmux for rigs) cannot be found; what this catches is any
// program started by path, /bin/sh first (issue #47: awr_evidence_add
// ran `sh -c COMMAND`).
func TestNoProcessOnAgentsWord(t *testing.T) {
	// The measure moves when a child runs: checked on this process.
	self := childCounters(t, "self")
	require.NoError(t, exec.Command("/bin/true").Run())
	require.NotEqual(t, self, childCounters(t, "self"), "the children's counters move when a program runs")

	awr, bin := binaries(t)
	dir := project(t, awr)
	marker := filepath.Join(t.TempDir(), "ran")
	out, err := exec.Command(awr, "--project", dir, "seat", "add", "build@portal", "--runtime", "generic", "--command", "touch "+marker, "--work", "CART-1").CombinedOutput()
	require.NoError(t, err, "%s", out)

	cmd := exec.Command(bin, "--project", dir)
	cmd.Env = append(os.Environ(), "PATH="+t.TempDir())
	cs := serveCmd(t, cmd)
	pid := fmt.Sprint(cmd.Process.Pid)
	require.Equal(t, "cminflt=0 cmajflt=0 cutime=0 cstime=0", childCounters(t, pid))

	session := field(ok(t, cs, "awr_session_start", map[string]any{"work": "CART-1", "agent": "a", "claim": true}), "session.id").(string)
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"awr_evidence_add", map[string]any{"work": "CART-1", "criterion": "1", "command": "touch " + marker}},
		{"awr_evidence_add", map[string]any{"work": "CART-1", "criterion": "1", "command": "touch " + marker, "session": session}},
		{"awr_evidence_add", map[string]any{"work": "CART-1", "criterion": "1", "command": "touch " + marker, "exit_code": 0, "session": session}},
		{"awr_evidence_add", map[string]any{"work": "CART-1", "criterion": "2", "note": "checked by hand", "session": session}},
		{"awr_seat_add", map[string]any{"address": "evil@portal", "runtime": "generic", "command": "touch " + marker}},
		{"awr_session_checkpoint", map[string]any{"session": session, "digest": "d", "next_action": "n"}},
		{"awr_context_compile", map[string]any{"work": "CART-1", "session": session}},
		{"awr_work_show", map[string]any{"key": "CART-1"}},
		{"awr_work_complete", map[string]any{"key": "CART-1", "session": session}},
		{"awr_recovery_inspect", map[string]any{"session": session}},
		{"awr_doctor_check", map[string]any{}},
		{"awr_anchor", map[string]any{}},
		{"awr_anchor", map[string]any{"to": "anchors.txt"}},
		{"awr_verify", map[string]any{"anchors": true}},
		{"awr_rig_restore_check", map[string]any{"rig": "portal"}},
		{"awr_rig_up", map[string]any{"rig": "portal"}},
		{"awr_rig_send", map[string]any{"seat": "build@portal", "text": "hello"}},
		{"awr_rig_capture", map[string]any{"seat": "build@portal"}},
		{"awr_rig_down", map[string]any{"rig": "portal"}},
	}
	tools, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	for _, tl := range tools.Tools {
		calls = append(calls, struct {
			tool string
			args map[string]any
		}{tl.Name, map[string]any{}})
	}
	for _, c := range calls {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		require.NoError(t, err, c.tool)
		require.Equal(t, "cminflt=0 cmajflt=0 cutime=0 cstime=0", childCounters(t, pid), "after %s %v the server had started a process", c.tool, c.args)
		if c.tool == "awr_evidence_add" && c.args["exit_code"] == nil && c.args["command"] != nil {
			var e map[string]any
			require.NoError(t, json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &e))
			require.True(t, res.IsError, "%v", e)
			require.Equal(t, "InvalidInput", e["code"])
		}
	}
	_, err = os.Stat(marker)
	require.ErrorIs(t, err, os.ErrNotExist, "a command given over MCP ran")
	t.Logf("%d tool calls, no process started", len(calls))
}
