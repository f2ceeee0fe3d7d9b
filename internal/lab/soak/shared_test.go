package soak

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/awr-dev/awr/events/pgstore/pgtest"
	"github.com/stretchr/testify/require"
)

// TestShared_WritersUnderFaults: 8 machines write checkpoints to one shared
// log while their awr processes are killed at random (SIGKILL, mid-append
// among others), every connection is ended by the server twice
// (pg_terminate_backend storms) and the cluster is restarted once. Every
// write a process acknowledged is in the log exactly once, a killed or
// failed write retried with its request id lands once, no event is
// half-written (verify passes on two machines), and every machine ends at
// the same head. 60 s with AWR_LONG=1, a few seconds otherwise.
func TestShared_WritersUnderFaults(t *testing.T) {
	t.Parallel()
	c := pgtest.OwnCluster(t)
	bin := awrBinary(t)
	run := 6 * time.Second
	if os.Getenv("AWR_LONG") == "1" {
		run = 60 * time.Second
	}
	const writers = 8
	db := c.CreateDatabase(t, "soak")

	var todo bytes.Buffer
	todo.WriteString("# Tasks\n\n")
	for i := range writers {
		fmt.Fprintf(&todo, "- [ ] T-%d: task %d\n", i, i)
	}
	machineDir := func(i int) string {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("m%d", i))
		require.NoError(t, os.MkdirAll(filepath.Join(dir, ".awr"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"), todo.Bytes(), 0o644))
		return dir
	}
	awrAt := func(dir string, args ...string) *exec.Cmd {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "AWR_PROJECT="+dir, "AWR_TIMEOUT=20s", "TZ=UTC", "NO_COLOR=1")
		return cmd
	}
	first := machineDir(0)
	out, err := awrAt(first, "init", "--store", db, "--name", "soak", "--accept", "--json").CombinedOutput()
	require.NoError(t, err, "%s", out)
	manifest, err := os.ReadFile(filepath.Join(first, ".awr", "project.toml"))
	require.NoError(t, err)
	dirs := []string{first}
	for i := 1; i < writers; i++ {
		d := machineDir(i)
		require.NoError(t, os.WriteFile(filepath.Join(d, ".awr", "project.toml"), manifest, 0o644))
		dirs = append(dirs, d)
	}

	var kills, failures, replays atomic.Int64
	// write runs one awr write until some process of it answers, retrying
	// with the same request id after a kill or a failure; it returns the
	// answer and whether the process that answered was a retry.
	write := func(rng *rand.Rand, dir string, args ...string) (map[string]any, error) {
		for attempt := 0; attempt < 200; attempt++ {
			cmd := awrAt(dir, append(args, "--json")...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			if rng.Intn(4) == 0 {
				delay := time.Duration(rng.Intn(60)) * time.Millisecond
				timer := time.AfterFunc(delay, func() { cmd.Process.Kill() })
				defer timer.Stop()
			}
			err := cmd.Wait()
			if err == nil {
				var res map[string]any
				if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
					return nil, fmt.Errorf("awr %v printed %q: %v", args, stdout.String(), err)
				}
				if res["replayed"] == true {
					replays.Add(1)
				}
				return res, nil
			}
			if ee, ok := err.(*exec.ExitError); ok && ee.Sys().(syscall.WaitStatus).Signaled() {
				kills.Add(1)
				continue
			}
			var fe struct{ Code string }
			if json.Unmarshal(stderr.Bytes(), &fe) != nil || fe.Code != "Storage" {
				return nil, fmt.Errorf("awr %v: only the faults may fail a write: %s", args, stderr.String())
			}
			failures.Add(1)
			time.Sleep(50 * time.Millisecond)
		}
		return nil, fmt.Errorf("awr %v never succeeded in 200 attempts", args)
	}

	type ack struct {
		request string
		rev     int64
	}
	acks := make(chan ack, 1<<16)
	deadline := time.Now().Add(run)
	var wg sync.WaitGroup
	for i, dir := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(i) + 1))
			agent := fmt.Sprintf("w%d", i)
			res, err := write(rng, dir, "session", "start", "--work", fmt.Sprintf("T-%d", i), "--agent", agent, "--claim", "--request-id", "start-"+agent)
			if err != nil {
				t.Error(err)
				return
			}
			session := res["session"].(map[string]any)["id"].(string)
			for n := 0; time.Now().Before(deadline); n++ {
				id := fmt.Sprintf("%s-%d", agent, n)
				res, err := write(rng, dir, "session", "checkpoint", "--session", session, "--agent", agent,
					"--digest", "step "+id, "--next-action", "the next step", "--request-id", id)
				if err != nil {
					t.Error(err)
					return
				}
				acks <- ack{request: id, rev: int64(res["project_revision"].(float64))}
			}
		}()
	}
	// The faults, while the writers run.
	time.Sleep(run / 4)
	storm := func(i int) {
		n, err := c.Terminate("")
		require.NoError(t, err)
		t.Logf("storm %d ended %d connections", i, n)
	}
	storm(1)
	time.Sleep(run / 4)
	require.NoError(t, c.Restart())
	t.Log("cluster restarted")
	time.Sleep(run / 4)
	storm(2)
	wg.Wait()
	close(acks)

	acked := map[string]int64{}
	for a := range acks {
		acked[a.request] = a.rev
	}
	require.NotEmpty(t, acked)
	out, err = awrAt(dirs[1], "log", "--limit", "0", "--json").Output()
	require.NoError(t, err)
	var log struct {
		ProjectRevision int64 `json:"project_revision"`
		Events          []struct {
			Seq       int64  `json:"seq"`
			Kind      string `json:"kind"`
			RequestID string `json:"request_id"`
		} `json:"events"`
	}
	require.NoError(t, json.Unmarshal(out, &log))
	seen, kinds := map[string]int{}, map[string]int{}
	for i, e := range log.Events {
		require.EqualValues(t, i+1, e.Seq, "gapless")
		kinds[e.Kind]++
		if e.RequestID != "" {
			seen[e.RequestID]++
		}
	}
	for id, n := range seen {
		require.Equal(t, 1, n, "request %s wrote once", id)
	}
	for id, rev := range acked {
		require.Equal(t, 1, seen[id], "acknowledged write %s (at revision %d) is in the log exactly once", id, rev)
	}
	for _, dir := range []string{dirs[0], dirs[writers-1]} {
		out, err := awrAt(dir, "verify", "--json").Output()
		require.NoError(t, err, "%s", out)
		var v struct {
			OK   bool  `json:"ok"`
			Head int64 `json:"head_seq"`
		}
		require.NoError(t, json.Unmarshal(out, &v))
		require.True(t, v.OK, "%s", out)
	}
	var heads []string
	for _, dir := range dirs {
		out, err := awrAt(dir, "status", "--json").Output()
		require.NoError(t, err, "%s", out)
		var st struct {
			HeadHash string `json:"head_hash"`
		}
		require.NoError(t, json.Unmarshal(out, &st))
		heads = append(heads, st.HeadHash)
	}
	for _, h := range heads {
		require.Equal(t, heads[0], h, "every machine ends at the same head")
	}
	t.Logf("%d writers for %s: %d acknowledged checkpoints, %d events %v, %d processes killed, %d Storage failures retried, %d replayed answers",
		writers, run, len(acked), log.ProjectRevision, kinds, kills.Load(), failures.Load(), replays.Load())
}
