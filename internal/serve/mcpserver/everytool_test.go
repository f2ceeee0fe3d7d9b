package mcpserver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/stretchr/testify/require"
)

// TestServer_EveryToolResult calls the tools that the other tests of the
// package only refuse, each to a result: call validates every result
// against the outputSchema tools/list advertises, and TestMain fails a
// whole run in which some tool's result went unvalidated.
func TestServer_EveryToolResult(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := initProject(t)
	manifest := filepath.Join(dir, ".awr", "project.toml")
	b, err := os.ReadFile(manifest)
	require.NoError(t, err)
	if !strings.Contains(string(b), "[continuity]") {
		b = append(b, "\n[continuity]\n"...)
	}
	require.NoError(t, os.WriteFile(manifest, []byte(strings.Replace(string(b), "[continuity]\n", "[continuity]\nevidence_level = \"note\"\n", 1)), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "EXTRA.md"), []byte("# Extra\n\n- [ ] EXTRA-1 Tidy the cart page\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(".awr/\n"), 0o644))
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "start"}} {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	cs := connect(t, dir)

	ok(t, cs, "awr_verify", nil) // no argument: the chain, the domain, the projections
	ok(t, cs, "awr_source_list", nil)
	ok(t, cs, "awr_source_add", map[string]any{"path": "EXTRA.md"})
	ok(t, cs, "awr_doctor_check", nil)

	start := ok(t, cs, "awr_session_start", map[string]any{"work": "CART-1", "agent": "builder", "claim": true})
	sid := get(start, "session.id").(string)
	ok(t, cs, "awr_session_checkpoint", map[string]any{"session": sid, "agent": "builder", "digest": "added the carts table",
		"next_action": "write the cart on every change", "open_loops": []any{"idempotency key"}, "decisions": []any{"carts live in postgres"}})
	ok(t, cs, "awr_client_bind", map[string]any{"client": "claude", "external_session": "c0ffee00-0000-4000-8000-000000000001", "work": "CART-1", "session": sid})
	ok(t, cs, "awr_client_show", map[string]any{"client": "claude", "external_session": "c0ffee00-0000-4000-8000-000000000001"})
	ok(t, cs, "awr_context_hygiene", nil)
	ok(t, cs, "awr_context_confirm", map[string]any{"item": "D-1", "work": "CART-1", "agent": "builder", "note": "still postgres"})
	ok(t, cs, "awr_search", map[string]any{"query": "cart*"})
	ok(t, cs, "awr_work_show", map[string]any{"key": "CART-1"})
	ok(t, cs, "awr_work_history", map[string]any{"key": "CART-1"})
	ok(t, cs, "awr_claim_release", map[string]any{"session": sid})
	ok(t, cs, "awr_work_claim", map[string]any{"key": "CART-1", "session": sid})
	ok(t, cs, "awr_work_release", map[string]any{"key": "CART-1", "session": sid})
	ok(t, cs, "awr_work_claim", map[string]any{"key": "CART-1", "session": sid})

	res := ok(t, cs, "awr_session_resume", map[string]any{"from_session": sid, "agent": "successor", "claim": true})
	succ := get(res, "resumed.session.id").(string)
	rec := ok(t, cs, "awr_recovery_inspect", map[string]any{"session": succ})
	var loops []any
	for _, l := range get(rec, "knowledge").(map[string]any)["open_loops"].([]any) {
		loops = append(loops, l.(map[string]any)["id"])
	}
	var decisions []any
	for _, d := range get(rec, "knowledge").(map[string]any)["decisions"].([]any) {
		decisions = append(decisions, d.(map[string]any)["id"])
	}
	ok(t, cs, "awr_recovery_verify", map[string]any{"session": succ, "restatement": map[string]any{
		"next_action": "write the cart on every change", "open_loops": loops, "decisions": decisions, "files_touched": []any{}, "remaining_check": "Cart survives a browser restart; Writes are idempotent"}})
	ok(t, cs, "awr_session_checkpoint", map[string]any{"session": succ, "agent": "successor", "digest": "read the handoff", "next_action": "write the cart on every change"})
	third := get(ok(t, cs, "awr_session_start", map[string]any{"work": "CART-1", "agent": "third"}), "session.id").(string)
	ok(t, cs, "awr_work_handoff", map[string]any{"key": "CART-1", "from_session": succ, "to_session": third})
	for _, c := range []string{"1", "2"} {
		ok(t, cs, "awr_evidence_add", map[string]any{"work": "CART-1", "criterion": c, "note": "checked by hand", "session": third})
	}
	ok(t, cs, "awr_work_complete", map[string]any{"key": "CART-1", "session": third})

	// A claim and a session no agent will end, and an execution whose
	// process is gone, for the doctor's repairs.
	held := ok(t, cs, "awr_session_start", map[string]any{"work": "EXTRA-1", "agent": "gone", "claim": true})
	ok(t, cs, "awr_doctor_repair_expire_claim", map[string]any{"id": get(held, "claim.id"), "reason": "its agent is gone"})
	ok(t, cs, "awr_doctor_repair_end_session", map[string]any{"id": get(held, "session.id"), "reason": "its agent is gone"})
	env := openEnv(t, dir, 7)
	x, err := commands.StartExecution(ctx, env, commands.ExecRunRequest{SessionID: third, Key: "migrate", Argv: []string{"true"}})
	require.NoError(t, err)
	ok(t, cs, "awr_exec_list", nil)
	ok(t, cs, "awr_exec_show", map[string]any{"id": x.Execution.ID})
	ok(t, cs, "awr_doctor_repair_abandon_execution", map[string]any{"id": x.Execution.ID, "reason": "its process died"})

	// A seat whose last restore asks for attention; another declared and
	// retired.
	seatAwaitingPerson(t, env, "EXTRA-1", "01RESTORE000000000000000000")
	ok(t, cs, "awr_seat_clear_attention", map[string]any{"address": "build@portal", "reason": "looked at it"})
	ok(t, cs, "awr_seat_add", map[string]any{"address": "spare@bench", "runtime": "claude"})
	ok(t, cs, "awr_seat_list", nil)
	ok(t, cs, "awr_seat_remove", map[string]any{"address": "spare@bench"})
}

// TestServer_RigToolResults drives a real agent (the fake agent) in tmux
// through the rig tools, each to a result validated against its
// outputSchema: restore-check, up, send, capture, snapshot, down.
func TestServer_RigToolResults(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("this test needs tmux on PATH (.ci/run installs it): %v", err)
	}
	bin := testkit.Programs(t, testkit.FakeAgent, testkit.AWR)
	dir := initProject(t)
	socket := "awr-mcpserver-" + filepath.Base(dir)
	t.Setenv("AWR_TMUX_SOCKET", socket)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Cleanup(func() { exec.Command("tmux", "-L", socket, "kill-server").Run() })
	env := openEnv(t, dir, 8)
	_, err := commands.DeclareSeat(context.Background(), env, commands.SeatRequest{Address: "build@portal", Runtime: "generic", Work: "CART-1",
		Command: "fakeagent --conversation {conversation}", ResumeCommand: "fakeagent --resume --conversation {conversation}"})
	require.NoError(t, err)
	cs := connect(t, dir)

	ok(t, cs, "awr_rig_restore_check", map[string]any{"rig": "portal"})
	up := ok(t, cs, "awr_rig_up", map[string]any{"rig": "portal", "verify_timeout": int64(60e9)})
	require.Equal(t, "fully_restored", up["result"], "%v", up)
	ok(t, cs, "awr_rig_send", map[string]any{"seat": "build@portal", "text": "please checkpoint now", "agent": "test"})
	var lines []any
	require.Eventually(t, func() bool {
		lines = ok(t, cs, "awr_rig_capture", map[string]any{"seat": "build@portal", "lines": 20})["lines"].([]any)
		return strings.Contains(strings.Join(strings.Fields(strings.Trim(strings.ReplaceAll(strings.TrimSpace(toString(lines)), "\n", " "), " ")), " "), "checkpoint 1 recorded")
	}, time.Minute, 50*time.Millisecond, "pane: %v", lines)
	ok(t, cs, "awr_rig_snapshot", map[string]any{"rig": "portal"})
	ok(t, cs, "awr_rig_down", map[string]any{"rig": "portal", "grace": int64(30e9)})
}

func toString(lines []any) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.(string))
		b.WriteByte('\n')
	}
	return b.String()
}
