package rig_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
	"github.com/awr-dev/awr/internal/rig"
)

func (f *fixture) resumeByHand(addr, agent string) string {
	f.t.Helper()
	res, err := commands.ResumeSession(context.Background(), f.m.Env, commands.ResumeRequest{FromSession: f.seatAt(addr).SessionID, Agent: agent})
	if err != nil {
		f.t.Fatalf("resume by hand: %v", err)
	}
	return res.Session.ID
}

func (f *fixture) reconcile(req commands.ReconcileRequest) (*commands.ReconcileResult, error) {
	return f.m.Reconcile(context.Background(), req)
}

// After a machine restart someone resumes a seat's session by hand. The
// next up launches nothing and says the seat awaits a reconcile (before,
// it failed trying to resume the old session a second time); reconcile
// adopts the hand-resumed session, recording who and why, and the up after
// it resumes from that session.
func TestReconcile_AfterRestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.seat("a", "T-1", events.PolicyResumeIfPossible)
	f.firstUp()
	old := f.seatAt(a).SessionID
	f.restart()
	succ := f.resumeByHand(a, "alice@laptop")

	launched := f.kinds()[events.KindSeatLaunched]
	plan, err := f.m.Up(context.Background(), rig.UpOptions{Rig: "portal", Plan: true})
	if err != nil {
		t.Fatal(err)
	}
	res := f.up(rig.UpOptions{})
	hint := "awr seat reconcile " + a + " --reason 'WHAT YOU CHECKED'"
	for _, p := range []*rig.SeatPlan{seatOf(plan, a), seatOf(res, a)} {
		if p.Outcome != events.SeatAwaitingDecision || p.Hint != hint || !strings.Contains(p.Reason, succ) {
			t.Fatalf("up with a hand-resumed session: %s %q hint %q", p.Outcome, p.Reason, p.Hint)
		}
	}
	if res.Result == rig.FullyRestored || f.kinds()[events.KindSeatLaunched] != launched {
		t.Fatalf("up launched beside the hand-resumed session: %s", res.Result)
	}
	if ps := f.ps()[a]; ps.State != rig.StateAwaitingDecision || ps.Hint != hint || ps.ResumedBy != succ {
		t.Fatalf("ps: %+v", ps)
	}

	for _, bad := range []struct {
		req  commands.ReconcileRequest
		code fault.Code
	}{
		{commands.ReconcileRequest{Address: a, By: "bob"}, fault.InvalidInput},
		{commands.ReconcileRequest{Address: a, By: "bob", Reason: "x", Session: old}, fault.InvalidInput},
		{commands.ReconcileRequest{Address: a, By: "bob", Reason: "x", Session: "01NOSUCHSESSION"}, fault.InvalidInput},
		{commands.ReconcileRequest{Address: "nobody@portal", By: "bob", Reason: "x"}, fault.NotFound},
		{commands.ReconcileRequest{Address: "not-an-address", By: "bob", Reason: "x"}, fault.InvalidInput},
	} {
		if _, err := f.reconcile(bad.req); !fault.Is(err, bad.code) {
			t.Fatalf("reconcile %+v: want %s, got %v", bad.req, bad.code, err)
		}
	}
	if n := f.kinds()[events.KindSeatReconciled]; n != 0 {
		t.Fatalf("a refused reconcile wrote %d events", n)
	}

	rc, err := f.reconcile(commands.ReconcileRequest{Address: a, By: "bob", Reason: "alice resumed it on her laptop after the outage"})
	if err != nil {
		t.Fatal(err)
	}
	if rc.FromSession != old || rc.SessionID != succ || !rc.SessionActive || rc.Agent != "alice@laptop" || rc.ClaimID == "" ||
		len(rc.Chain) != 2 || rc.Seat.SessionID != succ || rc.Seat.ClaimID != rc.ClaimID || rc.Seat.LaunchRepo != nil {
		t.Fatalf("reconcile: %+v seat %+v", rc, rc.Seat)
	}
	if _, err := f.reconcile(commands.ReconcileRequest{Address: a, By: "bob", Reason: "again"}); !fault.Is(err, fault.InvalidTransition) {
		t.Fatalf("reconciling twice: %v", err)
	}
	var actor string
	if err := f.m.Env.Store.Read(context.Background(), func(r *events.Reader) error {
		return events.ScanEvents(r.Conn, 1, r.Head, func(e *events.Event) error {
			if e.Kind == events.KindSeatReconciled {
				actor = e.Actor
			}
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if actor != "bob" {
		t.Fatalf("the reconcile's actor is %q, not who adopted it", actor)
	}
	if ps := f.ps()[a]; ps.State != rig.StateRecoverable || ps.SessionID != succ {
		t.Fatalf("ps after reconcile: %+v", ps)
	}

	again := f.up(rig.UpOptions{})
	p := seatOf(again, a)
	if again.Result != rig.FullyRestored || p.FromSession != succ || p.Outcome != events.SeatResumed {
		t.Fatalf("up after reconcile: %s %+v", again.Result, p)
	}
	f.verifyLog()
}

// A session resumed by hand while the seat's agent still runs in its pane
// (someone took over in that pane): reconcile adopts it with its claim and
// types nothing into the pane, and the next up finds the seat running.
func TestReconcile_PaneAlive(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.seat("a", "T-1", events.PolicyResumeIfPossible)
	f.firstUp()
	if _, err := f.reconcile(commands.ReconcileRequest{Address: a, By: "bob", Reason: "nothing to adopt"}); !fault.Is(err, fault.InvalidTransition) {
		t.Fatalf("reconcile without a hand resume: %v", err)
	}
	succ := f.resumeByHand(a, "carol")
	// The agent prints its bind after awr recorded it (which is what up
	// waited for): the pane is whole once that line shows.
	f.captureUntil(a, "fakeagent: bound conversation")
	before, err := f.m.Capture(context.Background(), a, 200)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := f.reconcile(commands.ReconcileRequest{Address: a, By: "bob", Reason: "carol continues in the seat's pane", Session: succ})
	if err != nil {
		t.Fatal(err)
	}
	if !rc.SessionActive || rc.ClaimID == "" {
		t.Fatalf("reconcile: %+v", rc)
	}
	after, err := f.m.Capture(context.Background(), a, 200)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(before.Lines, "\n") != strings.Join(after.Lines, "\n") {
		t.Fatalf("reconcile typed into the pane:\nbefore %q\nafter %q", before.Lines, after.Lines)
	}
	launched := f.kinds()[events.KindSeatLaunched]
	res := f.up(rig.UpOptions{})
	if res.Result != rig.FullyRestored || outcomes(res)[a] != events.SeatRunning || f.kinds()[events.KindSeatLaunched] != launched {
		t.Fatalf("up after reconcile: %s %v", res.Result, outcomes(res))
	}
	show, err := f.m.Show(context.Background(), a, commands.Read{})
	if err != nil {
		t.Fatal(err)
	}
	last := show.Occupants[len(show.Occupants)-1]
	if show.State != rig.StateRunning || last.Mode != "reconciled" || last.SessionID != succ {
		t.Fatalf("seat show: %s %+v", show.State, last)
	}
	f.verifyLog()
}

// awr doctor finds the live claim of a seat whose agent is gone (a machine
// restart) and names the restore that answers it; after the restore it is
// no finding.
func TestDoctor_SeatAgentGone(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.seat("a", "T-1", events.PolicyResumeIfPossible)
	f.firstUp()
	door, err := project.Open(context.Background(), f.dir, project.Options{Rig: project.RigOptions{TmuxSocket: f.socket, AwrBin: filepath.Join(bin, "awr")}})
	if err != nil {
		t.Fatal(err)
	}
	defer door.Close()
	doctor := func() []project.DoctorFinding {
		res, err := door.Doctor(context.Background(), project.DoctorRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var out []project.DoctorFinding
		for _, fd := range res.Findings {
			if fd.Code == project.FindingClaimAgentGone {
				out = append(out, fd)
			}
		}
		return out
	}
	if got := doctor(); len(got) != 0 {
		t.Fatalf("a running seat is a finding: %+v", got)
	}
	f.restart()
	got := doctor()
	if len(got) != 1 || got[0].Subject != f.seatAt(a).ClaimID || got[0].Repair != "awr rig up portal" || !strings.Contains(got[0].Message, a) {
		t.Fatalf("after a restart: %+v", got)
	}
	f.up(rig.UpOptions{})
	if got := doctor(); len(got) != 0 {
		t.Fatalf("after the restore: %+v", got)
	}
}
