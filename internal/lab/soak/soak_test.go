package soak

import (
	"bufio"
	"context"
	"fmt"
	"github.com/awr-dev/awr/fixtures/logkit"
	"math/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	switch mode := os.Getenv("AWR_TEST_CHILD"); mode {
	case "":
		os.Exit(testkit.Run(m))
	case "handoff":
		os.Exit(handoffChild(os.Getenv("AWR_TEST_PROJECT"), os.Getenv("AWR_TEST_WORK"), os.Getenv("AWR_TEST_AGENT")))
	case "write":
		os.Exit(writeChild(os.Getenv("AWR_TEST_PROJECT"), os.Getenv("AWR_TEST_FSIZE"), os.Getenv("AWR_TEST_WRITES")))
	default:
		fmt.Fprintln(os.Stderr, "unknown child mode", mode)
		os.Exit(3)
	}
}

// claimTTL is the lease of the soak's claims: short, so that the claim of a
// killed child expires quickly and its successor can take the work.
const claimTTL = 300

// workItems is how many work items the soak project has; one child at a
// time works on each.
const workItems = 4

// acker prints "committed SEQ ID" for the last event of each acknowledged
// write.
type acker struct {
	st  *events.Store
	out *bufio.Writer
}

func (a *acker) ack(ctx context.Context, rev int64) {
	var id string
	_ = a.st.Read(ctx, func(r *events.Reader) error {
		return events.ScanEvents(r.Conn, rev, rev, func(e *events.Event) error { id = e.ID; return nil })
	})
	fmt.Fprintf(a.out, "committed %d %s\n", rev, id)
	a.out.Flush()
}

// handoffChild runs the full handoff on one work item until killed: start a
// session with a claim, record context, checkpoint with open loops, then
// end the session or resume it in a successor, and again.
func handoffChild(dir, work, agent string) int {
	ctx := context.Background()
	st, err := events.Open(ctx, events.DBPath(dir), events.Options{Projectors: projections.Projectors()})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		return 3
	}
	defer st.Close()
	env := commands.NewEnv(st)
	a := &acker{st: st, out: bufio.NewWriter(os.Stdout)}
	fail := func(op string, err error) int {
		fmt.Fprintf(os.Stderr, "child %s: %v\n", op, err)
		return 4
	}
	session := ""
	for i := 0; ; i++ {
		if session == "" {
			res, err := commands.StartSession(ctx, env, commands.StartRequest{Work: work, Agent: agent, Claim: true, TTLms: new(int64(claimTTL))})
			if fault.Is(err, fault.ClaimConflict) {
				// A killed predecessor's lease has not expired yet.
				time.Sleep(20 * time.Millisecond)
				continue
			}
			if err != nil {
				return fail("start", err)
			}
			session = res.Session.ID
			a.ack(ctx, res.ProjectRevision)
		}
		cres, err := commands.RecordContext(ctx, env, commands.ContextRecordRequest{SessionID: session, ContextHash: fmt.Sprintf("sha256:%064d", i), TokenEstimate: 100, TokenBudget: 1000, Complete: true})
		if err != nil {
			return fail("record context", err)
		}
		a.ack(ctx, cres.ProjectRevision)
		kres, err := commands.RecordCheckpoint(ctx, env, commands.CheckpointRequest{SessionID: session, Agent: agent, Digest: fmt.Sprintf("step %d", i), NextAction: "next", KnowledgeFlags: commands.KnowledgeFlags{OpenLoops: []string{"loop a", "loop b"}}})
		if err != nil {
			return fail("checkpoint", err)
		}
		a.ack(ctx, kres.ProjectRevision)
		if i%2 == 0 {
			res, err := commands.ResumeSession(ctx, env, commands.ResumeRequest{FromSession: session, Agent: agent})
			if err != nil {
				return fail("resume", err)
			}
			session = res.Session.ID
			a.ack(ctx, res.ProjectRevision)
			continue
		}
		res, err := commands.EndSession(ctx, env, commands.EndRequest{SessionID: session, Outcome: events.OutcomeCompleted, Agent: agent})
		if err != nil {
			return fail("end", err)
		}
		session = ""
		a.ack(ctx, res.ProjectRevision)
	}
}

// newProject makes a project with work items W-1..W-n, all ready.
func newProject(t *testing.T, n int) string {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := events.Open(ctx, events.DBPath(dir), events.Options{Create: true, Projectors: projections.Projectors()})
	require.NoError(t, err)
	defer st.Close()
	env := commands.NewEnv(st)
	_, err = commands.Init(ctx, env, commands.InitRequest{Name: "soak"})
	require.NoError(t, err)
	items := make([]events.WorkItem, n)
	for i := range items {
		items[i] = events.WorkItem{Key: fmt.Sprintf("W-%d", i+1), Title: fmt.Sprintf("work %d", i+1), Status: "planned"}
	}
	_, err = commands.IndexSource(ctx, env, commands.IndexRequest{Source: events.SourceIndexed{
		Path: "todo.md", Adapter: "markdown_checklist", ContentHash: "h", Items: items,
	}}, false)
	require.NoError(t, err)
	return dir
}

// childCmd returns the test binary re-executed in the given child mode.
func childCmd(dir, mode string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{"AWR_TEST_CHILD=" + mode, "AWR_TEST_PROJECT=" + dir}, env...)...)
	return cmd
}

// parseAcks adds the child's acknowledgements to acked, refusing two
// different ids for one seq.
func parseAcks(out string, acked map[int64]string) error {
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) != 3 || f[0] != "committed" {
			continue // a line cut short by the kill
		}
		seq, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return fmt.Errorf("bad acknowledgement %q", l)
		}
		if f[2] == "" {
			return fmt.Errorf("acknowledgement %q without id", l)
		}
		if prev, ok := acked[seq]; ok && prev != f[2] {
			return fmt.Errorf("seq %d acknowledged as %s and as %s", seq, prev, f[2])
		}
		acked[seq] = f[2]
	}
	return nil
}

// killOne runs one handoff child on work and SIGKILLs it after a random
// delay, returning what it printed.
func killOne(dir, work, agent string, delay time.Duration, afterFirstAck bool) (string, error) {
	cmd := childCmd(dir, "handoff", "AWR_TEST_WORK="+work, "AWR_TEST_AGENT="+agent)
	stdout := &firstWrite{first: make(chan struct{})}
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	if err := cmd.Start(); err != nil {
		return "", err
	}
	if afterFirstAck {
		select {
		case <-stdout.first:
		case <-time.After(10 * time.Second):
		}
	}
	time.Sleep(delay)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return "", err
	}
	err := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		return stdout.String(), fmt.Errorf("child on %s should die by SIGKILL, got %v; stderr: %s", work, err, stderr.String())
	}
	return stdout.String(), nil
}

// assertSoundLog reopens the project and requires what `awr verify`
// checks (the chain, the projections' bookkeeping, their checksums
// against a scratch rebuild) to pass, the projections to equal those of a
// replay from seq 0 in another project (the log exported and imported),
// and every acknowledged event to be present with its id. It returns the
// head.
func assertSoundLog(t *testing.T, dir string, acked map[int64]string) int64 {
	t.Helper()
	return logkit.RequireSound(t, dir, acked, t.TempDir())
}

// TestSoak_KillDuringHandoff runs one handoff child per work item at once
// and SIGKILLs them at random moments, 40 kills in all (400 with
// AWR_LONG=1); each killed child is replaced by a new one on the same work
// item. Afterwards the chain and projections verify against a scratch
// rebuild and every acknowledged event is present with the same id.
// Slow: each kill waits for a child process to start and run the handoff.
func TestSoak_KillDuringHandoff(t *testing.T) {
	t.Parallel()
	kills := 40
	if os.Getenv("AWR_LONG") != "" {
		kills = 400
	}
	dir := newProject(t, workItems)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	var (
		mu    sync.Mutex
		acked = map[int64]string{}
		errs  []error
		wg    sync.WaitGroup
	)
	for w := 0; w < workItems; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed + int64(w)))
			work := fmt.Sprintf("W-%d", w+1)
			for i := w; i < kills; i += workItems {
				// Every fifth child dies only after its first acknowledged
				// write, so a loaded machine (slow process starts under
				// -race) still kills children in the middle of a handoff.
				out, err := killOne(dir, work, fmt.Sprintf("agent-%d", i), time.Duration(30+rng.Intn(250))*time.Millisecond, i%5 == 0)
				mu.Lock()
				if err == nil {
					err = parseAcks(out, acked)
				}
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}(w)
	}
	wg.Wait()
	require.Empty(t, errs)
	head := assertSoundLog(t, dir, acked)
	require.Greater(t, len(acked), workItems, "children acknowledged almost nothing")
	t.Logf("%d kills, %d acknowledged writes, head %d", kills, len(acked), head)
}

// firstWrite collects a child's output and closes first at its first
// write.
type firstWrite struct {
	mu    sync.Mutex
	buf   strings.Builder
	first chan struct{}
	seen  bool
}

// Write appends p and signals the first write.
func (w *firstWrite) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.seen && len(p) > 0 {
		w.seen = true
		close(w.first)
	}
	return w.buf.Write(p)
}

// String returns what was written.
func (w *firstWrite) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
