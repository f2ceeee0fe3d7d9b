package ui_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/stretchr/testify/require"
)

// awrBinary returns the awr binary, built once per test binary
// (fixtures/testkit).
func awrBinary(t *testing.T) string {
	t.Helper()
	return testkit.Program(t, testkit.AWR)
}

// TestMain removes the programs the kit built once the tests end.
func TestMain(m *testing.M) { os.Exit(testkit.Run(m)) }

// fixture is a project built by awr commands: a copy of the checkout
// sample in a git repository, initialized, with alice's session on CART-1
// (a claim, a checkpoint, interrupted), bob resuming it (the claim moves
// to him), carol on OPS-1 without a claim, and a checkpoint by bob.
type fixture struct {
	t   *testing.T
	awr string
	dir string
	env []string
	// Alice, Bob and Carol are the sessions' ids.
	Alice, Bob, Carol string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureAt(t, 0)
}

// newFixtureAt is newFixture with awr's clock started at now (UTC ms;
// AWR_TEST_NOW, for the history only) when now is not 0.
func newFixtureAt(t *testing.T, now int64) *fixture {
	t.Helper()
	f := &fixture{t: t, awr: awrBinary(t), dir: filepath.Join(t.TempDir(), "checkout")}
	require.NoError(t, os.CopyFS(f.dir, os.DirFS(testkit.Path("fixtures", "projects", "checkout"))))
	f.env = append(os.Environ(), "AWR_PROJECT="+f.dir, "TZ=UTC", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	if now != 0 {
		f.env = append(f.env, "AWR_TEST_NOW="+strconv.FormatInt(now, 10))
		defer func() { f.env = f.env[:len(f.env)-1] }()
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-qm", "checkout: the work ledger"}} {
		c := exec.Command("git", args...)
		c.Dir, c.Env = f.dir, f.env
		out, err := c.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	f.run("init", "--accept")
	f.Alice = f.jsonOf("session", "start", "--work", "CART-1", "--agent", "alice", "--claim")["session"].(map[string]any)["id"].(string)
	f.run("session", "checkpoint", "--session", f.Alice, "--agent", "alice", "--digest", "cart model drafted", "--next-action", "wire the totals", "--open-loop", "rounding of totals")
	f.run("session", "end", "--session", f.Alice, "--agent", "alice", "--outcome", "interrupted")
	f.Bob = f.jsonOf("session", "resume", "--from-session", f.Alice, "--agent", "bob")["resumed"].(map[string]any)["session"].(map[string]any)["id"].(string)
	f.Carol = f.jsonOf("session", "start", "--work", "OPS-1", "--agent", "carol")["session"].(map[string]any)["id"].(string)
	f.run("session", "checkpoint", "--session", f.Bob, "--agent", "bob", "--digest", "totals wired", "--next-action", "persist the cart")
	return f
}

// run runs awr with args (and --json) in the project and returns stdout.
func (f *fixture) run(args ...string) []byte {
	f.t.Helper()
	c := exec.Command(f.awr, append(args, "--json")...)
	c.Dir, c.Env = f.dir, f.env
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	require.NoError(f.t, err, "awr %s: %s", strings.Join(args, " "), stderr.String())
	return out
}

func (f *fixture) jsonOf(args ...string) map[string]any {
	f.t.Helper()
	var v map[string]any
	require.NoError(f.t, json.Unmarshal(f.run(args...), &v))
	return v
}

// logEvent is the part of `awr log --json`'s events the tests compare.
type logEvent struct {
	Seq     int64           `json:"seq"`
	Kind    string          `json:"kind"`
	Stream  string          `json:"stream"`
	Actor   string          `json:"actor"`
	Hash    string          `json:"hash"`
	Prev    string          `json:"prev_hash"`
	Payload json.RawMessage `json:"payload"`
}

// log returns `awr log --limit 0` with the extra flags.
func (f *fixture) log(args ...string) []logEvent {
	f.t.Helper()
	var res struct {
		Events []logEvent `json:"events"`
	}
	require.NoError(f.t, json.Unmarshal(f.run(append([]string{"log", "--limit", "0"}, args...)...), &res))
	return res.Events
}

func seqs(evs []logEvent) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.Seq
	}
	return out
}

// server is a running `awr ui`.
type server struct {
	cmd  *exec.Cmd
	URL  string
	done chan struct{} // closed once the process exited
	errb *bytes.Buffer
}

// serve starts `awr ui` with args on the fixture and reads the URL from
// its first line of output.
func (f *fixture) serve(args ...string) *server {
	f.t.Helper()
	c := exec.Command(f.awr, append([]string{"ui"}, args...)...)
	c.Dir, c.Env = f.dir, f.env
	stdout, err := c.StdoutPipe()
	require.NoError(f.t, err)
	s := &server{cmd: c, done: make(chan struct{}), errb: &bytes.Buffer{}}
	c.Stderr = s.errb
	require.NoError(f.t, c.Start())
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
	}()
	go func() { c.Wait(); close(s.done) }()
	select {
	case line := <-lines:
		s.URL = strings.TrimSpace(line)
	case <-time.After(time.Minute):
		c.Process.Kill()
		f.t.Fatalf("awr ui printed no URL in 30s; stderr: %s", s.errb)
	}
	require.Regexp(f.t, `^http://127\.0\.0\.1:\d+/$`, s.URL, "stderr: %s", s.errb)
	f.t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			s.cmd.Process.Kill()
			<-s.done
		}
	})
	return s
}

// stop sends sig and returns the exit status.
func (s *server) stop(t *testing.T, sig syscall.Signal) int {
	t.Helper()
	require.NoError(t, s.cmd.Process.Signal(sig))
	select {
	case <-s.done:
	case <-time.After(time.Minute):
		s.cmd.Process.Kill()
		t.Fatalf("awr ui did not stop on %v within 15s", sig)
	}
	return s.cmd.ProcessState.ExitCode()
}

// TestCLI_UI runs the real `awr ui`: the URL on the first line (a JSON
// object with --json), the API answering there, exit 0 on SIGTERM; a
// refused --listen and a directory without a project fail before
// listening.
func TestCLI_UI(t *testing.T) {
	f := newFixture(t)
	srv := f.serve()
	res, err := http.Get(srv.URL + "api/head")
	require.NoError(t, err)
	var head struct {
		ProjectRevision int64 `json:"project_revision"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&head))
	res.Body.Close()
	require.EqualValues(t, len(f.log()), head.ProjectRevision)
	require.Equal(t, 0, srv.stop(t, syscall.SIGTERM), "stderr: %s", srv.errb)
	require.Contains(t, srv.errb.String(), "read-only")

	t.Run("JSON", func(t *testing.T) {
		c := exec.Command(f.awr, "ui", "--json", "--listen", "localhost:0")
		c.Dir, c.Env = f.dir, f.env
		stdout, err := c.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, c.Start())
		defer c.Process.Kill()
		line, err := bufio.NewReader(stdout).ReadString('\n')
		require.NoError(t, err)
		var started struct{ URL, Project string }
		require.NoError(t, json.Unmarshal([]byte(line), &started), line)
		require.Regexp(t, `^http://127\.0\.0\.1:\d+/$`, started.URL)
		require.Equal(t, f.dir, started.Project)
		require.NoError(t, c.Process.Signal(syscall.SIGINT))
		require.NoError(t, c.Wait())
	})
	t.Run("ErrNotLoopback", func(t *testing.T) {
		c := exec.Command(f.awr, "ui", "--json", "--listen", "0.0.0.0:0")
		c.Dir, c.Env = f.dir, append(f.env, "AWR_LISTEN=0.0.0.0:0")
		var stderr bytes.Buffer
		c.Stderr = &stderr
		out, err := c.Output()
		require.Error(t, err)
		require.Equal(t, 1, c.ProcessState.ExitCode())
		require.Empty(t, out, "no URL: nothing listened")
		var fe struct{ Code, Message, Hint string }
		require.NoError(t, json.Unmarshal(stderr.Bytes(), &fe), stderr.String())
		require.Equal(t, "InvalidInput", fe.Code)
		require.Contains(t, fe.Message, "every interface")
		require.Equal(t, "awr ui --listen 127.0.0.1:0", fe.Hint)
	})
	t.Run("ErrNoProject", func(t *testing.T) {
		c := exec.Command(f.awr, "ui", "--json", "--project", t.TempDir())
		c.Env = f.env
		var stderr bytes.Buffer
		c.Stderr = &stderr
		out, err := c.Output()
		require.Error(t, err)
		require.Empty(t, out)
		require.Contains(t, stderr.String(), `"code":"NotFound"`)
	})
}
