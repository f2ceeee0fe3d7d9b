package rig_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/rig"
)

// fakeStore is where the fake agent keeps its conversations.
const fakeStore = "{project}/.fakeagent/conversations/{conversation}"

func (f *fixture) restoreCheck() *rig.RestoreCheckResult {
	f.t.Helper()
	res, err := f.m.RestoreCheck(context.Background(), "portal")
	if err != nil {
		f.t.Fatalf("restore-check: %v", err)
	}
	return res
}

func checkOf(sc *rig.SeatCheck, name string) *rig.Check {
	return first(sc.Checks, func(c *rig.Check) bool { return c.Name == name })
}

func seatCheck(res *rig.RestoreCheckResult, addr string) *rig.SeatCheck {
	return first(res.Seats, func(s *rig.SeatCheck) bool { return s.Address == addr })
}

// restore-check before and after a machine restart: it predicts what the
// up then does, seat by seat (plan == apply), and names the check behind
// each prediction with its evidence and remediation.
func TestRestoreCheck_MachineRestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.repoSeat("a", "T-1", "repo-a")
	b, c := "b@portal", "c@portal"
	for _, req := range []commands.SeatRequest{
		{Address: a, Runtime: "generic", Command: startCmd, ResumeCommand: resumeCmd, Work: "T-1", Cwd: "repo-a", ConversationStore: fakeStore},
		{Address: b, Runtime: "generic", Command: startCmd, ResumeCommand: resumeCmd, Work: "T-2", ConversationStore: fakeStore},
		{Address: c, Runtime: "generic", Command: startCmd, ResumeCommand: resumeCmd, Work: "T-3"},
	} {
		if _, err := commands.DeclareSeat(context.Background(), f.m.Env, req); err != nil {
			t.Fatal(err)
		}
	}

	before := f.restoreCheck()
	if before.Result != rig.FullyRestored || before.Status != rig.CheckGreen {
		t.Fatalf("before the first up: %s %s %+v", before.Result, before.Status, before.Seats)
	}
	f.firstUp()
	running := f.restoreCheck()
	for _, addr := range []string{a, b, c} {
		sc := seatCheck(running, addr)
		if sc.Outcome != events.SeatRunning || checkOf(sc, rig.CheckRunning) == nil {
			t.Fatalf("%s while running: %+v", addr, sc)
		}
	}
	// c declares no store: awr cannot tell whether its conversation
	// exists, says so, and says how to declare one.
	if cc := checkOf(seatCheck(running, c), rig.CheckConversation); cc.Status != rig.CheckYellow ||
		!strings.Contains(cc.Remediation, "awr seat add "+c+" --runtime generic --command ") || !strings.Contains(cc.Remediation, "--conversation-store") {
		t.Fatalf("c's conversation check: %+v", cc)
	}

	f.restart()
	f.write("repo-a/main.txt", "v2\n")
	f.gitIn("repo-a", "commit", "-qam", "after the restart")
	conv := f.seatAt(b).LastConversation
	if err := os.Remove(filepath.Join(f.dir, ".fakeagent", "conversations", conv)); err != nil {
		t.Fatal(err)
	}
	launchedBefore := f.kinds()[events.KindSeatLaunched]
	check := f.restoreCheck()
	if f.kinds()[events.KindSeatLaunched] != launchedBefore {
		t.Fatal("restore-check launched something")
	}
	if ra := checkOf(seatCheck(check, a), rig.CheckRepository); ra.Status != rig.CheckYellow || !strings.Contains(ra.Evidence, "HEAD moved") ||
		ra.Remediation != "awr seat clear-attention "+a+" --reason 'WHAT YOU CHECKED'" {
		t.Fatalf("a's repository check: %+v", ra)
	}
	if cb := checkOf(seatCheck(check, b), rig.CheckConversation); cb.Status != rig.CheckYellow || !strings.Contains(cb.Evidence, conv) ||
		cb.Remediation != "awr rig up portal --fresh "+b {
		t.Fatalf("b's conversation check: %+v", cb)
	}
	plan, err := f.m.Up(context.Background(), rig.UpOptions{Rig: "portal", Plan: true})
	if err != nil {
		t.Fatal(err)
	}
	res := f.up(rig.UpOptions{})
	// c resumes, but awr cannot tell whether its conversation kept its
	// history: never green.
	want := map[string]string{a: events.SeatAttentionRequired, b: events.SeatAwaitingDecision, c: events.SeatAttentionRequired}
	for addr, outcome := range want {
		if got := seatCheck(check, addr).Outcome; got != outcome || outcomes(plan)[addr] != outcome || outcomes(res)[addr] != outcome {
			t.Fatalf("%s: restore-check %s, plan %s, up %s; want %s", addr, got, outcomes(plan)[addr], outcomes(res)[addr], outcome)
		}
	}
	if check.Result != plan.Result || check.Result != res.Result {
		t.Fatalf("roll-up: restore-check %s, plan %s, up %s", check.Result, plan.Result, res.Result)
	}

	if r := seatOf(res, c); !strings.Contains(r.Reason, "awr cannot tell whether conversation") || r.Conversation == "" {
		t.Fatalf("c's reason: %+v", r)
	}
	// After answering all three, restore-check is green for a and b.
	if err := f.clear(a, "the commit is the agent's own"); err != nil {
		t.Fatal(err)
	}
	if err := f.clear(c, "the agent recalls its earlier work"); err != nil {
		t.Fatal(err)
	}
	if r := f.up(rig.UpOptions{Fresh: []string{b}}); outcomes(r)[b] != events.SeatFreshPrimed {
		t.Fatalf("up --fresh b: %v", outcomes(r))
	}
	after := f.restoreCheck()
	if after.Result != rig.FullyRestored {
		t.Fatalf("after answering: %s %+v", after.Result, after.Seats)
	}
	for _, addr := range []string{a, b} {
		if sc := seatCheck(after, addr); sc.Status != rig.CheckGreen {
			for _, c := range sc.Checks {
				t.Logf("%+v", *c)
			}
			t.Fatalf("%s after answering: %s", addr, sc.Status)
		}
	}
	f.verifyLog()
}

// Red checks: a missing directory, a program not on PATH and work that
// cannot be claimed each predict failed, as the up gives.
func TestRestoreCheck_Red(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	for _, req := range []commands.SeatRequest{
		{Address: "nodir@portal", Runtime: "generic", Command: startCmd, Work: "T-1", Cwd: "gone"},
		{Address: "noprog@portal", Runtime: "generic", Command: "no-such-agent-xyz {context_file}", Work: "T-2"},
		{Address: "nowork@portal", Runtime: "generic", Command: startCmd, Work: "T-3"},
	} {
		if _, err := commands.DeclareSeat(ctx, f.m.Env, req); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := commands.StartSession(ctx, f.m.Env, commands.StartRequest{Work: "T-3", Agent: "someone", Claim: true}); err != nil {
		t.Fatal(err)
	}
	check := f.restoreCheck()
	if check.Status != rig.CheckRed {
		t.Fatalf("status %s", check.Status)
	}
	for addr, name := range map[string]string{"nodir@portal": rig.CheckCwd, "noprog@portal": rig.CheckProgram, "nowork@portal": rig.CheckWork} {
		sc := seatCheck(check, addr)
		c := checkOf(sc, name)
		if sc.Status != rig.CheckRed || c == nil || c.Status != rig.CheckRed || c.Remediation == "" || sc.Outcome != events.SeatFailed {
			t.Fatalf("%s: %+v %+v", addr, sc, c)
		}
	}
	res := f.up(rig.UpOptions{})
	for _, sc := range check.Seats {
		if outcomes(res)[sc.Address] != sc.Outcome {
			t.Fatalf("%s: restore-check %s, up %s", sc.Address, sc.Outcome, outcomes(res)[sc.Address])
		}
	}
}
