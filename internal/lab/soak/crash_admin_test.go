package soak

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The crash test of the log's own commands: real awr processes, killed.

// adminKills is how many times each command is killed: 10, or 100 with
// AWR_LONG=1.
func adminKills() int {
	if os.Getenv("AWR_LONG") != "" {
		return 100
	}
	return 10
}

// awrRun is one finished awr process.
type awrRun struct {
	code           int
	stdout, stderr string
}

// obj decodes stdout (or, on failure, stderr) as one JSON object.
func (r awrRun) obj(t *testing.T) map[string]any {
	t.Helper()
	text := r.stdout
	if r.code != 0 {
		text = r.stderr
	}
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(text), &v), "exit %d: %s%s", r.code, r.stdout, r.stderr)
	return v
}

// admin runs awr commands with --json on one project directory.
type admin struct {
	t   *testing.T
	bin string
}

func (a admin) cmd(dir string, args ...string) *exec.Cmd {
	if len(args) > 0 && args[0] != "export" {
		args = append(args, "--json")
	}
	cmd := exec.Command(a.bin, append(args, "--project", dir)...)
	cmd.Env = append(os.Environ(), "AWR_TIMEOUT=30s")
	return cmd
}

// run runs awr to its end.
func (a admin) run(dir string, args ...string) awrRun {
	a.t.Helper()
	cmd := a.cmd(dir, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		a.t.Fatalf("awr %s: %v", strings.Join(args, " "), err)
	}
	return awrRun{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}
}

// ok runs awr and requires it to succeed, returning its JSON object.
func (a admin) ok(dir string, args ...string) map[string]any {
	a.t.Helper()
	r := a.run(dir, args...)
	require.Equal(a.t, 0, r.code, "awr %s: %s%s", strings.Join(args, " "), r.stdout, r.stderr)
	return r.obj(a.t)
}

// hashes returns every event's hash by seq, from `awr export`.
func (a admin) hashes(dir string) map[int64]string {
	a.t.Helper()
	r := a.run(dir, "export")
	require.Equal(a.t, 0, r.code, "awr export: %s", r.stderr)
	out := map[int64]string{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var e struct {
			Seq  int64  `json:"seq"`
			Hash string `json:"hash"`
		}
		require.NoError(a.t, json.Unmarshal([]byte(line), &e))
		out[e.Seq] = e.Hash
	}
	return out
}

// timed runs awr to its end and returns how long it took.
func (a admin) timed(dir string, args ...string) time.Duration {
	a.t.Helper()
	start := time.Now()
	a.ok(dir, args...)
	return time.Since(start)
}

// killed is one awr process stopped by a signal.
type killed struct {
	awrRun
	sig syscall.Signal
	// acked: the command finished and printed its result before the
	// signal could stop it.
	acked bool
	// stop is the time from the signal to the process's end.
	stop time.Duration
}

// kill starts awr, sends sig after delay and waits for the end.
func (a admin) kill(sig syscall.Signal, delay time.Duration, dir string, args ...string) killed {
	a.t.Helper()
	cmd := a.cmd(dir, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(a.t, cmd.Start())
	time.Sleep(delay)
	sent := time.Now()
	_ = cmd.Process.Signal(sig)
	_ = cmd.Wait()
	k := killed{awrRun: awrRun{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}, sig: sig, stop: time.Since(sent)}
	k.acked = k.code == 0 && strings.HasPrefix(strings.TrimSpace(k.stdout), "{")
	return k
}

// signalFor kills mostly with SIGKILL, and every other second time with
// SIGINT or SIGTERM, which awr handles.
func signalFor(i int) syscall.Signal {
	switch i % 4 {
	case 1:
		return syscall.SIGINT
	case 3:
		return syscall.SIGTERM
	}
	return syscall.SIGKILL
}

// stats are the figures of one command's kills.
type stats struct {
	kills, untouched, complete int
	maxStop                    time.Duration // longest SIGINT/SIGTERM to exit
}

func (s *stats) record(t *testing.T, k killed, complete bool) {
	t.Helper()
	s.kills++
	if complete {
		s.complete++
	} else {
		s.untouched++
	}
	if k.sig != syscall.SIGKILL {
		if k.stop > s.maxStop {
			s.maxStop = k.stop
		}
		// A liveness bound, not a speed measure: awr must stop on the
		// signal, not run on to its end of a long command.
		require.Less(t, k.stop, 10*time.Second, "%v did not stop awr", k.sig)
	}
}

func (s *stats) log(t *testing.T, name string, full time.Duration) {
	t.Logf("%s: %d kills (a run takes %v): %d left the project untouched, %d complete; SIGINT/SIGTERM stopped it within %v",
		name, s.kills, full.Round(time.Millisecond), s.untouched, s.complete, s.maxStop.Round(time.Millisecond))
}

// leftovers fails unless .awr/ under dir is absent or holds only what an
// init or import cut short before its commit point leaves (and the next
// one removes).
func leftovers(t *testing.T, dir string) {
	t.Helper()
	des, err := os.ReadDir(filepath.Join(dir, ".awr"))
	if os.IsNotExist(err) {
		return
	}
	require.NoError(t, err)
	for _, de := range des {
		n := de.Name()
		require.True(t, strings.HasPrefix(n, ".awr.db.tmp-") || strings.HasPrefix(n, "init-pending"),
			"an interrupted command left .awr/%s in a directory that is not a project", n)
	}
}

// noLeftovers fails if a complete project still holds temporary files.
func noLeftovers(t *testing.T, dir string) {
	t.Helper()
	des, err := os.ReadDir(filepath.Join(dir, ".awr"))
	require.NoError(t, err)
	for _, de := range des {
		require.False(t, strings.HasPrefix(de.Name(), ".awr.db.tmp-") || strings.HasPrefix(de.Name(), "init-pending"), "left .awr/%s", de.Name())
	}
}

// notAProject requires status to refuse dir as a project.
func (a admin) notAProject(dir string) {
	a.t.Helper()
	r := a.run(dir, "status")
	require.Equal(a.t, 1, r.code, "status of a directory with no complete project: %s%s", r.stdout, r.stderr)
	require.Equal(a.t, "NotFound", r.obj(a.t)["code"], "%s", r.stderr)
}

// usable requires dir to be a sound project: status answers at a revision
// of at least minRev, verify passes and a write (a session on the first
// ready work item) commits; on an imported replica, the write is refused
// with ReadOnlyReplica until the replica is forked. It returns the status.
func (a admin) usable(dir string, minRev int64) map[string]any {
	a.t.Helper()
	st := a.ok(dir, "status")
	rev := int64(st["project_revision"].(float64))
	require.GreaterOrEqual(a.t, rev, max(minRev, 1), "status passes a log at project_revision %d for a project: %v", rev, st)
	a.ok(dir, "verify")
	ready := a.ok(dir, "ready")["ready"].([]any)
	require.NotEmpty(a.t, ready)
	key := ready[0].(map[string]any)["key"].(string)
	if st["origin"] != nil {
		r := a.run(dir, "session", "start", "--work", key, "--agent", "crash-check")
		require.Equal(a.t, 1, r.code, "a write to a replica: %s%s", r.stdout, r.stderr)
		require.Contains(a.t, r.stderr, "ReadOnlyReplica")
		a.ok(dir, "fork", "--accept", "--reason", "crash check")
	}
	started := a.ok(dir, "session", "start", "--work", key, "--agent", "crash-check")
	require.Greater(a.t, int64(started["project_revision"].(float64)), rev)
	return st
}

// todo is a task register big enough that init takes a while.
func todo(n int) []byte {
	var b strings.Builder
	b.WriteString("# TODO\n\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "- [ ] T-%d: Task number %d, with a few words for the parser\n", i, i)
	}
	return []byte(b.String())
}

// TestCrash_AdminCommands kills real awr processes running `init
// --accept` on a large task register, `import` of a large export,
// `replay` and `source reindex`, each at a random moment (SIGKILL, and
// every other second time SIGINT or SIGTERM), 10 times each (100 with
// AWR_LONG=1). After every kill the project is either untouched (what was
// there before the command, with at most the temporary files the next
// init or import removes, and never reported as a project) or complete
// and usable: status answers, verify passes, a following write commits,
// and nothing acknowledged is lost.
func TestCrash_AdminCommands(t *testing.T) {
	bin := awrBinary(t)
	kills := adminKills()
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	// delay picks when to send the signal: up to a little past a whole
	// run, so that some land after the commit point.
	delay := func(rng *rand.Rand, full time.Duration) time.Duration {
		return time.Duration(rng.Int63n(int64(full)*12/10 + 1))
	}

	t.Run("Init", func(t *testing.T) {
		t.Parallel()
		a := admin{t: t, bin: bin}
		rng := rand.New(rand.NewSource(seed))
		const tasks = 1000
		register := todo(tasks)
		fresh := func() string {
			dir := filepath.Join(t.TempDir(), "proj")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"), register, 0o644))
			return dir
		}
		full := a.timed(fresh(), "init", "--accept")
		var s stats
		for i := 0; i < kills; i++ {
			dir := fresh()
			k := a.kill(signalFor(i), delay(rng, full), dir, "init", "--accept")
			body, err := os.ReadFile(filepath.Join(dir, "TODO.md"))
			require.NoError(t, err)
			require.Equal(t, register, body, "init never changes the task register")
			_, dbErr := os.Stat(filepath.Join(dir, ".awr", "awr.db"))
			complete := dbErr == nil
			if !complete {
				require.False(t, k.acked, "init acknowledged a project that is not there: %s", k.stdout)
				_, err := os.Stat(filepath.Join(dir, ".awr", "project.toml"))
				require.True(t, os.IsNotExist(err), "kill %d (%v): a manifest without a log", i, k.sig)
				leftovers(t, dir)
				a.notAProject(dir)
				a.ok(dir, "init", "--accept")
			}
			st := a.usable(dir, 2)
			require.EqualValues(t, tasks, st["work_items"], "kill %d (%v): %v", i, k.sig, st)
			if k.acked {
				require.Equal(t, k.obj(t)["project_id"], st["project_id"], "the acknowledged project is the one there")
			}
			_, err = os.Stat(filepath.Join(dir, ".awr", "project.toml"))
			require.NoError(t, err, "a complete project has its manifest")
			noLeftovers(t, dir)
			s.record(t, k, complete)
		}
		s.log(t, "init --accept", full)
	})

	// The bench project with a generated history: exported for import,
	// replayed and reindexed in place.
	big := t.TempDir()
	setup := admin{t: t, bin: bin}
	setup.ok(big, "bench", "project", big, "--tasks", "60")
	setup.ok(big, "bench", "generate", "--events", "1000")
	export := filepath.Join(t.TempDir(), "big.jsonl")
	exp := setup.ok(big, "export", "--output", export, "--json")

	t.Run("Import", func(t *testing.T) {
		t.Parallel()
		a := admin{t: t, bin: bin}
		rng := rand.New(rand.NewSource(seed + 1))
		full := a.timed(t.TempDir(), "import", export)
		var s stats
		for i := 0; i < kills; i++ {
			dir := t.TempDir()
			k := a.kill(signalFor(i), delay(rng, full), dir, "import", export)
			_, dbErr := os.Stat(filepath.Join(dir, ".awr", "awr.db"))
			complete := dbErr == nil
			if !complete {
				require.False(t, k.acked, "import acknowledged a log that is not there: %s", k.stdout)
				leftovers(t, dir)
				a.notAProject(dir)
				a.ok(dir, "import", export)
			}
			st := a.usable(dir, 1)
			require.Equal(t, exp["project_revision"], st["project_revision"], "kill %d (%v): the whole export or nothing", i, k.sig)
			require.Equal(t, exp["head_hash"], st["head_hash"])
			noLeftovers(t, dir)
			s.record(t, k, complete)
		}
		s.log(t, "import", full)
	})

	// replay and source reindex are killed again and again on one
	// project; every event there at a check must stay, with its hash.
	t.Run("ReplayAndReindex", func(t *testing.T) {
		t.Parallel()
		a := admin{t: t, bin: bin}
		rng := rand.New(rand.NewSource(seed + 2))
		dir := big
		acked := map[int64]string{}
		// sound checks the project and returns its head.
		sound := func() int64 {
			a.usable(dir, 1) // verify compares the projections with a rebuild
			now := a.hashes(dir)
			for seq, hash := range acked {
				require.Equal(t, hash, now[seq], "acknowledged event %d lost or changed", seq)
			}
			acked = now
			return int64(len(now))
		}
		head := sound()

		full := a.timed(dir, "replay")
		var s stats
		for i := 0; i < kills; i++ {
			k := a.kill(signalFor(i), delay(rng, full), dir, "replay")
			require.Equal(t, head, int64(a.ok(dir, "status")["project_revision"].(float64)), "kill %d (%v): replay appends nothing", i, k.sig)
			head = sound()
			s.record(t, k, k.acked)
		}
		s.log(t, "replay", full)

		plan := filepath.Join(dir, "PLAN.md")
		touch := func(i int) {
			f, err := os.OpenFile(plan, os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = fmt.Fprintf(f, "\n<!-- edit %d -->\n", i)
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}
		touch(-1)
		full = a.timed(dir, "source", "reindex")
		head = sound()
		s = stats{}
		for i := 0; i < kills; i++ {
			touch(i)
			k := a.kill(signalFor(i), delay(rng, full), dir, "source", "reindex")
			now := int64(a.ok(dir, "status")["project_revision"].(float64))
			require.Contains(t, []int64{head, head + 1}, now, "kill %d (%v): the reindex whole or nothing", i, k.sig)
			if k.acked {
				require.Equal(t, float64(now), k.obj(t)["project_revision"])
			}
			// The following write: a reindex that had not committed is
			// done now; after one that had, nothing is left to do.
			re := a.ok(dir, "source", "reindex")
			require.Len(t, re["indexed"], int(head+1-now), "kill %d (%v)", i, k.sig)
			s.record(t, k, now == head+1)
			head = sound()
		}
		s.log(t, "source reindex", full)
	})
}
