package rig_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/rig"
)

// gitIn runs git in the project's subdirectory sub.
func (f *fixture) gitIn(sub string, args ...string) string {
	f.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", filepath.Join(f.dir, sub), "-c", "user.email=t@example.invalid", "-c", "user.name=t"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		f.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// repoSeat declares ROLE@portal working in its own repository sub, with
// one commit.
func (f *fixture) repoSeat(role, work, sub string) string {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Join(f.dir, sub), 0o755); err != nil {
		f.t.Fatal(err)
	}
	f.write(sub+"/main.txt", "v1\n")
	f.gitIn(sub, "init", "-q")
	f.gitIn(sub, "add", ".")
	f.gitIn(sub, "commit", "-qm", "first")
	addr := role + "@portal"
	if _, err := commands.DeclareSeat(context.Background(), f.m.Env, commands.SeatRequest{Address: addr, Runtime: "generic",
		Command: startCmd, ResumeCommand: resumeCmd, Work: work, Cwd: sub, Policy: events.PolicyResumeIfPossible, ConversationStore: fakeStore}); err != nil {
		f.t.Fatal(err)
	}
	return addr
}

func (f *fixture) write(rel, body string) {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, rel), []byte(body), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// restart kills the private tmux server by its PID, as a machine restart
// would: no rig down, no stop request, no snapshot.
func (f *fixture) restart() {
	f.t.Helper()
	out, err := exec.Command("tmux", "-L", f.socket, "display-message", "-p", "#{pid}").Output()
	if err != nil {
		f.t.Fatalf("tmux server pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		f.t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		f.t.Fatal(err)
	}
	for i := 0; i < 100 && syscall.Kill(pid, 0) == nil; i++ {
		time.Sleep(20 * time.Millisecond)
	}
}

func (f *fixture) ps() map[string]*rig.PsSeat {
	f.t.Helper()
	res, err := f.m.Ps(context.Background(), "portal", commands.Read{})
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[string]*rig.PsSeat{}
	for _, s := range res.Seats {
		out[s.Address] = s
	}
	return out
}

func (f *fixture) clear(addr, reason string) error {
	_, err := commands.ClearSeatAttention(context.Background(), f.m.Env, commands.ClearAttentionRequest{Address: addr, Reason: reason})
	return err
}

// A machine restart (the tmux server killed, no rig down) after which one
// seat's repository gained a commit and another's dirty content changed
// (dirty before, dirty after): both are attention_required with both
// states in the evidence, the agents are told why, and the attention
// holds over repeated ups until someone answers it.
func TestAttention_MachineRestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.repoSeat("a", "T-1", "repo-a")
	b := f.repoSeat("b", "T-2", "repo-b")
	f.write("repo-b/main.txt", "v1 edited\n")
	f.firstUp()
	headA := f.gitIn("repo-a", "rev-parse", "HEAD")
	f.restart()

	f.write("repo-a/main.txt", "v2\n")
	f.gitIn("repo-a", "commit", "-qam", "after the restart")
	newA := f.gitIn("repo-a", "rev-parse", "HEAD")
	f.write("repo-b/main.txt", "v1 edited again\n")

	plan, err := f.m.Up(context.Background(), rig.UpOptions{Rig: "portal", Plan: true})
	if err != nil {
		t.Fatal(err)
	}
	res := f.up(rig.UpOptions{})
	if res.Result == rig.FullyRestored {
		t.Fatal("a restore with changed repositories is fully_restored")
	}
	pa, pb := seatOf(res, a), seatOf(res, b)
	if pa.Outcome != events.SeatAttentionRequired || pa.Evidence.SnapshotHead != headA || pa.Evidence.CurrentHead != newA ||
		!strings.HasPrefix(pa.Evidence.Reference, "launch at seq ") {
		t.Fatalf("a: %s %s %+v", pa.Outcome, pa.Reason, pa.Evidence)
	}
	if e := pb.Evidence; pb.Outcome != events.SeatAttentionRequired || !e.SnapshotDirty || !e.CurrentDirty ||
		e.SnapshotFingerprint == "" || e.CurrentFingerprint == "" || e.SnapshotFingerprint == e.CurrentFingerprint ||
		!strings.Contains(pb.Reason, "uncommitted changes are different") {
		t.Fatalf("b: %s %s %+v", pb.Outcome, pb.Reason, pb.Evidence)
	}
	for _, p := range []*rig.SeatPlan{pa, pb} {
		if p.Hint != "awr seat clear-attention "+p.Address+" --reason 'WHAT YOU CHECKED'" {
			t.Fatalf("%s hint %q", p.Address, p.Hint)
		}
		if seatOf(plan, p.Address).Outcome != events.SeatAttentionRequired {
			t.Fatalf("plan disagrees for %s: %+v", p.Address, seatOf(plan, p.Address))
		}
		s := f.seatAt(p.Address)
		if !s.SessionActive || !f.tmuxHas(s.TmuxSession) {
			t.Fatalf("%s: the agent is left running for a person to look at", p.Address)
		}
		body, err := os.ReadFile(s.ContextFile)
		if err != nil || !strings.Contains(string(body), "## Your seat needs attention") || !strings.Contains(string(body), "awr seat clear-attention "+p.Address) {
			t.Fatalf("%s context file does not say why: %v\n%s", p.Address, err, body)
		}
		if !f.paneShows(s.TmuxSession, "needs a person's attention") {
			t.Fatalf("%s: the attention message was not typed into the pane", p.Address)
		}
	}
	for addr, s := range f.ps() {
		if s.State != rig.StateAttentionRequired || s.Hint == "" {
			t.Fatalf("ps %s: %+v", addr, s)
		}
	}

	// A repeated up hides nothing: still attention_required, never
	// fully_restored, nothing relaunched.
	launched := f.kinds()[events.KindSeatLaunched]
	again := f.up(rig.UpOptions{})
	if again.Result == rig.FullyRestored || outcomes(again)[a] != events.SeatAttentionRequired || outcomes(again)[b] != events.SeatAttentionRequired {
		t.Fatalf("repeated up: %s %v", again.Result, outcomes(again))
	}
	if f.kinds()[events.KindSeatLaunched] != launched {
		t.Fatal("a repeated up relaunched a running seat")
	}

	// Answering: a's attention cleared, the next up reports it running; b
	// still needs its own answer.
	if err := f.clear(a, "checked the commit: it is the agent's own work"); err != nil {
		t.Fatal(err)
	}
	if err := f.clear(a, "again"); !fault.Is(err, fault.InvalidTransition) {
		t.Fatalf("clearing twice: %v", err)
	}
	if err := f.clear(b, " "); !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("clearing without a reason: %v", err)
	}
	third := f.up(rig.UpOptions{})
	if outcomes(third)[a] != events.SeatRunning || outcomes(third)[b] != events.SeatAttentionRequired || third.Result == rig.FullyRestored {
		t.Fatalf("after clearing a: %s %v", third.Result, outcomes(third))
	}
	if err := f.clear(b, "the edit is mine"); err != nil {
		t.Fatal(err)
	}
	fourth := f.up(rig.UpOptions{})
	if fourth.Result != rig.FullyRestored || outcomes(fourth)[a] != events.SeatRunning || outcomes(fourth)[b] != events.SeatRunning {
		t.Fatalf("after clearing both: %s %v", fourth.Result, outcomes(fourth))
	}
	for addr, s := range f.ps() {
		if s.State != rig.StateRunning {
			t.Fatalf("ps %s after clearing: %s", addr, s.State)
		}
	}
	if f.kinds()[events.KindSeatAttentionCleared] != 2 {
		t.Fatalf("clears recorded: %v", f.kinds())
	}

	// A planned stop with a snapshot, then b's still-dirty content changes
	// again: compared by fingerprint, not by the dirty flag.
	f.down(true)
	if st := f.ps()[a].State; st != rig.StateRecoverable {
		t.Fatalf("ps after down: %s", st)
	}
	f.write("repo-b/main.txt", "v1 edited a third time\n")
	fifth := f.up(rig.UpOptions{})
	if outcomes(fifth)[a] != events.SeatResumed || outcomes(fifth)[b] != events.SeatAttentionRequired ||
		!strings.HasPrefix(seatOf(fifth, b).Evidence.Reference, "snapshot ") {
		t.Fatalf("after down and a new edit: %v %+v", outcomes(fifth), seatOf(fifth, b).Evidence)
	}
	// A plain down/up cycle does not reset it.
	f.down(true)
	sixth := f.up(rig.UpOptions{})
	if outcomes(sixth)[a] != events.SeatResumed || outcomes(sixth)[b] != events.SeatAttentionRequired ||
		seatOf(sixth, b).Evidence.PendingAttention == "" {
		t.Fatalf("down/up reset the attention: %v %+v", outcomes(sixth), seatOf(sixth, b))
	}
	f.verifyLog()
}

// paneShows waits briefly for text on the pane of tmux session name.
func (f *fixture) paneShows(name, text string) bool {
	for i := 0; i < 50; i++ {
		out, _ := exec.Command("tmux", "-L", f.socket, "capture-pane", "-p", "-J", "-t", "="+name+":").Output()
		if strings.Contains(string(out), text) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}
