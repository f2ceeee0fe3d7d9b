package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// followed is one line of `awr log --follow --json`.
type followed struct {
	Seq    int64  `json:"seq"`
	Kind   string `json:"kind"`
	Stream string `json:"stream"`
}

// startFollower starts `awr log --follow --json ARGS...` and returns the
// process and a channel of the lines it prints, each decoded (a line that
// is not one whole JSON object fails the test).
func startFollower(t *testing.T, awr func(args ...string) *exec.Cmd, args ...string) (*exec.Cmd, <-chan followed, *sync.WaitGroup) {
	t.Helper()
	cmd := awr(append([]string{"log", "--follow", "--json"}, args...)...)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := make(chan followed, 1000)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var f followed
			if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
				t.Errorf("follower printed a line that is not one JSON object: %q: %v", sc.Text(), err)
				return
			}
			lines <- f
		}
	}()
	return cmd, lines, &wg
}

// TestLogFollow_Processes follows the log from one process while other awr
// processes append to it: the follower prints every event after --since
// exactly once, in seq order, a follower filtered by --work prints exactly
// the events `awr log --work` lists, the writers are never blocked, and
// SIGINT ends the followers with exit 0 after whole lines.
// Slow: followers and writers are real processes, and the followers wait for the writers' events.
func TestLogFollow_Processes(t *testing.T) {
	t.Parallel()
	bin := buildAWR(t)
	_, awr := todoProject(t, bin, "- [ ] T-1: Build\n- [ ] T-2: Review\n")
	head := logSeqs(t, awr)
	since := head[len(head)-1]

	all, allLines, allWG := startFollower(t, awr, "--since", fmt.Sprint(since))
	work, workLines, workWG := startFollower(t, awr, "--since", fmt.Sprint(since), "--work", "T-1")

	// Writers in separate processes, two at a time, while the followers poll.
	var wg sync.WaitGroup
	for _, key := range []string{"T-1", "T-2"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 3 {
				o, err := awr("session", "start", "--work", key, "--agent", fmt.Sprintf("%s-%d", key, i), "--json").Output()
				require.NoError(t, err, "%s", o)
				var s struct {
					Session struct{ ID string } `json:"session"`
				}
				require.NoError(t, json.Unmarshal(o, &s))
				o, err = awr("session", "checkpoint", "--session", s.Session.ID, "--agent", fmt.Sprintf("%s-%d", key, i), "--digest", "step", "--next-action", "next").CombinedOutput()
				require.NoError(t, err, "%s", o)
				o, err = awr("session", "end", "--session", s.Session.ID, "--outcome", "incomplete").CombinedOutput()
				require.NoError(t, err, "%s", o)
			}
		}()
	}
	wg.Wait()
	want := logSeqs(t, awr, "--since", fmt.Sprint(since))
	wantWork := logSeqs(t, awr, "--since", fmt.Sprint(since), "--work", "T-1")
	require.Len(t, want, 6*3, "each session wrote start, checkpoint and end: %v", want)

	got := collect(t, allLines, want[len(want)-1])
	gotWork := collect(t, workLines, wantWork[len(wantWork)-1])
	for _, f := range []*exec.Cmd{all, work} {
		require.NoError(t, f.Process.Signal(syscall.SIGINT))
	}
	allWG.Wait()
	workWG.Wait()
	require.NoError(t, all.Wait(), "SIGINT ends the follower with exit 0")
	require.NoError(t, work.Wait(), "SIGINT ends the follower with exit 0")
	for f := range allLines {
		got = append(got, f.Seq)
	}
	for f := range workLines {
		gotWork = append(gotWork, f.Seq)
	}
	require.Equal(t, want, got, "nothing missed or doubled")
	require.Equal(t, wantWork, gotWork, "the --work follower prints what log --work lists")
}

// collect reads followed events until the one at seq last, failing the
// test if the follower stops or a minute passes first (a hang guard, not
// a timing assertion).
func collect(t *testing.T, lines <-chan followed, last int64) []int64 {
	t.Helper()
	var seqs []int64
	deadline := time.After(time.Minute)
	for {
		select {
		case f, ok := <-lines:
			require.True(t, ok, "the follower stopped after %v, before seq %d", seqs, last)
			seqs = append(seqs, f.Seq)
			if f.Seq >= last {
				return seqs
			}
		case <-deadline:
			t.Fatalf("the follower printed %v and not seq %d within a minute", seqs, last)
		}
	}
}

// logSeqs is the seqs `awr log --json ARGS...` lists.
func logSeqs(t *testing.T, awr func(args ...string) *exec.Cmd, args ...string) []int64 {
	t.Helper()
	o, err := awr(append([]string{"log", "--all", "--json"}, args...)...).Output()
	require.NoError(t, err, "%s", o)
	var res struct {
		Events []followed `json:"events"`
	}
	require.NoError(t, json.Unmarshal(o, &res))
	seqs := make([]int64, 0, len(res.Events))
	for _, e := range res.Events {
		seqs = append(seqs, e.Seq)
	}
	return seqs
}
