package rig_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/rig"
	"pgregory.net/rapid"
)

// `rig up --plan`, `rig restore-check` and `rig up` agree, seat by seat,
// on the outcome (plan and up on the action too), over generated seat
// states: policies, seats with and without a conversation history,
// --fresh, missing directories and programs, work claimed by someone else,
// conversations gone from the agent's store, sessions resumed by hand, and
// the repository committed to or edited after the stop. Plan and
// restore-check write nothing. The agents cooperate here (an agent that misbehaves
// after launch is something no plan can foresee; those outcomes are
// covered one by one in rig_test.go).
// Slow: every rapid check brings a rig down and up with real agents in tmux.
func TestPlanAgreesWithApply(t *testing.T) {
	t.Parallel()
	works := []string{"T-1", "T-2", "T-3", "T-4", "T-5", "T-6"}
	rapid.Check(t, func(rt *rapid.T) {
		f := newFixture(t)
		ctx := context.Background()
		n := rapid.IntRange(1, 4).Draw(rt, "seats")
		type gen struct {
			addr                                 string
			policy                               string
			history, fresh, noCwd, noProg, taken bool
			lostConv, byHand                     bool
		}
		var seats []gen
		for i := 0; i < n; i++ {
			seats = append(seats, gen{
				addr:    fmt.Sprintf("s%d@portal", i),
				policy:  rapid.SampledFrom([]string{events.PolicyResumeIfPossible, events.PolicyRelaunchFresh, events.PolicyCheckpointOnly}).Draw(rt, "policy"),
				history: rapid.Bool().Draw(rt, "history"),
				fresh:   rapid.Bool().Draw(rt, "fresh"),
				noCwd:   rapid.IntRange(0, 5).Draw(rt, "noCwd") == 0,
				noProg:  rapid.IntRange(0, 5).Draw(rt, "noProg") == 0,
				taken:   rapid.IntRange(0, 5).Draw(rt, "taken") == 0,
			})
			g := &seats[len(seats)-1]
			if g.history {
				g.lostConv = rapid.IntRange(0, 3).Draw(rt, "lostConv") == 0
				g.byHand = !g.taken && rapid.IntRange(0, 4).Draw(rt, "byHand") == 0
			}
		}
		commit := rapid.IntRange(0, 3).Draw(rt, "commit") == 0
		edit := rapid.IntRange(0, 3).Draw(rt, "edit") == 0
		// The project is a git work tree; the agents' own files are
		// ignored, so only the drawn commit and edit change it.
		f.write(".gitignore", ".awr/\n.fakeagent/\n")
		f.write("notes.txt", "v1\n")
		f.git("init", "-q")
		f.git("add", ".")
		f.git("commit", "-qm", "first")
		declare := func(g gen, cwd, prog string) {
			if _, err := commands.DeclareSeat(ctx, f.m.Env, commands.SeatRequest{Address: g.addr, Runtime: "generic", Work: works[int(g.addr[1]-'0')],
				Command: prog + " --conversation {conversation}", ResumeCommand: prog + " --resume --conversation {conversation}", Policy: g.policy, Cwd: cwd,
				ConversationStore: fakeStore}); err != nil {
				rt.Fatal(err)
			}
		}
		withHistory := false
		for _, g := range seats {
			if g.history {
				declare(g, "", "fakeagent")
				withHistory = true
			}
		}
		if withHistory {
			f.up(rig.UpOptions{})
			f.down(true)
			for _, g := range seats {
				if g.history && g.lostConv {
					if conv := f.seatAt(g.addr).LastConversation; conv != "" {
						if err := os.Remove(filepath.Join(f.dir, ".fakeagent", "conversations", conv)); err != nil {
							rt.Fatal(err)
						}
					}
				}
				if g.history && g.byHand {
					if _, err := commands.ResumeSession(ctx, f.m.Env, commands.ResumeRequest{FromSession: f.seatAt(g.addr).SessionID, Agent: "by-hand"}); err != nil {
						rt.Fatal(err)
					}
				}
			}
			if commit {
				f.write("notes.txt", "v2\n")
				f.git("commit", "-qam", "after the stop")
			}
			if edit {
				f.write("notes.txt", "edited, not committed\n")
			}
		}
		var fresh []string
		for _, g := range seats {
			cwd, prog := "", "fakeagent"
			if g.noCwd {
				cwd = "gone"
			}
			if g.noProg {
				prog = "no-such-agent"
			}
			declare(g, cwd, prog)
			if g.taken {
				// Someone else claims the seat's work meanwhile.
				if _, err := commands.StartSession(ctx, f.m.Env, commands.StartRequest{Work: works[int(g.addr[1]-'0')], Agent: "someone", Claim: true}); err != nil {
					rt.Fatal(err)
				}
			}
			if g.fresh {
				fresh = append(fresh, g.addr)
			}
		}
		head := f.kinds()
		plan, err := f.m.Up(ctx, rig.UpOptions{Rig: "portal", Fresh: fresh, Plan: true})
		if err != nil {
			rt.Fatal(err)
		}
		var check *rig.RestoreCheckResult
		if len(fresh) == 0 {
			// restore-check predicts an up without --fresh.
			if check, err = f.m.RestoreCheck(ctx, "portal"); err != nil {
				rt.Fatal(err)
			}
		}
		if after := f.kinds(); fmt.Sprint(after) != fmt.Sprint(head) {
			rt.Fatalf("--plan wrote events: %v -> %v", head, after)
		}
		res := f.up(rig.UpOptions{Fresh: fresh})
		for _, g := range seats {
			p, a := seatOf(plan, g.addr), seatOf(res, g.addr)
			if p.Action != a.Action || p.Outcome != a.Outcome {
				rt.Fatalf("%s %+v: plan %s/%s (%s), apply %s/%s (%s)", g.addr, g, p.Action, p.Outcome, p.Reason, a.Action, a.Outcome, a.Reason)
			}
			if check != nil {
				if c := seatCheck(check, g.addr); c.Outcome != a.Outcome || c.Action != a.Action {
					rt.Fatalf("%s %+v: restore-check %s/%s (%s), apply %s/%s (%s)", g.addr, g, c.Action, c.Outcome, c.Reason, a.Action, a.Outcome, a.Reason)
				}
			}
		}
		if plan.Result != res.Result || (check != nil && check.Result != res.Result) {
			rt.Fatalf("plan result %s, apply %s", plan.Result, res.Result)
		}
		f.down(false)
	})
}
