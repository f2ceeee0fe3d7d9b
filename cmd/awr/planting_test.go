package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/internal/secret/secrettest"
	"github.com/awr-dev/awr/internal/serve/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// planting is one project with credentials planted into every channel
// through which text reaches awr, and everything awr said on stderr.
type planting struct {
	t      *testing.T
	dir    string
	stderr bytes.Buffer
}

// awr runs the CLI in process on the project; stdin, when not "", is the
// command's standard input.
func (p *planting) awr(stdin string, args ...string) (string, int) {
	p.t.Helper()
	if stdin != "" {
		f := filepath.Join(p.t.TempDir(), "stdin")
		require.NoError(p.t, os.WriteFile(f, []byte(stdin), 0o600))
		in, err := os.Open(f)
		require.NoError(p.t, err)
		old := os.Stdin
		os.Stdin = in
		defer func() { os.Stdin = old; in.Close() }()
	}
	var out, errb bytes.Buffer
	code := run(append([]string{"--project", p.dir}, args...), &out, &errb)
	p.stderr.Write(errb.Bytes())
	return out.String(), code
}

func (p *planting) git(args ...string) {
	p.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	require.NoError(p.t, err, "git %v: %s", args, out)
}

func jsonOf(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &v), s)
	return v
}

// nameable reports whether a credential can be a file or branch name.
func nameable(c secrettest.Credential) bool {
	return !strings.ContainsAny(c.Text, "/\n\" :;=") && len(c.Text) < 200
}

// TestPlanting plants fresh credentials of every kind the detector knows
// into every channel through which text reaches awr (CLI flags, MCP tool
// arguments, hook payloads, source files' content, item ids, dependencies
// and file names, the repository's dirty file and branch names, the
// environment) and then finds none of them in the SQLite files, in an
// export, or in anything awr wrote to stderr. The writes that carried
// one were refused or recorded it withheld; the log still verifies.
// Slow: fresh credentials of every kind through every channel, each a real write.
func TestPlanting(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	seed := [2]uint64{rand.Uint64(), rand.Uint64()}
	t.Logf("seed %d %d", seed[0], seed[1])
	creds := secrettest.Fresh(rand.New(rand.NewPCG(seed[0], seed[1])))
	if os.Getenv("AWR_LONG") == "" {
		// The short form: one credential of each kind.
		seen := map[string]bool{}
		short := creds[:0]
		for _, c := range creds {
			if !seen[c.Kind] {
				seen[c.Kind] = true
				short = append(short, c)
			}
		}
		creds = short
	}
	p := &planting{t: t, dir: t.TempDir()}
	p.git("init", "-q", "-b", "main")
	todo := "# TODO\n\n- [ ] T-1: Build the thing\n- [ ] T-2: Test the thing depends on T-1\n"
	require.NoError(t, os.WriteFile(filepath.Join(p.dir, "TODO.md"), []byte(todo), 0o644))
	p.git("add", ".")
	p.git("commit", "-qm", "start")

	// init --name: refused before anything is written.
	for _, c := range creds {
		other := &planting{t: t, dir: t.TempDir()}
		require.NoError(t, os.WriteFile(filepath.Join(other.dir, "TODO.md"), []byte(todo), 0o644))
		_, code := other.awr("", "init", "--accept", "--name", c.Text, "--json")
		require.NotZero(t, code, c.Kind)
		p.stderr.Write(other.stderr.Bytes())
		requireAbsent(t, other.dir, creds, &other.stderr)
	}
	// The environment: a store URL holding a password.
	for _, c := range creds[:3] {
		other := &planting{t: t, dir: t.TempDir()}
		t.Setenv("AWR_STORE", "postgres://app:"+c.Text+"@db.internal:5432/awr")
		_, code := other.awr("", "init", "--accept", "--json")
		require.NotZero(t, code)
		p.stderr.Write(other.stderr.Bytes())
	}
	os.Unsetenv("AWR_STORE")

	out, code := p.awr("", "init", "--accept", "--json")
	require.Zero(t, code, p.stderr.String())
	out, code = p.awr("", "session", "start", "--work", "T-1", "--agent", "builder", "--claim", "--json")
	require.Zero(t, code, p.stderr.String())
	session := jsonOf(t, out)["session"].(map[string]any)["id"].(string)

	_, cs := mcpClient(t, p.dir, nil)
	for i, c := range creds {
		// CLI flags: free text, labels, ids and the request id.
		for _, args := range [][]string{
			{"session", "checkpoint", "--session", session, "--agent", "builder", "--digest", c.Text, "--next-action", "n"},
			{"session", "checkpoint", "--session", session, "--agent", "builder", "--digest", "d", "--next-action", "n", "--request-id", c.Text},
			{"session", "checkpoint", "--session", session, "--agent", "builder", "--digest", "d", "--next-action", "n", "--open-loop", "see " + c.Text},
			{"session", "start", "--work", c.Text, "--agent", "builder"},
			{"session", "start", "--work", "T-2", "--agent", c.Text},
			{"work", "show", c.Text},
			{"search", c.Text},
			{"session", "start", "--work", "T-2", "--agent", "b", "--workdir", c.Text},
		} {
			// Text and JSON errors, in turn (both in the long form).
			modes := []bool{i%2 == 1}
			if os.Getenv("AWR_LONG") != "" {
				modes = []bool{false, true}
			}
			for _, json := range modes {
				a := args
				if json {
					a = append(append([]string{}, args...), "--json")
				}
				_, code := p.awr("", a...)
				if args[0] == "session" {
					require.NotZero(t, code, "%s: %v", c.Kind, args[:2])
				}
			}
		}
		// MCP tool arguments.
		for _, call := range []struct {
			tool string
			args map[string]any
		}{
			{"awr_session_checkpoint", map[string]any{"session": session, "agent": "builder", "digest": c.Text, "next_action": "n"}},
			{"awr_session_checkpoint", map[string]any{"session": session, "agent": "builder", "digest": "d", "next_action": "n", "request_id": c.Text}},
			{"awr_session_start", map[string]any{"work": c.Text, "agent": "builder"}},
			{"awr_work_show", map[string]any{"key": c.Text}},
		} {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: call.tool, Arguments: call.args})
			if err == nil {
				b, _ := json.Marshal(res)
				require.NotContains(t, string(b), c.Body, "%s: %s answered with the secret", call.tool, c.Kind)
			} else {
				require.NotContains(t, err.Error(), c.Body)
			}
		}
		// A hook payload: the conversation id and the host's fields.
		hook, _ := json.Marshal(map[string]any{"session_id": c.Text, "cwd": p.dir, "hook_event_name": "PreCompact", "trigger": "manual", "custom_instructions": c.Text})
		p.awr(string(hook), "client", "hook", "--client", "claude")
		// Sources: a title, an item id, a dependency, a file name.
		single := strings.ReplaceAll(c.Text, "\n", " ")
		reg := todo + "- [ ] T-3: Ship " + single + "\n- [ ] " + single + ": Hidden id\n- [ ] T-4: Wait depends on " + single + "\n"
		require.NoError(t, os.WriteFile(filepath.Join(p.dir, "TODO.md"), []byte(reg), 0o644))
		_, code := p.awr("", "source", "reindex", "--json")
		require.Zero(t, code, "%s: %s", c.Kind, p.stderr.String())
		if nameable(c) {
			name := c.Text + ".md"
			require.NoError(t, os.WriteFile(filepath.Join(p.dir, name), []byte("# TODO\n\n- [ ] N-1: named\n"), 0o644))
			_, code := p.awr("", "source", "add", name, "--json")
			require.NotZero(t, code, c.Kind)
			// A working directory named after it: refused at the seal.
			require.NoError(t, os.Mkdir(filepath.Join(p.dir, c.Text), 0o755))
			_, code = p.awr("", "session", "start", "--work", "T-2", "--agent", "b", "--workdir", c.Text, "--json")
			require.NotZero(t, code, c.Kind)
			require.NoError(t, os.Remove(filepath.Join(p.dir, c.Text)))
			// The repository: a dirty file and a branch named after it,
			// recorded by a checkpoint that is not refused.
			p.git("checkout", "-q", "-b", c.Text)
			_, code = p.awr("", "session", "checkpoint", "--session", session, "--agent", "builder", "--digest", "step "+string(rune('a'+i)), "--next-action", "n", "--json")
			require.Zero(t, code, "%s: %s", c.Kind, p.stderr.String())
			p.git("checkout", "-q", "main")
			p.git("branch", "-q", "-D", c.Text)
			require.NoError(t, os.Remove(filepath.Join(p.dir, name)))
		}
	}
	// Every write that carried a credential was refused or withheld it:
	// the log verifies, and the checkpoints that recorded the repository
	// are there.
	_, code = p.awr("", "verify", "--json")
	require.Zero(t, code, p.stderr.String())
	out, code = p.awr("", "log", "--kind", "checkpoint_recorded", "--json")
	require.Zero(t, code)
	withheld := strings.Count(out, "[withheld: ")
	require.Greater(t, withheld, 0, "the repository's names were recorded withheld")
	exported := filepath.Join(t.TempDir(), "export.jsonl")
	_, code = p.awr("", "export", "--output", exported, "--json")
	require.Zero(t, code, p.stderr.String())
	b, err := os.ReadFile(exported)
	require.NoError(t, err)
	for _, c := range creds {
		if i := strings.Index(string(b), c.Body); i >= 0 {
			t.Fatalf("%s in the export: %s", c.Kind, string(b)[max(0, i-300):min(len(b), i+100)])
		}
	}
	requireAbsent(t, p.dir, creds, &p.stderr)
	t.Logf("%d credentials of %d kinds planted; %d names withheld in checkpoints", len(creds), len(kinds(creds)), withheld)
}

func kinds(creds []secrettest.Credential) map[string]bool {
	out := map[string]bool{}
	for _, c := range creds {
		out[c.Kind] = true
	}
	return out
}

// requireAbsent fails when a credential's body is in any file under the
// project's .awr directory (the database, its WAL, the manifest) or in
// stderr.
func requireAbsent(t *testing.T, dir string, creds []secrettest.Credential, stderr *bytes.Buffer) {
	t.Helper()
	files := 0
	err := filepath.Walk(filepath.Join(dir, ".awr"), func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for _, c := range creds {
			require.NotContains(t, string(b), c.Body, "%s in %s", c.Kind, path)
		}
		return nil
	})
	if !os.IsNotExist(err) {
		require.NoError(t, err)
	}
	for _, c := range creds {
		require.NotContains(t, stderr.String(), c.Body, "%s on stderr", c.Kind)
	}
}

// mcpClient serves the project over in-memory transports, as awr-mcp
// does, and connects a client with opts (nil for none); both close when
// the test ends.
func mcpClient(t *testing.T, dir string, opts *mcp.ClientOptions) (*mcpserver.Server, *mcp.ClientSession) {
	t.Helper()
	ctx := context.Background()
	srv, err := mcpserver.New(mcpserver.Options{Project: dir, Version: "test", Now: time.Now})
	require.NoError(t, err)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, opts).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
		srv.Close()
	})
	return srv, cs
}
