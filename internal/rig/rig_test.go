package rig_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/rig"
	"github.com/awr-dev/awr/projections"
)

// The whole cycle on one seat: first launch, down with a snapshot (the
// agent checkpoints when asked), up again resuming the same conversation
// by id, in a successor session that inherited the checkpoint.
func TestUpDownUp_Resumes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	build := f.seat("build", "T-1", events.PolicyResumeIfPossible)

	first := f.up(rig.UpOptions{})
	if first.Result != rig.FullyRestored || outcomes(first)[build] != events.SeatFreshPrimed {
		t.Fatalf("first up: %+v", first.Seats[0])
	}
	s := f.seatAt(build)
	if !s.SessionActive || s.Conversation == "" || s.Conversation != s.ExpectedConversation {
		t.Fatalf("after first up the seat should be running its pre-assigned conversation: %+v", s)
	}
	conv, firstSession := s.Conversation, s.SessionID
	if !f.tmuxHas(s.TmuxSession) {
		t.Fatalf("tmux session %s not running", s.TmuxSession)
	}
	body, err := os.ReadFile(s.ContextFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"client bind", firstSession, "T-1", "Build the login page",
		"## Keep what a successor needs", "--open-loop", "--resolve-loop ID=", "--drop-loop ID=", "--decision", "--fact", "--hypothesis", "--confirm ID", "--retract ID=", "--supersede ID=",
		"recovery verify --session " + firstSession + " --input restatement.json", `"open_loops": ["L-1", ...]`, `"remaining_check"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("context file lacks %q", want)
		}
	}

	down := f.down(true)
	if down.Snapshot == nil || !down.Seats[0].Checkpointed || !down.Seats[0].Ended {
		t.Fatalf("down: %+v %+v", down, down.Seats[0])
	}
	if f.tmuxHas(s.TmuxSession) {
		t.Fatal("tmux session still running after down")
	}
	s = f.seatAt(build)
	if s.SessionActive {
		t.Fatal("seat session still active after down")
	}

	again := f.up(rig.UpOptions{})
	p := seatOf(again, build)
	if again.Result != rig.FullyRestored || p.Outcome != events.SeatResumed || p.Conversation != conv {
		t.Fatalf("second up: %+v", p)
	}
	if again.Snapshot == nil || *again.Snapshot != *down.Snapshot {
		t.Fatalf("restored from %v, want snapshot %s", again.Snapshot, *down.Snapshot)
	}
	s = f.seatAt(build)
	if s.SessionID == firstSession || s.Conversation != conv {
		t.Fatalf("after resume: %+v", s)
	}
	var sess *projections.Session
	f.m.Env.Store.Read(context.Background(), func(r *events.Reader) error {
		sess, _ = projections.SessionAt(r.Conn, s.SessionID, r.Head)
		return nil
	})
	if sess.PredecessorID != firstSession || sess.Status != projections.SessionActive {
		t.Fatalf("resumed session: %+v", sess)
	}
	k := f.kinds()
	if k[events.KindRestoreStarted] != 2 || k[events.KindRestoreCompleted] != 2 || k[events.KindSeatRestored] != 2 || k[events.KindRigSnapshotTaken] != 1 || k[events.KindStopRequested] != 1 {
		t.Fatalf("event counts: %v", k)
	}
	f.verifyLog()

	// Up again while it runs: nothing is launched or written.
	k = f.kinds()
	third := f.up(rig.UpOptions{})
	if fmt.Sprint(f.kinds()) != fmt.Sprint(k) {
		t.Fatal("an up of a running rig wrote events")
	}
	if s := f.seatAt(build); s.LastOutcome != events.SeatResumed {
		t.Fatalf("last outcome %s", s.LastOutcome)
	}
	if outcomes(third)[build] != events.SeatRunning || third.Result != rig.FullyRestored {
		t.Fatalf("up of a running rig: %+v", third.Seats[0])
	}
	if got := f.seatAt(build).SessionID; got != s.SessionID {
		t.Fatalf("running seat relaunched: %s -> %s", s.SessionID, got)
	}
}

// A rig where only some seats resume: every outcome appears once, the
// roll-up is partial, and nothing is left running for the seat that awaits
// a decision. The decision, once made, is an event and holds.
func TestSeveralSeats_OnlySomeResume(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	build := f.seat("build", "T-1", events.PolicyResumeIfPossible)
	review := f.seat("review", "T-2", events.PolicyResumeIfPossible)
	test := f.seat("test", "T-3", events.PolicyRelaunchFresh)
	docs := f.seat("docs", "T-4", events.PolicyResumeIfPossible)
	ops := f.seat("ops", "T-5", events.PolicyResumeIfPossible)
	f.firstUp()
	reviewConv := f.seatAt(review).Conversation
	f.down(true)

	f.mode(review, "other-id")
	f.mode(docs, "hang")
	if _, err := commands.DeclareSeat(context.Background(), f.m.Env, commands.SeatRequest{Address: ops, Runtime: "generic",
		Command: "no-such-agent-xyz", ResumeCommand: "no-such-agent-xyz --resume {conversation}", Work: "T-5"}); err != nil {
		t.Fatal(err)
	}
	// docs hangs: its wait is short; the others' is the harness's minute.
	f.m.SeatVerifyTimeout = map[string]time.Duration{docs: 3 * time.Second}
	res := f.up(rig.UpOptions{})
	want := map[string]string{build: events.SeatResumed, review: events.SeatAwaitingDecision, test: events.SeatFreshPrimed,
		docs: events.SeatAttentionRequired, ops: events.SeatFailed}
	for addr, o := range want {
		if got := outcomes(res)[addr]; got != o {
			t.Errorf("%s: outcome %s (%s), want %s", addr, got, seatOf(res, addr).Reason, o)
		}
	}
	if res.Result != rig.PartiallyRestored || res.OK() {
		t.Fatalf("result %s", res.Result)
	}
	// awaiting-decision: evidence names both ids, the hint is the exact
	// command, and nothing runs for the seat.
	rp := seatOf(res, review)
	if rp.Evidence == nil || rp.Evidence.ExpectedConv != reviewConv || rp.Evidence.ReportedConv == "" || rp.Evidence.ReportedConv == reviewConv {
		t.Fatalf("review evidence: %+v", rp.Evidence)
	}
	if rp.Hint != "awr rig up portal --fresh "+review {
		t.Fatalf("review hint %q", rp.Hint)
	}
	rs := f.seatAt(review)
	if rs.SessionActive || f.tmuxHas(rs.TmuxSession) {
		t.Fatal("a seat awaiting a decision was left running")
	}
	if rs.LastConversation != reviewConv || rp.Conversation != reviewConv {
		t.Fatalf("the rejected id replaced the seat's conversation: seat %s, outcome %s, want %s", rs.LastConversation, rp.Conversation, reviewConv)
	}
	// attention_required: alive, never reported, pane tail as evidence.
	dp := seatOf(res, docs)
	if dp.Evidence == nil || !slices.ContainsFunc(dp.Evidence.PaneTail, func(l string) bool { return strings.Contains(l, "thinking") }) {
		t.Fatalf("docs evidence: %+v", dp.Evidence)
	}
	if ds := f.seatAt(docs); !ds.SessionActive || !f.tmuxHas(ds.TmuxSession) {
		t.Fatal("attention_required seat should stay running for a person to look at")
	}
	// failed: the error, and the seat's prior state intact.
	op := seatOf(res, ops)
	if op.Evidence == nil || !strings.Contains(op.Evidence.Error, "no-such-agent-xyz") {
		t.Fatalf("ops evidence: %+v", op.Evidence)
	}
	if os := f.seatAt(ops); os.LastConversation == "" || os.SessionActive {
		t.Fatalf("failed seat lost its prior state: %+v", os)
	}
	ps, err := f.m.Ps(context.Background(), "portal", commands.Read{})
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, s := range ps.Seats {
		states[s.Address] = s.State
	}
	if states[build] != rig.StateRunning || states[docs] != rig.StateAttentionRequired || states[review] != rig.StateAwaitingDecision ||
		states[test] != rig.StateRunning || states[ops] != rig.StateRecoverable {
		t.Fatalf("ps states: %v", states)
	}

	// Still undecided: another up asks again and launches nothing for it.
	launched := f.kinds()[events.KindSeatLaunched]
	res2 := f.up(rig.UpOptions{})
	if outcomes(res2)[review] != events.SeatAwaitingDecision {
		t.Fatalf("undecided seat: %+v", seatOf(res2, review))
	}
	if got := f.kinds()[events.KindSeatLaunched]; got != launched {
		t.Fatalf("an up with no decision launched %d seats", got-launched)
	}

	// The decision: --fresh review.
	f.mode(review, "normal")
	res3 := f.up(rig.UpOptions{Fresh: []string{review}})
	if outcomes(res3)[review] != events.SeatFreshPrimed {
		t.Fatalf("fresh review: %+v", seatOf(res3, review))
	}
	// The unanswered attention is never hidden: docs is still
	// attention_required (not running), so the rig is not fully restored.
	for _, r := range []*rig.UpResult{res2, res3} {
		if d := seatOf(r, docs); d.Outcome != events.SeatAttentionRequired || d.Hint != "awr seat clear-attention "+docs+" --reason 'WHAT YOU CHECKED'" || r.Result == rig.FullyRestored {
			t.Fatalf("repeated up hid the attention: %s %+v", r.Result, d)
		}
	}
	if f.kinds()[events.KindSeatDecided] != 1 {
		t.Fatal("the decision was not recorded as an event")
	}
	if s := f.seatAt(review); s.Decision != events.DecisionFresh || s.Policy != events.PolicyResumeIfPossible {
		t.Fatalf("decision/policy: %+v", s)
	}
	f.verifyLog()
}

// failed before anything is launched: a missing cwd; and an agent that
// cannot start. Neither loses the seat's earlier state.
func TestFailedLaunches(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	a := f.seat("a", "T-1", events.PolicyResumeIfPossible)
	if _, err := commands.DeclareSeat(ctx, f.m.Env, commands.SeatRequest{Address: "b@portal", Runtime: "generic", Command: startCmd, Work: "T-2", Cwd: "missing/dir"}); err != nil {
		t.Fatal(err)
	}
	f.mode(a, "fail-start")
	before := f.kinds()[events.KindSessionStarted]
	res := f.up(rig.UpOptions{})
	if res.Result != rig.Failed {
		t.Fatalf("result %s", res.Result)
	}
	ap, bp := seatOf(res, a), seatOf(res, "b@portal")
	if ap.Outcome != events.SeatFailed || ap.Evidence == nil || ap.Evidence.ExitStatus == nil || *ap.Evidence.ExitStatus != 3 ||
		!slices.ContainsFunc(ap.Evidence.PaneTail, func(l string) bool { return strings.Contains(l, "model unavailable") }) {
		t.Fatalf("a: %+v %+v", ap, ap.Evidence)
	}
	if bp.Outcome != events.SeatFailed || !strings.Contains(bp.Reason, "missing/dir") {
		t.Fatalf("b: %+v", bp)
	}
	if got := f.kinds()[events.KindSessionStarted]; got != before+1 {
		t.Fatalf("sessions started: %d, want one (for a; b never launched)", got-before)
	}
	as := f.seatAt(a)
	if as.SessionActive || f.tmuxHas(as.TmuxSession) {
		t.Fatal("a failed launch left something running")
	}
	// The claim went back: the work is free for the next try.
	f.mode(a, "normal")
	if err := os.MkdirAll(filepath.Join(f.dir, "missing", "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	res = f.up(rig.UpOptions{})
	if res.Result != rig.FullyRestored {
		t.Fatalf("retry: %+v %+v", seatOf(res, a), seatOf(res, "b@portal"))
	}
	f.verifyLog()
}

// The repository moved since the snapshot: launched, but a person must
// look first, with both HEADs as evidence.
func TestAttentionRequired_RepositoryMoved(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.git("init", "-q")
	f.git("add", "ledger")
	f.git("commit", "-qm", "ledger")
	build := f.seat("build", "T-1", events.PolicyResumeIfPossible)
	f.up(rig.UpOptions{})
	down := f.down(true)
	_ = down
	oldHead := f.git("rev-parse", "HEAD")
	if err := os.WriteFile(filepath.Join(f.dir, "ledger", "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.git("add", "ledger/notes.txt")
	f.git("commit", "-qm", "moved on")
	newHead := f.git("rev-parse", "HEAD")
	plan, err := f.m.Up(context.Background(), rig.UpOptions{Rig: "portal", Plan: true})
	if err != nil {
		t.Fatal(err)
	}
	res := f.up(rig.UpOptions{})
	p := seatOf(res, build)
	if p.Outcome != events.SeatAttentionRequired || p.Evidence.SnapshotHead != oldHead || p.Evidence.CurrentHead != newHead {
		t.Fatalf("outcome %s evidence %+v", p.Outcome, p.Evidence)
	}
	if seatOf(plan, build).Outcome != p.Outcome || res.OK() {
		t.Fatalf("plan said %s; result %s", seatOf(plan, build).Outcome, res.Result)
	}
	if s := f.seatAt(build); !s.SessionActive || s.Conversation == "" {
		t.Fatalf("attention_required after a successful resume keeps the agent running: %+v", s)
	}
}

// checkpoint_only never launches on a restore; a seat added after the
// snapshot never had a conversation and starts fresh.
func TestCheckpointOnlyAndNewSeat(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	keep := f.seat("keep", "T-1", events.PolicyCheckpointOnly)
	f.up(rig.UpOptions{})
	f.down(true)
	late := f.seat("late", "T-2", events.PolicyResumeIfPossible)
	res := f.up(rig.UpOptions{})
	if o := outcomes(res); o[keep] != events.SeatAwaitingDecision || o[late] != events.SeatFreshPrimed {
		t.Fatalf("outcomes %v (%s)", o, seatOf(res, keep).Reason)
	}
	if !strings.Contains(seatOf(res, keep).Reason, "checkpoint_only") {
		t.Fatalf("reason %q", seatOf(res, keep).Reason)
	}
	// A person decides: fresh from the checkpoint.
	res = f.up(rig.UpOptions{Fresh: []string{keep}})
	if o := outcomes(res); o[keep] != events.SeatFreshPrimed || o[late] != events.SeatRunning || !res.OK() {
		t.Fatalf("after --fresh: %v", o)
	}
	s := f.seatAt(keep)
	body, err := os.ReadFile(s.ContextFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), "fakeagent step 1 on T-1") {
		t.Fatalf("the fresh context was not compiled from the last checkpoint:\n%s", body)
	}
}

// The policy belongs to the seat: many down/up cycles never change it, and
// each cycle gives the same outcomes.
func TestPolicyPersistsAcrossCycles(t *testing.T) {
	t.Parallel()
	cycles := 4
	if os.Getenv("AWR_LONG") != "" {
		cycles = 25
	}
	f := newFixture(t)
	seats := map[string]string{
		f.seat("build", "T-1", events.PolicyResumeIfPossible): events.SeatResumed,
		f.seat("test", "T-2", events.PolicyRelaunchFresh):     events.SeatFreshPrimed,
		f.seat("keep", "T-3", events.PolicyCheckpointOnly):    events.SeatAwaitingDecision,
	}
	f.up(rig.UpOptions{})
	policies := map[string]string{}
	for addr := range seats {
		policies[addr] = f.seatAt(addr).Policy
	}
	for i := 0; i < cycles; i++ {
		f.down(true)
		res := f.up(rig.UpOptions{})
		for addr, want := range seats {
			if got := outcomes(res)[addr]; got != want {
				t.Fatalf("cycle %d: %s %s (%s), want %s", i, addr, got, seatOf(res, addr).Reason, want)
			}
			if p := f.seatAt(addr).Policy; p != policies[addr] {
				t.Fatalf("cycle %d: %s policy drifted to %s", i, addr, p)
			}
		}
	}
	f.verifyLog()
}

func TestUpErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.m.Up(ctx, rig.UpOptions{Rig: "empty"}); !fault.Is(err, fault.NotFound) {
		t.Fatalf("empty rig: %v", err)
	}
	if _, err := f.m.Up(ctx, rig.UpOptions{Rig: "Bad Name"}); !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("bad name: %v", err)
	}
	f.seat("build", "T-1", "")
	if _, err := f.m.Up(ctx, rig.UpOptions{Rig: "portal", Fresh: []string{"nope@portal"}}); !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("unknown --fresh: %v", err)
	}
	// Changed sources: nothing is launched or written.
	head := f.kinds()
	if err := os.WriteFile(filepath.Join(f.dir, "ledger", "work-ledger.yaml"), []byte(ledger+"\n# edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.m.Up(ctx, rig.UpOptions{Rig: "portal"}); !fault.Is(err, fault.SourceStale) {
		t.Fatalf("stale sources: %v", err)
	}
	if after := f.kinds(); len(after) != len(head) || after[events.KindRestoreStarted] != 0 {
		t.Fatalf("a refused up wrote events: %v", after)
	}
}

// The seat's work cannot be claimed: taken by someone else, or no work at
// all. The plan already says failed, with the reason; nothing is launched.
func TestFailed_WorkNotClaimable(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	a := f.seat("a", "T-1", "")
	if _, err := commands.DeclareSeat(ctx, f.m.Env, commands.SeatRequest{Address: "b@portal", Runtime: "generic", Command: startCmd}); err != nil {
		t.Fatal(err)
	}
	if _, err := commands.StartSession(ctx, f.m.Env, commands.StartRequest{Work: "T-1", Agent: "someone", Claim: true}); err != nil {
		t.Fatal(err)
	}
	plan, err := f.m.Up(ctx, rig.UpOptions{Rig: "portal", Plan: true})
	if err != nil {
		t.Fatal(err)
	}
	res := f.up(rig.UpOptions{})
	for _, r := range []*rig.UpResult{plan, res} {
		if o := outcomes(r); o[a] != events.SeatFailed || o["b@portal"] != events.SeatFailed {
			t.Fatalf("outcomes %v", o)
		}
		if !strings.Contains(seatOf(r, a).Reason, "cannot claim T-1") || !strings.Contains(seatOf(r, "b@portal").Reason, "no work item") {
			t.Fatalf("reasons %q / %q", seatOf(r, a).Reason, seatOf(r, "b@portal").Reason)
		}
	}
	if f.kinds()[events.KindSeatLaunched] != 0 {
		t.Fatal("a seat was launched")
	}
}

// Nothing secret reaches the log through a rig: a pane line that looks
// like a credential is withheld from the evidence, and a --message with
// one is refused before anything is written.
func TestSecretsStayOut(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.seat("a", "T-1", "")
	f.mode(a, "hang-leaky")
	f.m.VerifyTimeout = 2 * time.Second
	res := f.up(rig.UpOptions{})
	p := seatOf(res, a)
	if p.Outcome != events.SeatAttentionRequired || p.Evidence == nil {
		t.Fatalf("outcome %s", p.Outcome)
	}
	withheld := false
	for _, l := range p.Evidence.PaneTail {
		if strings.Contains(l, "ghp_") {
			t.Fatalf("a secret reached the evidence: %q", l)
		}
		withheld = withheld || strings.Contains(l, "withheld")
	}
	if !withheld {
		t.Fatalf("the secret line was not marked withheld: %q", p.Evidence.PaneTail)
	}
	if err := f.m.Env.Store.Read(context.Background(), func(r *events.Reader) error {
		return events.ScanEvents(r.Conn, 1, r.Head, func(e *events.Event) error {
			if strings.Contains(string(e.Payload), "ghp_") {
				t.Fatalf("event %d holds the secret", e.Seq)
			}
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	before := f.kinds()
	_, err := f.m.Down(context.Background(), rig.DownOptions{Rig: "portal", Message: "stop; token ghp_" + strings.Repeat("y", 36)})
	if !fault.Is(err, fault.RuleViolation) || strings.Contains(err.Error(), "ghp_") {
		t.Fatalf("down --message with a secret: %v", err)
	}
	if fmt.Sprint(f.kinds()) != fmt.Sprint(before) {
		t.Fatal("a refused down wrote events")
	}
}

// The default stop message is one line (tmux types it and sends Enter
// once), keeps its placeholders, and names the flags that keep a
// successor's loops, decisions and facts.
func TestDefaultStopMessage(t *testing.T) {
	t.Parallel()
	msg := rig.DefaultStopMessage
	if strings.ContainsAny(msg, "\r\n") {
		t.Fatalf("the stop message is not one line: %q", msg)
	}
	for _, want := range []string{"{rig}", "--session {session}", "--agent {seat}", "--digest", "--next-action",
		"--open-loop", "loops you do not resolve stay open", "--resolve-loop ID=", "--decision", "--fact"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the stop message lacks %q: %s", want, msg)
		}
	}
}

// Addresses that differ only in where '-' and '@' fall never share a tmux
// session.
func TestTmuxNamesDistinct(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if x, y := f.m.TmuxName("a-b@c"), f.m.TmuxName("a@b-c"); x == y {
		t.Fatalf("a-b@c and a@b-c share tmux session %s", x)
	}
}
