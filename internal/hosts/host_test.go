package hosts_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/awr-dev/awr/internal/hosts"
	"github.com/stretchr/testify/require"
)

// TestCodexForkedFrom: the thread a Codex command line forks.
func TestCodexForkedFrom(t *testing.T) {
	t.Parallel()
	id := "01a24ca3-1ae8-7d63-8eaa-6c2578b67a36"
	requireForks(t, hosts.CodexForkedFrom, []forkCase{
		{"exec fork", []string{"/x/vendor/bin/codex", "exec", "--json", "fork", id, "go on"}, id},
		{"launcher", []string{"node", "/x/@openai/codex/bin/codex.js", "exec", "fork", id}, id},
		{"interactive fork", []string{"codex", "fork", id}, id},
		{"resume", []string{"codex", "exec", "resume", id, "go on"}, ""},
		{"fork picker", []string{"codex", "fork", "--last"}, ""},
		{"another program", []string{"git", "fork", id}, ""},
		{"an id awr cannot key", []string{"codex", "exec", "fork", "a b/c"}, ""},
		{"nothing", nil, ""},
	})
}

// TestRolloutForkedFrom: a Codex fork's rollout names the thread it
// forked in its first line; nothing else is read.
func TestRolloutForkedFrom(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	id := "01a24ca3-1ae8-7d63-8eaa-6c2578b67a36"
	fork := filepath.Join(dir, "fork.jsonl")
	require.NoError(t, os.WriteFile(fork, []byte(`{"type":"session_meta","payload":{"id":"01a24ca3-682f-7482-a57b-ac1247b9d64b","forked_from_id":"`+id+`","forked_from_ordinal_exclusive":26}}`+"\n"+`{"type":"event_msg"}`+"\n"), 0o600))
	require.Equal(t, id, hosts.RolloutForkedFrom(fork))
	plain := filepath.Join(dir, "plain.jsonl")
	require.NoError(t, os.WriteFile(plain, []byte(`{"type":"session_meta","payload":{"id":"x"}}`+"\n"+`{"type":"response_item","payload":{"forked_from_id":"`+id+`"}}`+"\n"), 0o600))
	require.Empty(t, hosts.RolloutForkedFrom(plain), "only the first line counts")
	require.Empty(t, hosts.RolloutForkedFrom(filepath.Join(dir, "missing.jsonl")))
	require.Empty(t, hosts.RolloutForkedFrom(dir), "a directory")
	require.Empty(t, hosts.RolloutForkedFrom(""))
	link := filepath.Join(dir, "link.jsonl")
	require.NoError(t, os.Symlink(fork, link))
	require.Empty(t, hosts.RolloutForkedFrom(link), "never through a symbolic link")
}

func TestForkedFrom(t *testing.T) {
	t.Parallel()
	id := "1d95e35a-4560-4cb9-972c-98d9115ca7dd"
	requireForks(t, hosts.ForkedFrom, []forkCase{
		{"resume and fork", []string{"claude", "-p", "go", "--resume", id, "--fork-session"}, id},
		{"short flag", []string{"node", "/x/cli.js", "--fork-session", "-r", id}, id},
		{"equals form", []string{"claude", "--resume=" + id, "--fork-session"}, id},
		{"resume without fork", []string{"claude", "--resume", id}, ""},
		{"fork without an id", []string{"claude", "--continue", "--fork-session"}, ""},
		{"resume picker", []string{"claude", "--resume", "--fork-session"}, ""},
		{"an id awr cannot key", []string{"claude", "--resume", "a b/c", "--fork-session"}, ""},
		{"nothing", nil, ""},
	})
}

// forkCase is a command line (args) and the conversation it forks (want,
// "" for none).
type forkCase struct {
	name string
	args []string
	want string
}

// requireForks requires that forkedFrom reads each case's command line as
// the case says.
func requireForks(t *testing.T, forkedFrom func([]string) string, cases []forkCase) {
	t.Helper()
	for _, c := range cases {
		require.Equal(t, c.want, forkedFrom(c.args), c.name)
	}
}
