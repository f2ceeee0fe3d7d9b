package rig_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/rig"
	"github.com/awr-dev/awr/projections"
)

// capture polls the seat's pane until a line contains want.
func (f *fixture) captureUntil(addr, want string) *rig.CaptureResult {
	f.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		res, err := f.m.Capture(context.Background(), addr, 0)
		if err != nil {
			f.t.Fatalf("rig capture: %v", err)
		}
		for _, l := range res.Lines {
			if strings.Contains(l, want) {
				return res
			}
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("pane of %s never showed %q: %q", addr, want, res.Lines)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A message typed into a running seat reaches its agent (the fake agent
// checkpoints when a line asks it to), is recorded for the audit with its
// sender, and shows in the pane's capture.
func TestSend_ReachesTheAgent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	build := f.seat("build", "T-1", "")
	f.up(rig.UpOptions{})
	f.captureUntil(build, "bound conversation")

	res, err := f.m.Send(context.Background(), rig.SendOptions{Address: build, Text: "please checkpoint now", Agent: "review@portal", RequestID: "send-1"})
	if err != nil {
		t.Fatal(err)
	}
	s := f.seatAt(build)
	if res.SessionID != s.SessionID || res.TmuxSession != s.TmuxSession || res.Seq == 0 || res.Replayed {
		t.Fatalf("send: %+v", res)
	}
	capt := f.captureUntil(build, "checkpoint 1 recorded")
	if !capt.Running || capt.Withheld != 0 || len(capt.Lines) > rig.DefaultCaptureLines {
		t.Fatalf("capture: %+v", capt)
	}
	var sent *events.SeatMessageSent
	var actor string
	f.m.Env.Store.Read(context.Background(), func(r *events.Reader) error {
		return events.ScanEvents(r.Conn, 1, r.Head, func(e *events.Event) error {
			if e.Kind == events.KindSeatMessageSent {
				sent = new(events.SeatMessageSent)
				actor = e.Actor
				if e.Stream != "seat/"+build {
					t.Errorf("stream %s", e.Stream)
				}
				return json.Unmarshal(e.Payload, sent)
			}
			return nil
		})
	})
	if sent == nil || sent.Text != "please checkpoint now" || sent.Agent != "review@portal" || actor != "review@portal" || sent.SessionID != s.SessionID {
		t.Fatalf("recorded %+v by %s", sent, actor)
	}
	var sess *projections.Session
	f.m.Env.Store.Read(context.Background(), func(r *events.Reader) error {
		sess, _ = projections.SessionAt(r.Conn, s.SessionID, r.Head)
		return nil
	})
	if sess.LastCheckpointSeq <= res.Seq {
		t.Fatalf("the agent did not checkpoint after the message: %d <= %d", sess.LastCheckpointSeq, res.Seq)
	}

	// A retried send answers the first one and types nothing twice.
	k := f.kinds()
	again, err := f.m.Send(context.Background(), rig.SendOptions{Address: build, Text: "please checkpoint now", Agent: "review@portal", RequestID: "send-1"})
	if err != nil || !again.Replayed || again.Seq != res.Seq || f.kinds()[events.KindSeatMessageSent] != k[events.KindSeatMessageSent] {
		t.Fatalf("retry: %+v %v", again, err)
	}

	// Newlines are typed as such: each line reaches the agent.
	if _, err := f.m.Send(context.Background(), rig.SendOptions{Address: build, Text: "first line\nnow checkpoint again"}); err != nil {
		t.Fatal(err)
	}
	f.captureUntil(build, "checkpoint 2 recorded")

	few, err := f.m.Capture(context.Background(), build, 2)
	if err != nil || len(few.Lines) != 2 {
		t.Fatalf("capture 2: %+v %v", few, err)
	}
	f.verifyLog()
}

// What a send and a capture refuse: bad text, secrets, bad bounds, and a
// seat that does not run. Nothing is written.
func TestSend_Refusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	build := f.seat("build", "T-1", "")
	ctx := context.Background()
	before := f.kinds()

	_, err := f.m.Send(ctx, rig.SendOptions{Address: build, Text: "hello"})
	if !fault.Is(err, fault.InvalidTransition) || !strings.Contains(fault.As(err).Hint, "awr rig up portal") {
		t.Fatalf("send to a stopped seat: %v", err)
	}
	_, err = f.m.Capture(ctx, build, 0)
	if !fault.Is(err, fault.InvalidTransition) {
		t.Fatalf("capture of a stopped seat: %v", err)
	}
	for _, text := range []string{"", "  ", "tab\there", "esc\x1b[2J", "cr\r", strings.Repeat("x", 16<<10+1)} {
		if _, err := f.m.Send(ctx, rig.SendOptions{Address: build, Text: text}); !fault.Is(err, fault.InvalidInput) {
			t.Errorf("text %.20q: %v", text, err)
		}
	}
	token := "ghp_" + strings.Repeat("z", 36)
	if _, err := f.m.Send(ctx, rig.SendOptions{Address: build, Text: "use " + token}); !fault.Is(err, fault.RuleViolation) || strings.Contains(err.Error(), token) {
		t.Fatalf("secret: %v", err)
	}
	for _, n := range []int{-1, rig.MaxCaptureLines + 1} {
		if _, err := f.m.Capture(ctx, build, n); !fault.Is(err, fault.InvalidInput) {
			t.Errorf("lines %d: %v", n, err)
		}
	}
	if _, err := f.m.Send(ctx, rig.SendOptions{Address: "nobody@portal", Text: "hi"}); !fault.Is(err, fault.NotFound) {
		t.Fatalf("unknown seat: %v", err)
	}
	if _, err := f.m.Snapshot(ctx, "portal"); !fault.Is(err, fault.InvalidTransition) {
		t.Fatalf("snapshot of a stopped rig: %v", err)
	}
	if got := f.kinds(); len(got) != len(before) || got[events.KindSeatMessageSent] != 0 || got[events.KindRigSnapshotTaken] != 0 {
		t.Fatalf("a refusal wrote events: %v", got)
	}

	// The agent exits: its pane stays readable, but it takes no message.
	f.up(rig.UpOptions{})
	f.captureUntil(build, "bound conversation")
	s := f.seatAt(build)
	// The agent prints and lives a moment (a process that exits at once
	// can leave its pane dead before tmux read its output), then exits.
	if err := exec.Command("tmux", "-L", f.socket, "respawn-pane", "-k", "-t", "="+s.TmuxSession+":", "echo agent gone; sleep 0.3").Run(); err != nil {
		t.Fatal(err)
	}
	capt := f.captureUntil(build, "agent gone")
	for deadline := time.Now().Add(time.Minute); capt.Running; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("capture says a dead agent runs: %+v", capt)
		}
		if capt, err = f.m.Capture(ctx, build, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.m.Send(ctx, rig.SendOptions{Address: build, Text: "hello"}); !fault.Is(err, fault.InvalidTransition) {
		t.Fatalf("send to a dead agent: %v", err)
	}
}

// A credential on an agent's screen never leaves awr through a capture.
func TestCapture_WithholdsSecrets(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.seat("a", "T-1", "")
	f.mode(a, "hang-leaky")
	f.m.VerifyTimeout = time.Second
	f.up(rig.UpOptions{})
	res := f.captureUntil(a, "thinking")
	if res.Withheld != 1 || !res.Running {
		t.Fatalf("capture: %+v", res)
	}
	for _, l := range res.Lines {
		if strings.Contains(l, "ghp_") {
			t.Fatalf("a secret left the pane: %q", l)
		}
	}
}

// A snapshot of a running rig leaves it running, is recorded as a down's
// would be, and a later restore (the agent died without a down) uses it.
func TestSnapshot_RunningRig(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	build := f.seat("build", "T-1", "")
	f.up(rig.UpOptions{})
	s := f.seatAt(build)
	ctx := context.Background()

	snap, err := f.m.Snapshot(ctx, "portal")
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Seats) != 1 || !snap.Seats[0].Running || snap.Seats[0].Checkpointed || snap.Seats[0].Conversation != s.Conversation || snap.Seats[0].SessionID != s.SessionID {
		t.Fatalf("snapshot: %+v", snap)
	}
	if !f.tmuxHas(s.TmuxSession) || !f.seatAt(build).SessionActive {
		t.Fatal("the snapshot stopped the seat")
	}
	ps, err := f.m.Ps(ctx, "portal", commands.Read{})
	if err != nil || ps.Snapshot == nil || *ps.Snapshot != snap.Snapshot || ps.Seats[0].State != rig.StateRunning {
		t.Fatalf("ps: %+v %v", ps, err)
	}

	// The machine restarts: the agent is gone, no down was run.
	if err := exec.Command("tmux", "-L", f.socket, "kill-session", "-t", "="+s.TmuxSession).Run(); err != nil {
		t.Fatal(err)
	}
	up := f.up(rig.UpOptions{})
	if up.Snapshot == nil || *up.Snapshot != snap.Snapshot || outcomes(up)[build] != events.SeatResumed || seatOf(up, build).Conversation != s.Conversation {
		t.Fatalf("up after the snapshot: %+v %+v", up, seatOf(up, build))
	}
	if f.kinds()[events.KindRigSnapshotTaken] != 1 {
		t.Fatal("snapshot count")
	}
	f.verifyLog()
}
