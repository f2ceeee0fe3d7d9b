package rig_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/rig"
	"github.com/awr-dev/awr/projections"
)

// awrUp runs the real awr binary's `rig up` on the fixture's project and
// tmux server, with a crash point.
func (f *fixture) awrUp(crashpoint string) (*exec.Cmd, error) {
	cmd := exec.Command(filepath.Join(bin, "awr"), "--project", f.dir, "rig", "up", "portal", "--json", "--verify-timeout", "15s")
	cmd.Env = append(os.Environ(), "AWR_TMUX_SOCKET="+f.socket, "AWR_TEST_CRASHPOINT="+crashpoint, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return cmd, cmd.Run()
}

// A process killed between restore_started and restore_completed leaves a
// visible unfinished attempt; the next `rig up` continues it without
// relaunching the seats already restored (nor those already launched and
// still running), and completes it once.
func TestCrashMidRestore_Continues(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"restore_started", "seat_restored:1", "seat_restored:2"} {
		t.Run(point, func(t *testing.T) {
			f := newFixture(t)
			addrs := []string{f.seat("a", "T-1", ""), f.seat("b", "T-2", ""), f.seat("c", "T-3", "")}
			f.up(rig.UpOptions{})
			f.down(true)
			before := f.kinds()

			cmd, err := f.awrUp(point)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("awr rig up with crash point %s: %v (want killed)", point, err)
			}
			_ = cmd
			mid := f.kinds()
			if mid[events.KindRestoreStarted] != before[events.KindRestoreStarted]+1 || mid[events.KindRestoreCompleted] != before[events.KindRestoreCompleted] {
				t.Fatalf("after the crash: %v", mid)
			}
			ps, err := f.m.Ps(context.Background(), "portal", commands.Read{})
			if err != nil {
				t.Fatal(err)
			}
			if ps.UnfinishedRestore == "" {
				t.Fatal("ps does not show the unfinished restore")
			}
			restoredMid := mid[events.KindSeatRestored] - before[events.KindSeatRestored]
			launchedMid := mid[events.KindSeatLaunched] - before[events.KindSeatLaunched]

			res := f.up(rig.UpOptions{})
			if !res.Continued || res.RestoreID != ps.UnfinishedRestore {
				t.Fatalf("the next up did not continue %s: %+v", ps.UnfinishedRestore, res)
			}
			if res.Result != rig.FullyRestored {
				t.Fatalf("continued restore: %+v", res.Seats)
			}
			for _, a := range addrs {
				if o := outcomes(res)[a]; o != events.SeatResumed {
					t.Fatalf("%s: %s (%s)", a, o, seatOf(res, a).Reason)
				}
			}
			after := f.kinds()
			if got := after[events.KindSeatLaunched] - before[events.KindSeatLaunched]; got != len(addrs) {
				t.Fatalf("seats launched over the attempt: %d, want %d (launched before the crash: %d)", got, len(addrs), launchedMid)
			}
			if got := after[events.KindSeatRestored] - before[events.KindSeatRestored]; got != len(addrs) {
				t.Fatalf("seat_restored over the attempt: %d, want %d (before the crash: %d)", got, len(addrs), restoredMid)
			}
			if after[events.KindRestoreCompleted] != before[events.KindRestoreCompleted]+1 {
				t.Fatalf("restore_completed: %v", after)
			}
			// Each seat has exactly one outcome in the attempt.
			f.m.Env.Store.Read(context.Background(), func(r *events.Reader) error {
				for _, a := range addrs {
					n := 0
					log, _ := projections.SeatLogAt(r.Conn, a, r.Head)
					for _, e := range log {
						var sr events.SeatRestored
						if e.Kind == "restored" && json.Unmarshal(e.Data, &sr) == nil && sr.RestoreID == res.RestoreID {
							n++
						}
					}
					if n != 1 {
						t.Errorf("%s has %d outcomes in attempt %s", a, n, res.RestoreID)
					}
				}
				return nil
			})
			f.verifyLog()
		})
	}
}

// Two `awr rig up` processes race on one rig, started together or the
// second while the first restores: between them every seat is launched
// once, each seat gets one outcome per attempt and every attempt completes
// once; an up that loses stops (RevisionConflict, or InvalidTransition
// while the other is restoring), and a third up finishes whatever is left
// without launching anything again.
// Slow: each round launches three agents in tmux and races two processes.
func TestConcurrentUps(t *testing.T) {
	t.Parallel()
	rounds := 4
	if os.Getenv("AWR_LONG") != "" {
		rounds = 20
	}
	for round := 0; round < rounds; round++ {
		// Odd rounds start the second up while the first is restoring: it
		// finds the attempt in progress and stops.
		stagger := time.Duration(round%2) * 500 * time.Millisecond
		f := newFixture(t)
		addrs := []string{f.seat("a", "T-1", ""), f.seat("b", "T-2", ""), f.seat("c", "T-3", "")}
		f.up(rig.UpOptions{})
		f.down(true)
		verify := "60s"
		if stagger > 0 {
			// c hangs, so the first up is still restoring (waiting for
			// c's report) when the second starts; a and b must report
			// within the same wait, which leaves a loaded machine room.
			f.mode(addrs[2], "hang")
			verify = "10s"
		}
		before := f.kinds()
		errs := make(chan error, 2)
		outs := make(chan string, 2)
		for i := 0; i < 2; i++ {
			delay := time.Duration(i) * stagger
			go func() {
				time.Sleep(delay)
				cmd := exec.Command(filepath.Join(bin, "awr"), "--project", f.dir, "rig", "up", "portal", "--json", "--verify-timeout", verify)
				cmd.Env = append(os.Environ(), "AWR_TMUX_SOCKET="+f.socket, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
				var stderr strings.Builder
				cmd.Stderr = &stderr
				err := cmd.Run()
				outs <- stderr.String()
				errs <- err
			}()
		}
		lost := 0
		for i := 0; i < 2; i++ {
			err, msg := <-errs, <-outs
			if stagger > 0 && err != nil && strings.Contains(msg, "RestoreIncomplete") {
				continue // the first up: c hung, as it was told to
			}
			// Losing: the other up started first (RevisionConflict), or
			// it is restoring right now (InvalidTransition, in progress).
			if err != nil && !strings.Contains(msg, "RevisionConflict") && !strings.Contains(msg, "is in progress in process") {
				t.Fatalf("round %d: an up failed other than by losing the race: %v\n%s", round, err, msg)
			}
			if err != nil {
				lost++
			}
		}
		t.Logf("round %d: %d of 2 ups lost the race", round, lost)
		if stagger > 0 && lost != 1 {
			t.Fatalf("round %d: the up started during a restore was not refused", round)
		}
		res := f.up(rig.UpOptions{})
		for _, a := range addrs {
			if o := outcomes(res)[a]; o != events.SeatRunning && o != events.SeatResumed && !(stagger > 0 && a == addrs[2] && o == events.SeatAttentionRequired) {
				t.Fatalf("round %d: %s %s (%s)", round, a, o, seatOf(res, a).Reason)
			}
		}
		after := f.kinds()
		if got := after[events.KindSeatLaunched] - before[events.KindSeatLaunched]; got != len(addrs) {
			t.Fatalf("round %d: %d launches for %d seats", round, got, len(addrs))
		}
		if started, done := after[events.KindRestoreStarted]-before[events.KindRestoreStarted], after[events.KindRestoreCompleted]-before[events.KindRestoreCompleted]; started != done {
			t.Fatalf("round %d: %d attempts started, %d completed", round, started, done)
		}
		if err := f.m.Env.Store.Read(context.Background(), func(r *events.Reader) error {
			for _, a := range addrs {
				per := map[string]int{}
				log, err := projections.SeatLogAt(r.Conn, a, r.Head)
				if err != nil {
					return err
				}
				for _, e := range log {
					var sr events.SeatRestored
					if e.Kind == "restored" && json.Unmarshal(e.Data, &sr) == nil {
						per[sr.RestoreID]++
					}
				}
				for id, n := range per {
					if n != 1 {
						t.Errorf("round %d: %s has %d outcomes in attempt %s", round, a, n, id)
					}
				}
				if len(per) == 0 {
					t.Errorf("round %d: %s has no outcome", round, a)
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		f.verifyLog()
	}
}

// A crash mid-restore, then a down: the down abandons the attempt, and the
// next up starts a new one that launches every seat again (nothing is
// reported restored from the abandoned attempt).
func TestCrashThenDown_Abandons(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	addrs := []string{f.seat("a", "T-1", ""), f.seat("b", "T-2", "")}
	f.up(rig.UpOptions{})
	f.down(true)
	if _, err := f.awrUp("seat_restored:1"); err == nil {
		t.Fatal("the crash point did not kill rig up")
	}
	f.down(true)
	ps, err := f.m.Ps(context.Background(), "portal", commands.Read{})
	if err != nil {
		t.Fatal(err)
	}
	if ps.UnfinishedRestore != "" || ps.LastResult != rig.Abandoned {
		t.Fatalf("after the down: unfinished %q, last result %q", ps.UnfinishedRestore, ps.LastResult)
	}
	before := f.kinds()[events.KindSeatLaunched]
	res := f.up(rig.UpOptions{})
	if res.Continued || res.Result != rig.FullyRestored {
		t.Fatalf("up after the down: %+v", res)
	}
	for _, a := range addrs {
		if o := outcomes(res)[a]; o != events.SeatResumed {
			t.Fatalf("%s: %s (%s)", a, o, seatOf(res, a).Reason)
		}
	}
	if got := f.kinds()[events.KindSeatLaunched] - before; got != len(addrs) {
		t.Fatalf("%d launches, want %d", got, len(addrs))
	}
	f.verifyLog()
}

// A seat left awaiting a decision in an attempt that a crash interrupted:
// `--fresh` on the continued attempt relaunches it, and that outcome is
// recorded (a second outcome in the same attempt, for the new launch).
func TestFreshInContinuedAttempt(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a, b := f.seat("a", "T-1", ""), f.seat("b", "T-2", "")
	f.up(rig.UpOptions{})
	f.down(true)
	f.mode(a, "other-id")
	f.mode(b, "hang")
	// a records awaiting-decision first (b hangs), then the process dies.
	cmd := exec.Command(filepath.Join(bin, "awr"), "--project", f.dir, "rig", "up", "portal", "--json", "--verify-timeout", "15s")
	cmd.Env = append(os.Environ(), "AWR_TMUX_SOCKET="+f.socket, "AWR_TEST_CRASHPOINT=seat_restored:1", "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if err := cmd.Run(); err == nil {
		t.Fatal("the crash point did not kill rig up")
	}
	if s := f.seatAt(a); s.LastOutcome != events.SeatAwaitingDecision {
		t.Fatalf("a before --fresh: %s", s.LastOutcome)
	}
	f.mode(a, "normal")
	f.mode(b, "normal")
	res := f.up(rig.UpOptions{Fresh: []string{a}})
	if !res.Continued || outcomes(res)[a] != events.SeatFreshPrimed {
		t.Fatalf("continued %v, a %s (%s)", res.Continued, outcomes(res)[a], seatOf(res, a).Reason)
	}
	if s := f.seatAt(a); s.LastOutcome != events.SeatFreshPrimed || !s.SessionActive {
		t.Fatalf("the log does not say what was printed: %+v", s)
	}
	f.verifyLog()
}
