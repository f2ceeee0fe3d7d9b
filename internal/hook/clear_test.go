package hook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fixtures"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/awr-dev/awr/internal/hook"
	"github.com/awr-dev/awr/internal/project"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"
)

// codexThreads are the threads of the tests below: a is bound, b and c
// start with source clear, d is bound too (another conversation of the
// same host).
const (
	threadA = "019d0000-0000-7000-8000-0000000000aa"
	threadB = "019d0000-0000-7000-8000-0000000000bb"
	threadC = "019d0000-0000-7000-8000-0000000000cc"
	threadD = "019d0000-0000-7000-8000-0000000000dd"
)

// codexClearWorld is the demo's project with a session on CART-1, a
// clock the test moves, and the host process the next hook sees.
type codexClearWorld struct {
	t       *testing.T
	dir     string
	p       *project.Project
	opts    project.Options
	clock   time.Time
	proc    *events.HostProcess
	session string
	turns   int
}

func newCodexClearWorld(t *testing.T) *codexClearWorld {
	w := &codexClearWorld{t: t, dir: t.TempDir(), clock: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)}
	w.opts = project.Options{Now: func() time.Time { return w.clock }, Entropy: ulid.Monotonic(rand.New(rand.NewSource(1)), 0)}
	hook.SetHostProcess(t, func() *events.HostProcess { return w.proc })
	ctx := context.Background()
	_, err := fixtures.CopyProject("checkout", w.dir)
	require.NoError(t, err)
	w.p, err = project.Open(ctx, w.dir, w.opts)
	require.NoError(t, err)
	t.Cleanup(func() { w.p.Close() })
	_, err = w.p.Init(ctx, project.InitRequest{Accept: true})
	require.NoError(t, err)
	start, err := w.p.SessionStart(ctx, project.SessionStartRequest{Work: "CART-1", Agent: "builder", Claim: true})
	require.NoError(t, err)
	w.session = start.Session.ID
	return w
}

// bind binds thread to the session, as the agent's awr client bind does.
func (w *codexClearWorld) bind(thread string) {
	w.t.Helper()
	_, err := w.p.ClientBind(context.Background(), project.ClientBindRequest{Client: "codex", ExternalSession: thread, Work: "CART-1", SessionID: w.session})
	require.NoError(w.t, err)
}

// hook answers Codex's recorded payload name (fixtures/hooks/codex) for
// thread, run by host process proc, a second after the previous hook,
// and returns the context awr gave.
func (w *codexClearWorld) hook(name, thread string, proc *events.HostProcess) string {
	w.t.Helper()
	w.clock, w.proc = w.clock.Add(time.Second), proc
	var m map[string]any
	raw, err := os.ReadFile(testkit.Path("fixtures", "hooks", "codex", name+".json"))
	require.NoError(w.t, err)
	require.NoError(w.t, json.Unmarshal(raw, &m))
	m["cwd"], m["session_id"] = w.dir, thread
	if _, ok := m["turn_id"]; ok {
		w.turns++
		m["turn_id"] = "turn-" + strconv.Itoa(w.turns)
	}
	payload, err := json.Marshal(m)
	require.NoError(w.t, err)
	res := project.AnswerHook(context.Background(), "", project.HookRequest{Client: "codex"}, bytes.NewReader(payload), w.opts)
	require.Empty(w.t, res.Log, "the hook ran without a diagnostic")
	if len(res.Stdout) == 0 {
		return ""
	}
	var out struct {
		HookSpecificOutput struct {
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	require.NoError(w.t, json.Unmarshal(res.Stdout, &out), "%s", res.Stdout)
	return out.HookSpecificOutput.AdditionalContext
}

// continues returns the conversation that thread's binding continues,
// "" when it is not bound or continues none.
func (w *codexClearWorld) continues(thread string) (bound bool, from string) {
	w.t.Helper()
	res, err := w.p.Log(context.Background(), project.LogRequest{Kind: string(events.KindClientBound)})
	require.NoError(w.t, err)
	for _, e := range res.Events {
		var cb events.ClientBound
		require.NoError(w.t, json.Unmarshal(e.Payload, &cb))
		if cb.ExternalSession == "codex:"+thread {
			bound, from = true, cb.ContinuesFrom
		}
	}
	return bound, from
}

// TestHook_CodexClear: Codex 0.169.0's /clear runs no hook for the thread
// it clears, and the new thread's SessionStart (source clear) names none.
// The new thread continues the bound thread whose latest hook came from
// the same host process (pid and start time), and only then: never one
// of another process, never on a missing identity, never when two
// threads could be the one cleared.
func TestHook_CodexClear(t *testing.T) {
	tui := &events.HostProcess{PID: 4242, Start: 987654}
	reused := &events.HostProcess{PID: 4242, Start: 999999} // the same pid, another process
	other := &events.HostProcess{PID: 5151, Start: 987654}
	packet := func(w *codexClearWorld) string { return "# awr: continuing session " + w.session }
	const unbound = "is not bound to an awr session yet"

	t.Run("OK", func(t *testing.T) {
		w := newCodexClearWorld(t)
		w.bind(threadA)
		w.hook("stop", threadA, tui)
		text := w.hook("session_start_clear", threadB, tui)
		require.Contains(t, text, packet(w), "the new thread gets the session's packet")
		require.Contains(t, text, "(SessionStart clear")
		bound, from := w.continues(threadB)
		require.True(t, bound, "the new thread is bound")
		require.Equal(t, "codex:"+threadA, from, "as the successor of the cleared one")

		// Cleared again: the new thread continues the latest, not the
		// one already continued.
		w.hook("stop", threadB, tui)
		require.Contains(t, w.hook("session_start_clear", threadC, tui), packet(w))
		_, from = w.continues(threadC)
		require.Equal(t, "codex:"+threadB, from)
	})
	t.Run("ErrOtherProcess", func(t *testing.T) {
		for name, proc := range map[string]*events.HostProcess{"another pid": other, "the pid reused": reused} {
			w := newCodexClearWorld(t)
			w.bind(threadA)
			w.hook("stop", threadA, tui)
			require.Contains(t, w.hook("session_start_clear", threadB, proc), unbound, name)
			bound, _ := w.continues(threadB)
			require.False(t, bound, name)
		}
	})
	t.Run("ErrNoIdentity", func(t *testing.T) {
		for name, procs := range map[string][2]*events.HostProcess{"none for the new thread": {tui, nil}, "none for either": {nil, nil}} {
			w := newCodexClearWorld(t)
			w.bind(threadA)
			w.hook("stop", threadA, procs[0])
			require.Contains(t, w.hook("session_start_clear", threadB, procs[1]), unbound, name)
			bound, _ := w.continues(threadB)
			require.False(t, bound, name)
		}
	})
	t.Run("ErrTwoCandidates", func(t *testing.T) {
		w := newCodexClearWorld(t)
		w.bind(threadA)
		w.bind(threadD)
		w.hook("stop", threadA, tui)
		w.hook("stop", threadD, tui)
		require.Contains(t, w.hook("session_start_clear", threadB, tui), unbound, "which thread was cleared is not known")
		bound, _ := w.continues(threadB)
		require.False(t, bound)
	})
	t.Run("OKAfterAPause", func(t *testing.T) {
		// The new thread starts with the first prompt after the clear,
		// which may come long after the cleared thread's last answer.
		w := newCodexClearWorld(t)
		w.bind(threadA)
		w.hook("stop", threadA, tui)
		w.clock = w.clock.Add(45 * time.Minute)
		require.Contains(t, w.hook("session_start_clear", threadB, tui), packet(w))
		_, from := w.continues(threadB)
		require.Equal(t, "codex:"+threadA, from)
	})
	t.Run("ErrOutsideWindow", func(t *testing.T) {
		w := newCodexClearWorld(t)
		w.bind(threadA)
		w.hook("stop", threadA, tui)
		w.clock = w.clock.Add(commands.ProcessContinuationWindow + time.Minute)
		require.Contains(t, w.hook("session_start_clear", threadB, tui), unbound)
	})
}

// TestReadHostProcess reads a proc file system written for the test: the
// hook's parent is a shell, whose parent is the host.
func TestReadHostProcess(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	stat := func(pid, comm string, ppid, start string) {
		require.NoError(t, os.MkdirAll(filepath.Join(root, pid), 0o755))
		fields := []string{pid, "(" + comm + ")", "S", ppid}
		for i := 5; i <= 52; i++ {
			fields = append(fields, map[bool]string{true: start, false: "0"}[i == 22])
		}
		require.NoError(t, os.WriteFile(filepath.Join(root, pid, "stat"), []byte(strings.Join(fields, " ")+"\n"), 0o644))
	}
	stat("300", "awr", "200", "30")
	stat("200", "sh", "100", "20")
	stat("100", "codex (tui) x", "1", "10")
	stat("1", "init", "0", "1")
	require.Equal(t, &events.HostProcess{PID: 100, Start: 10}, hook.ReadHostProcess(root, 300), "the shell skipped, the name's spaces and parentheses read")
	stat("400", "awr", "100", "40")
	require.Equal(t, &events.HostProcess{PID: 100, Start: 10}, hook.ReadHostProcess(root, 400), "run with no shell")
	stat("500", "awr", "600", "50")
	require.Nil(t, hook.ReadHostProcess(root, 500), "a parent that cannot be read: no identity")
	stat("12", "awr", "11", "5")
	for pid := 11; pid > 6; pid-- {
		stat(strconv.Itoa(pid), "bash", strconv.Itoa(pid-1), "5")
	}
	require.Nil(t, hook.ReadHostProcess(root, 12), "shells past the bound: no identity")

	// This process, read for real where there is a /proc.
	if _, err := os.Stat("/proc/self/stat"); err == nil {
		got := hook.ReadHostProcess("/proc", os.Getpid())
		require.NotNil(t, got)
		require.Positive(t, got.PID)
	}
}
