package mcpserver_test

import (
	"context"
	"math/rand"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// openEnv opens dir's log for a test to write through commands directly.
func openEnv(t *testing.T, dir string, seed int64) *commands.Env {
	t.Helper()
	st, err := events.Open(context.Background(), events.DBPath(dir), events.Options{Projectors: projections.Projectors()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return &commands.Env{Store: st, Now: func() time.Time { return now }, Entropy: rand.New(rand.NewSource(seed))}
}

// declareSeat declares seat build@portal, generic, running command on
// work.
func declareSeat(t *testing.T, env *commands.Env, command, work string) {
	t.Helper()
	_, err := commands.DeclareSeat(context.Background(), env, commands.SeatRequest{Address: "build@portal", Runtime: "generic", Command: command, Work: work})
	require.NoError(t, err)
}

// seatAwaitingPerson declares seat build@portal on work, launches it
// (restore id restoreID) and records that restore as attention_required:
// a seat that awaits a person. It returns the launch.
func seatAwaitingPerson(t *testing.T, env *commands.Env, work, restoreID string) *commands.LaunchResult {
	t.Helper()
	ctx := context.Background()
	declareSeat(t, env, "agent {context_file}", work)
	l, err := commands.LaunchSeat(ctx, env, commands.LaunchRequest{Address: "build@portal", Mode: events.LaunchStart, TmuxSession: "awr-test-none", RestoreID: restoreID})
	require.NoError(t, err)
	_, _, _, err = commands.RecordSeatRestored(ctx, env, events.SeatRestored{RestoreID: restoreID, Address: "build@portal", Rig: "portal",
		Outcome: "attention_required", Reason: "the repository moved", SessionID: l.SessionID})
	require.NoError(t, err)
	return l
}

// awr_rig_restore_check runs the CLI's checks over MCP: a program not on
// PATH is red, and the result comes with RestoreIncomplete; nothing is
// written.
func TestServer_RigRestoreCheck(t *testing.T) {
	t.Parallel()
	dir := initProject(t)
	env := openEnv(t, dir, 4)
	declareSeat(t, env, "no-such-agent-qq {context_file}", "CART-1")
	cs := connect(t, dir)
	before := rev(t, ok(t, cs, "awr_status", nil))

	out := fails(t, cs, "awr_rig_restore_check", map[string]any{"rig": "portal"}, "RestoreIncomplete")
	res := out["result"].(map[string]any)
	require.Equal(t, "red", res["status"])
	seat := res["seats"].([]any)[0].(map[string]any)
	require.Equal(t, "failed", seat["outcome"])
	var program map[string]any
	for _, c := range seat["checks"].([]any) {
		if c.(map[string]any)["name"] == "program" {
			program = c.(map[string]any)
		}
	}
	require.Equal(t, "red", program["status"], "%v", seat)
	require.Contains(t, program["evidence"], "no-such-agent-qq")
	fails(t, cs, "awr_rig_restore_check", map[string]any{"rig": "nope"}, "NotFound")
	require.Equal(t, before, rev(t, ok(t, cs, "awr_status", nil)), "nothing was appended")
}

// awr_seat_reconcile adopts a session resumed by hand, recording the
// user running the server as who adopted it unless told.
func TestServer_SeatReconcile(t *testing.T) {
	t.Parallel()
	dir := initProject(t)
	env := openEnv(t, dir, 5)
	ctx := context.Background()
	declareSeat(t, env, "agent {context_file}", "CART-1")
	l, err := commands.LaunchSeat(ctx, env, commands.LaunchRequest{Address: "build@portal", Mode: events.LaunchStart, TmuxSession: "awr-test-none"})
	require.NoError(t, err)
	cs := connect(t, dir)
	fails(t, cs, "awr_seat_reconcile", map[string]any{"address": "build@portal", "reason": "nothing yet"}, "InvalidTransition")
	r, err := commands.ResumeSession(ctx, env, commands.ResumeRequest{FromSession: l.SessionID, Agent: "alice"})
	require.NoError(t, err)
	fails(t, cs, "awr_seat_reconcile", map[string]any{"address": "build@portal"}, "InvalidInput")

	out := ok(t, cs, "awr_seat_reconcile", map[string]any{"address": "build@portal", "reason": "alice took over"})
	require.Equal(t, r.Session.ID, out["session_id"])
	require.Equal(t, l.SessionID, out["from_session"])
	u, err := user.Current()
	require.NoError(t, err)
	require.Equal(t, u.Username, out["by"])
	require.Equal(t, r.Session.ID, get(out, "seat.session_id"))
	show := ok(t, cs, "awr_seat_show", map[string]any{"address": "build@portal"})
	occ := show["occupants"].([]any)
	require.Equal(t, "reconciled", occ[len(occ)-1].(map[string]any)["mode"])
}

// awr_rig_up refuses, as the CLI does, while another process restores
// the rig: a restore attempt owned by a live process that is not the
// server is InvalidTransition naming that process, and nothing is
// launched or written.
func TestServer_RigUpInProgressElsewhere(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("this test needs tmux on PATH (.ci/run installs it): %v", err)
	}
	t.Parallel()
	dir := initProject(t)
	env := openEnv(t, dir, 6)
	ctx := context.Background()
	declareSeat(t, env, "sh -c 'sleep 60' {context_file}", "CART-1")

	// The other restorer: a real process, alive for the whole test.
	other := exec.Command("sleep", "60")
	require.NoError(t, other.Start())
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	host, _ := os.Hostname()
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	var head int64
	require.NoError(t, env.Store.Read(ctx, func(r *events.Reader) error { head = r.Head; return nil }))
	_, err := commands.StartRestore(ctx, env, events.RestoreStarted{RestoreID: "01RESTOREELSEWHERE000000000", Rig: "portal", Seats: []string{"build@portal"},
		Owner: &events.RestoreOwner{Host: host, BootID: strings.TrimSpace(string(boot)), PID: other.Process.Pid}}, head)
	require.NoError(t, err)

	cs := connect(t, dir)
	before := rev(t, ok(t, cs, "awr_status", nil))
	out := fails(t, cs, "awr_rig_up", map[string]any{"rig": "portal"}, "InvalidTransition")
	require.Contains(t, out["message"], "is in progress in process "+strconv.Itoa(other.Process.Pid))
	require.Equal(t, "awr rig ps portal", out["hint"])
	ps := ok(t, cs, "awr_rig_ps", map[string]any{"rig": "portal"})
	require.Equal(t, "01RESTOREELSEWHERE000000000", ps["unfinished_restore"])
	require.Equal(t, before, rev(t, ok(t, cs, "awr_status", nil)), "nothing was appended")

	// Once that process is gone, the up takes the attempt over.
	require.NoError(t, other.Process.Kill())
	other.Wait()
	plan := ok(t, cs, "awr_rig_up", map[string]any{"rig": "portal", "plan": true})
	require.Equal(t, "fresh-primed", plan["seats"].([]any)[0].(map[string]any)["outcome"])
}

// awr_ready leaves out the work of a seat that awaits a person (an
// attention_required nobody answered), even once nobody holds it; with
// all it says why, and the answer makes the work ready again.
func TestServer_ReadyAwaitsPerson(t *testing.T) {
	t.Parallel()
	dir := initProject(t)
	env := openEnv(t, dir, 9)
	ctx := context.Background()
	l := seatAwaitingPerson(t, env, "CART-1", "01RESTORE000000000000000001")
	_, err := commands.EndSession(ctx, env, commands.EndRequest{SessionID: l.SessionID, Outcome: "interrupted"})
	require.NoError(t, err)
	cs := connect(t, dir)

	ready := ok(t, cs, "awr_ready", map[string]any{"all": true})
	require.Empty(t, ready["ready"], "%v", ready)
	nr := ready["not_ready"].([]any)
	var why []any
	for _, it := range nr {
		if it.(map[string]any)["key"] == "CART-1" {
			why = it.(map[string]any)["reasons"].([]any)
		}
	}
	require.Len(t, why, 1, "%v", nr)
	require.Equal(t, "awaiting_person", why[0].(map[string]any)["code"])
	require.Equal(t, "build@portal", why[0].(map[string]any)["key"])
	st := ok(t, cs, "awr_status", nil)
	require.EqualValues(t, 0, st["ready_count"])
	require.Equal(t, "CART-1", get(st, "queues.waiting").([]any)[0].(map[string]any)["key"])

	ok(t, cs, "awr_seat_clear_attention", map[string]any{"address": "build@portal", "reason": "looked at it"})
	ready = ok(t, cs, "awr_ready", nil)
	require.Equal(t, "CART-1", ready["ready"].([]any)[0].(map[string]any)["key"])
}
