package rig_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fixtures/fakeclaude"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/awr-dev/awr/internal/rig"
)

// fakeRuntimes builds fixtures/fakeclaude and fixtures/fakecodex as
// `claude` and `codex`, puts them first on PATH and gives the agents a
// home, a Claude config directory and a Codex home of their own. It
// returns the Claude config directory and the Codex home.
func fakeRuntimes(t *testing.T) (claudeConf, codexHome string) {
	t.Helper()
	dir := t.TempDir()
	for name, pkg := range map[string]string{"claude": testkit.FakeClaude, "codex": testkit.FakeCodex} {
		if err := os.Symlink(testkit.Program(t, pkg), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	// After the builds: a new HOME would also move the build cache.
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("HOME", t.TempDir())
	claudeConf, codexHome = filepath.Join(t.TempDir(), "claude"), t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", claudeConf)
	t.Setenv("CODEX_HOME", codexHome)
	return claudeConf, codexHome
}

// runtimeSeat declares ROLE@portal with a shipped runtime (its default
// templates unless resume is given).
func (f *fixture) runtimeSeat(role, work, runtime, resume string) string {
	f.t.Helper()
	addr := role + "@portal"
	if _, err := commands.DeclareSeat(context.Background(), f.m.Env, commands.SeatRequest{Address: addr, Runtime: runtime,
		ResumeCommand: resume, Work: work, Policy: events.PolicyResumeIfPossible}); err != nil {
		f.t.Fatal(err)
	}
	return addr
}

func lines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// The claude runtime's own templates against a fake claude that checks
// argv as Claude Code does: a fresh launch under a pre-assigned id, a
// resume that keeps it, and a resume whose transcript is gone, which awr
// must not report as resumed.
func TestRuntimeClaude(t *testing.T) {
	conf, _ := fakeRuntimes(t)
	f := newFixture(t)
	build := f.runtimeSeat("build", "T-1", "claude", "")
	// A resume template that passes --session-id: Claude Code refuses it for
	// an id that exists, and would start an empty conversation under the
	// same id for one that does not.
	review := f.runtimeSeat("review", "T-2", "claude", `claude --session-id {conversation} "$(cat {context_file})"`)

	first := f.up(rig.UpOptions{})
	p := seatOf(first, build)
	if first.Result != rig.FullyRestored || p.Outcome != events.SeatFreshPrimed {
		t.Fatalf("first up: %s %+v %+v", first.Result, p, p.Evidence)
	}
	s := f.seatAt(build)
	conv := s.Conversation
	if conv == "" || conv != s.ExpectedConversation || !strings.HasPrefix(p.Evidence.Command, "claude --session-id "+conv+" ") {
		t.Fatalf("fresh launch: conversation %q, expected %q, command %q", conv, s.ExpectedConversation, p.Evidence.Command)
	}
	cwd, err := filepath.EvalSymlinks(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(conf, "projects", fakeclaude.Slug(cwd), conv+".jsonl")
	if ok, where := rig.ConversationExists("claude", f.dir, conv, os.Getenv); !ok || where != transcript {
		t.Fatalf("ConversationExists = %v %s, want the fake's transcript %s", ok, where, transcript)
	}
	n := lines(t, transcript)

	down := f.down(true)
	for _, d := range down.Seats {
		if !d.Checkpointed {
			t.Fatalf("%s did not checkpoint on the stop message: %+v", d.Address, d)
		}
	}
	if got := lines(t, transcript); got <= n {
		t.Fatal("the stop message did not reach the conversation")
	}

	again := f.up(rig.UpOptions{})
	p = seatOf(again, build)
	if p.Outcome != events.SeatResumed || p.Conversation != conv || !strings.HasPrefix(p.Evidence.Command, "claude --resume "+conv+" ") {
		t.Fatalf("resume: %+v %+v", p, p.Evidence)
	}
	if got := lines(t, transcript); got <= n+1 {
		t.Fatal("the resume did not continue the transcript")
	}
	// --session-id on an existing conversation: the CLI refuses, the
	// seat awaits a decision.
	rp := seatOf(again, review)
	if rp.Outcome != events.SeatAwaitingDecision || !slices.ContainsFunc(rp.Evidence.PaneTail, func(l string) bool { return strings.Contains(l, "is already in use") }) {
		t.Fatalf("review: %+v %+v", rp, rp.Evidence)
	}

	// The transcript is gone: not resumed, and nothing launched.
	f.down(true)
	if err := os.Remove(transcript); err != nil {
		t.Fatal(err)
	}
	plan := f.up(rig.UpOptions{Plan: true})
	if p := seatOf(plan, build); p.Outcome != events.SeatAwaitingDecision || !strings.Contains(p.Reason, transcript) {
		t.Fatalf("plan: %+v", p)
	}
	launched := f.kinds()[events.KindSeatLaunched]
	res := f.up(rig.UpOptions{})
	p = seatOf(res, build)
	if p.Outcome != events.SeatAwaitingDecision || !strings.Contains(p.Reason, "is not in claude's store") || p.Hint != "awr rig up portal --fresh "+build {
		t.Fatalf("missing transcript: %+v", p)
	}
	if got := f.kinds()[events.KindSeatLaunched]; got != launched {
		t.Fatalf("%d seats launched for conversations that cannot resume", got-launched)
	}

	fresh := f.up(rig.UpOptions{Fresh: []string{build}})
	if p := seatOf(fresh, build); p.Outcome != events.SeatFreshPrimed || p.Conversation == conv {
		t.Fatalf("fresh after the loss: %+v", p)
	}
	f.verifyLog()
}

// The codex runtime's own templates against a fake codex: Codex chooses
// the id, awr learns it from the report, resumes it with `codex resume
// ID`, and does not report a resume whose rollout is gone.
func TestRuntimeCodex(t *testing.T) {
	_, home := fakeRuntimes(t)
	f := newFixture(t)
	build := f.runtimeSeat("build", "T-1", "codex", "")

	first := f.up(rig.UpOptions{})
	p := seatOf(first, build)
	if first.Result != rig.FullyRestored || p.Outcome != events.SeatFreshPrimed || !strings.HasPrefix(p.Evidence.Command, "codex ") {
		t.Fatalf("first up: %s %+v %+v", first.Result, p, p.Evidence)
	}
	s := f.seatAt(build)
	conv := s.Conversation
	if conv == "" || s.ExpectedConversation != "" {
		t.Fatalf("codex chooses its id: conversation %q, expected %q", conv, s.ExpectedConversation)
	}
	rollouts, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "*", "rollout-*-"+conv+".jsonl"))
	if len(rollouts) != 1 {
		t.Fatalf("rollouts of %s: %v", conv, rollouts)
	}
	if ok, where := rig.ConversationExists("codex", f.dir, conv, os.Getenv); !ok || where != rollouts[0] {
		t.Fatalf("ConversationExists = %v %s, want %s", ok, where, rollouts[0])
	}
	n := lines(t, rollouts[0])

	if d := f.down(true); !d.Seats[0].Checkpointed {
		t.Fatalf("down: %+v", d.Seats[0])
	}
	again := f.up(rig.UpOptions{})
	p = seatOf(again, build)
	if p.Outcome != events.SeatResumed || p.Conversation != conv || !strings.HasPrefix(p.Evidence.Command, "codex resume "+conv+" ") {
		t.Fatalf("resume: %+v %+v", p, p.Evidence)
	}
	if got := lines(t, rollouts[0]); got <= n+1 {
		t.Fatal("the resume did not continue the rollout")
	}

	f.down(true)
	if err := os.Remove(rollouts[0]); err != nil {
		t.Fatal(err)
	}
	launched := f.kinds()[events.KindSeatLaunched]
	res := f.up(rig.UpOptions{})
	p = seatOf(res, build)
	if p.Outcome != events.SeatAwaitingDecision || !strings.Contains(p.Reason, "is not in codex's store") {
		t.Fatalf("missing rollout: %+v", p)
	}
	if got := f.kinds()[events.KindSeatLaunched]; got != launched {
		t.Fatal("a seat was launched for a conversation that cannot resume")
	}
	f.verifyLog()
}
