package replay_test

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
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// The test binary doubles as the child process of the crash and
// concurrency tests: with AWR_TEST_CHILD set it runs childMain instead of
// the tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("AWR_TEST_CHILD"); mode != "" {
		os.Exit(childMain(mode, os.Getenv("AWR_TEST_PROJECT"), os.Getenv("AWR_TEST_AGENT")))
	}
	os.Exit(testkit.Run(m))
}

// childMain appends through the command layer in a loop, printing
// "committed SEQ ID" after each acknowledged write. In mode "crash" it runs
// until killed; in mode "count=N" it stops after N writes.
func childMain(mode, dir, agent string) int {
	ctx := context.Background()
	st, err := events.Open(ctx, events.DBPath(dir), events.Options{Projectors: projections.Projectors()})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		return 3
	}
	defer st.Close()
	env := commands.NewEnv(st)
	limit := -1
	if n, ok := strings.CutPrefix(mode, "count="); ok {
		limit, _ = strconv.Atoi(n)
	}
	out := bufio.NewWriter(os.Stdout)
	report := func(rev int64) {
		var id string
		_ = st.Read(ctx, func(r *events.Reader) error {
			return events.ScanEvents(r.Conn, rev, rev, func(e *events.Event) error { id = e.ID; return nil })
		})
		fmt.Fprintf(out, "committed %d %s\n", rev, id)
		out.Flush()
	}
	session := ""
	for i := 0; limit < 0 || i < limit; i++ {
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		var rev int64
		switch {
		case session == "":
			res, err := commands.StartSession(wctx, env, commands.StartRequest{Work: "W-1", Agent: agent})
			if err != nil {
				cancel()
				fmt.Fprintln(os.Stderr, "child start:", err)
				return 4
			}
			session, rev = res.Session.ID, res.ProjectRevision
		case i%7 == 6:
			res, err := commands.EndSession(wctx, env, commands.EndRequest{SessionID: session, Outcome: "completed"})
			if err != nil {
				cancel()
				fmt.Fprintln(os.Stderr, "child end:", err)
				return 4
			}
			session, rev = "", res.ProjectRevision
		default:
			res, err := commands.RecordCheckpoint(wctx, env, commands.CheckpointRequest{SessionID: session, Agent: agent, Digest: fmt.Sprintf("step %d", i), NextAction: "next", KnowledgeFlags: commands.KnowledgeFlags{OpenLoops: []string{"loop"}}})
			if err != nil {
				cancel()
				fmt.Fprintln(os.Stderr, "child checkpoint:", err)
				return 4
			}
			rev = res.ProjectRevision
		}
		cancel()
		report(rev)
	}
	return 0
}

// newProcessProject makes a project with one ready work item W-1.
func newProcessProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	st := openProject(t, dir)
	defer st.Close()
	env := commands.NewEnv(st)
	_, err := commands.Init(context.Background(), env, commands.InitRequest{Name: "proc"})
	require.NoError(t, err)
	_, err = commands.IndexSource(context.Background(), env, commands.IndexRequest{Source: events.SourceIndexed{
		Path: "todo.md", Adapter: "markdown_checklist", ContentHash: "h",
		Items: []events.WorkItem{{Key: "W-1", Title: "work", Status: "planned"}},
	}}, false)
	require.NoError(t, err)
	return dir
}

func child(t *testing.T, dir, mode, agent string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AWR_TEST_CHILD="+mode, "AWR_TEST_PROJECT="+dir, "AWR_TEST_AGENT="+agent)
	return cmd
}

// committed parses the child's acknowledgements.
func committed(t *testing.T, lines []string) map[int64]string {
	out := map[int64]string{}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) != 3 || f[0] != "committed" {
			continue // a line cut short by the kill
		}
		seq, err := strconv.ParseInt(f[1], 10, 64)
		require.NoError(t, err)
		out[seq] = f[2]
	}
	return out
}

// TestCrash_KillDuringAppend SIGKILLs a child appending in a loop at random
// moments, many times. After each kill the next child continues; at the end
// the chain verifies, projections equal a rebuild, and every event a child
// acknowledged is present. AWR_LONG=1 runs 300 kills instead of 25.
// Slow: each kill waits for a child process to start and append.
func TestCrash_KillDuringAppend(t *testing.T) {
	t.Parallel()
	kills := 25
	if os.Getenv("AWR_LONG") != "" {
		kills = 300
	}
	dir := newProcessProject(t)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	acked := map[int64]string{}
	for i := 0; i < kills; i++ {
		cmd := child(t, dir, "crash", fmt.Sprintf("agent-%d", i))
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		var lines []string
		var mu sync.Mutex
		done, first := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			sc := bufio.NewScanner(stdout)
			for n := 0; sc.Scan(); n++ {
				mu.Lock()
				lines = append(lines, sc.Text())
				mu.Unlock()
				if n == 0 {
					close(first)
				}
			}
		}()
		// Every fifth child is killed only after its first acknowledged
		// write, so a loaded machine (a slow process start under -race)
		// still kills some children in the middle of appending.
		if i%5 == 0 {
			select {
			case <-first:
			case <-time.After(10 * time.Second):
			}
		}
		time.Sleep(time.Duration(20+rng.Intn(120)) * time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		<-done
		err = cmd.Wait()
		ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
		require.True(t, ok && ws.Signaled(), "child should die by SIGKILL, got %v; stderr: %s", err, stderr.String())
		mu.Lock()
		for seq, id := range committed(t, lines) {
			acked[seq] = id
		}
		mu.Unlock()
	}
	head := logkit.RequireSound(t, dir, acked, "")
	require.Greater(t, head, int64(2), "children appended nothing")
	t.Logf("%d kills, %d acknowledged writes, head %d", kills, len(acked), head)
}

// TestConcurrency_ProcessesAppend runs several processes appending at once:
// every write succeeds (no SQLITE_BUSY surfaces), seqs are gapless and the
// log verifies.
func TestConcurrency_ProcessesAppend(t *testing.T) {
	t.Parallel()
	const procs, writes = 4, 150
	dir := newProcessProject(t)
	var wg sync.WaitGroup
	results := make([][]string, procs)
	errs := make([]error, procs)
	stderrs := make([]strings.Builder, procs)
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			cmd := child(t, dir, fmt.Sprintf("count=%d", writes), fmt.Sprintf("agent-%d", p))
			cmd.Stderr = &stderrs[p]
			out, err := cmd.Output()
			results[p], errs[p] = strings.Split(strings.TrimSpace(string(out)), "\n"), err
		}(p)
	}
	wg.Wait()
	acked := map[int64]string{}
	for p := 0; p < procs; p++ {
		require.NoError(t, errs[p], "process %d: %s", p, stderrs[p].String())
		c := committed(t, results[p])
		require.Len(t, c, writes, "process %d acknowledged every write", p)
		for seq, id := range c {
			_, dup := acked[seq]
			require.False(t, dup, "seq %d acknowledged twice", seq)
			acked[seq] = id
		}
	}
	head := logkit.RequireSound(t, dir, acked, "")
	require.EqualValues(t, 2+procs*writes, head, "gapless: every write is one event")
}
