package rig_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/rig"
)

// cliUp runs `awr rig up portal --json` as a person would, on the
// fixture's private tmux server, and returns its result and exit code.
func (f *fixture) cliUp() (*rig.UpResult, int, string) {
	f.t.Helper()
	cmd := exec.Command(filepath.Join(bin, "awr"), "--project", f.dir, "rig", "up", "portal", "--json", "--verify-timeout", "60s")
	cmd.Env = append(os.Environ(), "AWR_TMUX_SOCKET="+f.socket)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			f.t.Fatalf("awr rig up: %v", err)
		}
		code = ee.ExitCode()
	}
	var res rig.UpResult
	if err := json.Unmarshal([]byte(stdout.String()), &res); err != nil {
		f.t.Fatalf("awr rig up: stdout is not a result: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	return &res, code, stderr.String()
}

// checkpointNow records a checkpoint for the seat's session through the
// CLI, as its agent does when it finishes a step: the repository as it is
// now is recorded with it.
func (f *fixture) checkpointNow(addr string) string {
	f.t.Helper()
	s := f.seatAt(addr)
	out, err := exec.Command(filepath.Join(bin, "awr"), "--project", f.dir, "session", "checkpoint", "--session", s.SessionID, "--agent", addr,
		"--digest", "wrote the first half", "--next-action", "write the second half", "--json").Output()
	if err != nil {
		f.t.Fatalf("checkpoint: %v", err)
	}
	var res struct {
		Checkpoint struct {
			ID string `json:"id"`
		} `json:"checkpoint"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Checkpoint.ID == "" {
		f.t.Fatalf("checkpoint: %v %s", err, out)
	}
	return res.Checkpoint.ID
}

// downQuick takes the rig down with a snapshot and a short grace: the seats of
// these tests that checkpoint do so at once, and the others never do.
func (f *fixture) downQuick() *rig.DownResult {
	f.t.Helper()
	res, err := f.m.Down(context.Background(), rig.DownOptions{Rig: "portal", Snapshot: true, Grace: 3 * time.Second})
	if err != nil {
		f.t.Fatalf("rig down: %v", err)
	}
	return res
}

// Never green over a loss: each way a seat can stop without a checkpoint
// confirming what its worktree holds, and each way awr cannot tell that
// the conversation came back, ends at best attention_required, `awr rig
// up` exits 1, and the packet the agent is given says why. The control, a
// stop confirmed by a checkpoint with nothing changed after it, resumes
// green and exits 0, so the others fail for what they provoke.
func TestNeverGreenOverALoss(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// provoke runs between the first up and the restore, for seat
		// addr whose repository is repo-a.
		provoke func(f *fixture, addr string)
		noStore bool
		// outcome, and the words the reason and the packet must hold.
		outcome      string
		reason       []string
		packet       []string
		notInReason  []string
		notInPacket  []string
		reference    string
		unrecorded   bool
		wantExitCode int
	}{{
		name: "control",
		provoke: func(f *fixture, addr string) {
			f.downQuick()
		},
		outcome: events.SeatResumed, reason: []string{"resumed and re-bound"}, wantExitCode: 0,
	}, {
		name: "crash_mid_checkpoint",
		provoke: func(f *fixture, addr string) {
			f.write("repo-a/main.txt", "v1 and half of v2\n")
			if d := f.downQuick(); d.Seats[0].Checkpointed || !d.Seats[0].StopRequested {
				f.t.Fatalf("down: %+v", d.Seats[0])
			}
		},
		outcome: events.SeatAttentionRequired,
		reason:  []string{"the worktree changed since the checkpoint", "no checkpoint confirmed the seat's last stop", "work its agent never recorded"},
		packet: []string{"## Your seat needs attention", "your predecessor stopped without a checkpoint, so this may be its unrecorded work",
			// The packet carries the repository, the unrecorded edit
			// with its diff against what the checkpoint recorded.
			"## Repository since checkpoint ", "Unrecorded work in the worktree (uncommitted, not what checkpoint ",
			"- main.txt (modified, +1 -1)", "--- main.txt\n@@ -1,1 +1,1 @@\n-v1\n+v1 and half of v2\n"},
		reference: "checkpoint ", unrecorded: true, wantExitCode: 1,
	}, {
		name: "ignored_stop",
		provoke: func(f *fixture, addr string) {
			f.write("repo-a/main.txt", "v1 and an unrecorded edit\n")
			if d := f.downQuick(); d.Seats[0].Checkpointed {
				f.t.Fatalf("down: %+v", d.Seats[0])
			}
		},
		outcome: events.SeatAttentionRequired,
		reason:  []string{"the worktree changed since the checkpoint", "no checkpoint confirmed the seat's last stop"},
		packet: []string{"## Your seat needs attention", "this may be its unrecorded work",
			"## Repository since checkpoint ", "- main.txt (modified, +1 -1)", "\n-v1\n+v1 and an unrecorded edit\n"},
		reference: "checkpoint ", unrecorded: true, wantExitCode: 1,
	}, {
		name:    "no_conversation_store",
		noStore: true,
		provoke: func(f *fixture, addr string) {
			f.downQuick()
			// The conversation is gone, and the agent will say nothing of
			// it: it starts an empty one under the same id.
			conv := f.seatAt(addr).LastConversation
			if err := os.Remove(filepath.Join(f.dir, ".fakeagent", "conversations", conv)); err != nil {
				f.t.Fatal(err)
			}
			f.mode(addr, "forgetful")
		},
		outcome:      events.SeatAttentionRequired,
		reason:       []string{"awr cannot tell whether conversation", "was resumed with its history", "--conversation-store"},
		packet:       []string{"## Your seat needs attention", "awr cannot tell whether conversation"},
		notInReason:  []string{"worktree"},
		wantExitCode: 1,
	}, {
		name: "tmux_server_killed",
		provoke: func(f *fixture, addr string) {
			f.write("repo-a/main.txt", "v1 and an edit before the crash\n")
			f.restart()
		},
		outcome:   events.SeatAttentionRequired,
		reason:    []string{"the worktree changed since the checkpoint", "no checkpoint confirmed the seat's last stop"},
		packet:    []string{"## Your seat needs attention", "this may be its unrecorded work"},
		reference: "checkpoint ", unrecorded: true, wantExitCode: 1,
	}, {
		name: "commit_while_down",
		provoke: func(f *fixture, addr string) {
			if d := f.downQuick(); !d.Seats[0].Checkpointed {
				f.t.Fatalf("down: %+v", d.Seats[0])
			}
			f.write("repo-a/main.txt", "v2 by a colleague\n")
			f.gitIn("repo-a", "commit", "-qam", "a colleague's commit")
		},
		outcome: events.SeatAttentionRequired,
		reason:  []string{"the repository HEAD moved"},
		packet: []string{"## Your seat needs attention", "the repository HEAD moved",
			// The colleague's commit, with its author, apart from any
			// unrecorded work (there is none: the stop was checkpointed).
			"## Repository since checkpoint ", "(1 commit since the checkpoint):", " a colleague's commit (by t)\n",
			"These commits are not recorded by the checkpoint"},
		notInPacket: []string{"Unrecorded work"},
		notInReason: []string{"unrecorded", "no checkpoint confirmed"},
		reference:   "snapshot ", wantExitCode: 1,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			a := f.repoSeat("a", "T-1", "repo-a")
			if tc.noStore {
				if _, err := commands.DeclareSeat(context.Background(), f.m.Env, commands.SeatRequest{Address: a, Runtime: "generic",
					Command: startCmd, ResumeCommand: resumeCmd, Work: "T-1", Cwd: "repo-a", Policy: events.PolicyResumeIfPossible}); err != nil {
					t.Fatal(err)
				}
			}
			switch tc.name {
			case "crash_mid_checkpoint":
				f.mode(a, "crash-on-stop")
			case "ignored_stop":
				f.mode(a, "ignore-stop")
			}
			if r := f.up(rig.UpOptions{}); r.Result != rig.FullyRestored {
				t.Fatalf("first up: %+v", r.Seats[0])
			}
			// The agent records its work once; what follows is the
			// provocation.
			cp := f.checkpointNow(a)
			// The mode is read at launch: the agent the restore launches
			// behaves, unless the provocation says otherwise.
			f.mode(a, "normal")
			tc.provoke(f, a)

			res, code, stderr := f.cliUp()
			p := seatOf(res, a)
			if p == nil || p.Outcome != tc.outcome || code != tc.wantExitCode {
				t.Fatalf("outcome %+v, exit %d (want %s, exit %d)\n%s", p, code, tc.outcome, tc.wantExitCode, stderr)
			}
			if tc.wantExitCode == 0 {
				if res.Result != rig.FullyRestored {
					t.Fatalf("result %s", res.Result)
				}
				return
			}
			if res.Result == rig.FullyRestored || !strings.Contains(stderr, `"code":"RestoreIncomplete"`) {
				t.Fatalf("result %s, stderr %s", res.Result, stderr)
			}
			for _, w := range tc.reason {
				if !strings.Contains(p.Reason, w) {
					t.Errorf("reason lacks %q: %s", w, p.Reason)
				}
			}
			for _, w := range tc.notInReason {
				if strings.Contains(p.Reason, w) {
					t.Errorf("reason says %q: %s", w, p.Reason)
				}
			}
			if tc.reference != "" {
				if p.Evidence == nil || !strings.HasPrefix(p.Evidence.Reference, tc.reference) {
					t.Fatalf("evidence %+v, want a reference starting %q", p.Evidence, tc.reference)
				}
				if tc.unrecorded && p.Evidence.Reference != "checkpoint "+cp {
					t.Fatalf("reference %s, want the last checkpoint %s", p.Evidence.Reference, cp)
				}
			}
			// The CLI names the project in the command it prints.
			if !strings.HasPrefix(p.Hint, "awr seat clear-attention ") || !strings.HasSuffix(p.Hint, " "+a+" --reason 'WHAT YOU CHECKED'") {
				t.Fatalf("hint %q", p.Hint)
			}
			s := f.seatAt(a)
			body, err := os.ReadFile(s.ContextFile)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.packet {
				if !strings.Contains(string(body), w) {
					t.Errorf("packet lacks %q:\n%s", w, body)
				}
			}
			for _, w := range tc.notInPacket {
				if strings.Contains(string(body), w) {
					t.Errorf("packet says %q:\n%s", w, body)
				}
			}
			// A repeated up stays where it is until a person answers.
			again, code, _ := f.cliUp()
			if again.Result == rig.FullyRestored || code != 1 || seatOf(again, a).Outcome != events.SeatAttentionRequired {
				t.Fatalf("repeated up: %s exit %d %+v", again.Result, code, seatOf(again, a))
			}
			f.verifyLog()
		})
	}
}
