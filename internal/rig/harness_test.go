package rig_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/project"
	"github.com/awr-dev/awr/internal/rig"
	"github.com/awr-dev/awr/projections"
	"github.com/awr-dev/awr/replay"
)

// bin holds the awr and fakeagent executables built once for the package:
// agents in tmux are real processes calling the real awr binary.
var bin string

func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("rapid.checks"); f != nil && f.Value.String() == "100" {
		n := "6"
		if os.Getenv("AWR_LONG") != "" {
			n = "40"
		}
		f.Value.Set(n)
	}
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	if _, err := exec.LookPath("tmux"); err != nil {
		return 0, fmt.Errorf("rig tests need tmux on PATH (.ci/run installs it): %v", err)
	}
	for _, pkg := range []string{testkit.AWR, testkit.FakeAgent} {
		p, err := testkit.Build(pkg)
		if err != nil {
			return 0, err
		}
		bin = filepath.Dir(p)
	}
	return testkit.Run(m), nil
}

// ledger is a task register with six independent ready items.
const ledger = `goals:
  - id: G-1
    title: Ship the portal
    status: active
rules:
  - id: R-1
    text: Never log secrets.
    strength: hard
items:
  - {id: T-1, title: Build the login page, status: ready, next_action: Write the form}
  - {id: T-2, title: Review the login page, status: ready, next_action: Read the diff}
  - {id: T-3, title: Test the login page, status: ready, next_action: Write the e2e test}
  - {id: T-4, title: Document the login page, status: ready, next_action: Draft the guide}
  - {id: T-5, title: Wire the logout, status: ready, next_action: Add the route}
  - {id: T-6, title: Audit sessions, status: ready, next_action: List the cookies}
`

var socketN atomic.Int64

// fixture is a project with a rig manager on a private tmux server.
type fixture struct {
	t      testing.TB
	dir    string
	m      *rig.Manager
	socket string
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "ledger"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ledger", "work-ledger.yaml"), []byte(ledger), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var st *events.Store
	open := func(create bool) (*events.Store, error) {
		if st != nil {
			return st, nil
		}
		var err error
		st, err = events.Open(ctx, events.DBPath(dir), events.Options{Create: create, Projectors: projections.Projectors(), LockTimeout: 30 * time.Second})
		return st, err
	}
	plan, err := intake.Plan(dir, intake.InitOptions{Name: "portal"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := intake.Accept(ctx, plan, open, commands.NewEnv); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, dir: dir, socket: fmt.Sprintf("awr-test-%d-%d", os.Getpid(), socketN.Add(1))}
	door, err := project.Open(ctx, dir, project.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { door.Close() })
	f.m = &rig.Manager{Dir: dir, Env: commands.NewEnv(st), Stale: door.StaleSources, Tmux: rig.Tmux{Socket: f.socket},
		AwrBin: filepath.Join(bin, "awr"), VerifyTimeout: time.Minute, Poll: 50 * time.Millisecond}
	t.Cleanup(func() {
		exec.Command("tmux", "-L", f.socket, "kill-server").Run()
		st.Close()
	})
	return f
}

// agent is the fake agent's start and resume templates.
const (
	startCmd  = "fakeagent --conversation {conversation}"
	resumeCmd = "fakeagent --resume --conversation {conversation}"
)

// seat declares ROLE@portal on work with the fake agent.
func (f *fixture) seat(role, work, policy string) string {
	f.t.Helper()
	addr := role + "@portal"
	if _, err := commands.DeclareSeat(context.Background(), f.m.Env, commands.SeatRequest{Address: addr, Runtime: "generic",
		Command: startCmd, ResumeCommand: resumeCmd, Work: work, Policy: policy, ConversationStore: fakeStore}); err != nil {
		f.t.Fatal(err)
	}
	return addr
}

// mode tells the fake agent of seat how to behave on its next launch.
func (f *fixture) mode(seat, mode string) {
	f.t.Helper()
	dir := filepath.Join(f.dir, ".fakeagent")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, seat+".mode"), []byte(mode), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) up(opts rig.UpOptions) *rig.UpResult {
	f.t.Helper()
	if opts.Rig == "" {
		opts.Rig = "portal"
	}
	res, err := f.m.Up(context.Background(), opts)
	if err != nil {
		f.t.Fatalf("rig up: %v", err)
	}
	return res
}

// firstUp brings the rig up for the first time and requires every seat
// fully restored.
func (f *fixture) firstUp() {
	f.t.Helper()
	if r := f.up(rig.UpOptions{}); r.Result != rig.FullyRestored {
		f.t.Fatalf("first up: %+v", r.Seats)
	}
}

func (f *fixture) down(snapshot bool) *rig.DownResult {
	f.t.Helper()
	res, err := f.m.Down(context.Background(), rig.DownOptions{Rig: "portal", Snapshot: snapshot, Grace: 10 * time.Second})
	if err != nil {
		f.t.Fatalf("rig down: %v", err)
	}
	return res
}

func (f *fixture) seatAt(addr string) *projections.Seat {
	f.t.Helper()
	var s *projections.Seat
	if err := f.m.Env.Store.Read(context.Background(), func(r *events.Reader) error {
		var err error
		s, err = projections.SeatAt(r.Conn, addr, r.Head)
		return err
	}); err != nil {
		f.t.Fatal(err)
	}
	return s
}

// outcomes maps each seat to its outcome.
func outcomes(res *rig.UpResult) map[string]string {
	out := map[string]string{}
	for _, s := range res.Seats {
		out[s.Address] = s.Outcome
	}
	return out
}

func seatOf(res *rig.UpResult, addr string) *rig.SeatPlan {
	return first(res.Seats, func(s *rig.SeatPlan) bool { return s.Address == addr })
}

// first is the first of list that match takes, or nil.
func first[T any](list []*T, match func(*T) bool) *T {
	for _, x := range list {
		if match(x) {
			return x
		}
	}
	return nil
}

// verifyLog checks the chain and that the projections equal a replay.
func (f *fixture) verifyLog() {
	f.t.Helper()
	rep, err := replay.Verify(context.Background(), f.m.Env.Store, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	if !rep.OK {
		f.t.Fatalf("verify failed: %+v", rep.Checks)
	}
}

// kinds counts the events of each kind in the log.
func (f *fixture) kinds() map[events.Kind]int {
	f.t.Helper()
	out := map[events.Kind]int{}
	if err := f.m.Env.Store.Read(context.Background(), func(r *events.Reader) error {
		return events.ScanEvents(r.Conn, 1, r.Head, func(e *events.Event) error {
			out[e.Kind]++
			return nil
		})
	}); err != nil {
		f.t.Fatal(err)
	}
	return out
}

func (f *fixture) tmuxHas(name string) bool {
	return exec.Command("tmux", "-L", f.socket, "has-session", "-t", "="+name).Run() == nil
}

func (f *fixture) git(args ...string) string {
	f.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", f.dir, "-c", "user.email=t@example.invalid", "-c", "user.name=t"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		f.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}
