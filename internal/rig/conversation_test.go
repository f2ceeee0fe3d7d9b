package rig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConversationExists(t *testing.T) {
	t.Parallel()
	const id = "0b7f4c2e-9d1a-4e3b-8c5f-1a2b3c4d5e6f"
	home, conf, codexHome := t.TempDir(), t.TempDir(), t.TempDir()
	cwd := filepath.Join(t.TempDir(), "my_proj.v1")
	require.NoError(t, os.MkdirAll(cwd, 0o755))
	vars := map[string]string{"HOME": home}
	getenv := func(k string) string { return vars[k] }
	touch := func(p string) {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("{}\n"), 0o600))
	}
	slug := strings.NewReplacer("/", "-", "_", "-", ".", "-").Replace(cwd)

	t.Run("Claude", func(t *testing.T) {
		ok, where := ConversationExists("claude", cwd, id, getenv)
		want := filepath.Join(home, ".claude", "projects", slug, id+".jsonl")
		require.False(t, ok)
		require.Equal(t, want, where)
		touch(want)
		ok, _ = ConversationExists("claude", cwd, id, getenv)
		require.True(t, ok)

		// CLAUDE_CONFIG_DIR replaces ~/.claude.
		vars["CLAUDE_CONFIG_DIR"] = conf
		defer delete(vars, "CLAUDE_CONFIG_DIR")
		ok, where = ConversationExists("claude", cwd, id, getenv)
		require.False(t, ok)
		require.Equal(t, filepath.Join(conf, "projects", slug, id+".jsonl"), where)
		touch(where)
		ok, _ = ConversationExists("claude", cwd, id, getenv)
		require.True(t, ok)

		// Scoped to the directory; symbolic links resolved.
		ok, _ = ConversationExists("claude", filepath.Dir(cwd), id, getenv)
		require.False(t, ok)
		link := filepath.Join(t.TempDir(), "link")
		require.NoError(t, os.Symlink(cwd, link))
		ok, _ = ConversationExists("claude", link, id, getenv)
		require.True(t, ok)
	})

	t.Run("Codex", func(t *testing.T) {
		vars["CODEX_HOME"] = codexHome
		defer delete(vars, "CODEX_HOME")
		ok, where := ConversationExists("codex", cwd, id, getenv)
		require.False(t, ok)
		require.Equal(t, filepath.Join(codexHome, "sessions", "YYYY", "MM", "DD", "rollout-*-"+id+".jsonl"), where)
		p := filepath.Join(codexHome, "sessions", "2026", "03", "04", "rollout-2026-03-04T05-06-07-"+id+".jsonl")
		touch(p)
		ok, where = ConversationExists("codex", "/anywhere", id, getenv)
		require.True(t, ok, "codex finds a session by id wherever it was started")
		require.Equal(t, p, where)

		delete(vars, "CODEX_HOME")
		ok, _ = ConversationExists("codex", cwd, id, getenv)
		require.False(t, ok)
		touch(filepath.Join(home, ".codex", "sessions", "2026", "03", "04", "rollout-2026-03-04T05-06-07-"+id+".jsonl"))
		ok, _ = ConversationExists("codex", cwd, id, getenv)
		require.True(t, ok)
	})

	t.Run("ErrNotAnID", func(t *testing.T) {
		for _, rt := range []string{"claude", "codex"} {
			for _, bad := range []string{"", "*", "../" + id, "c-5d1e"} {
				ok, _ := ConversationExists(rt, cwd, bad, getenv)
				require.False(t, ok, "%s %q", rt, bad)
			}
		}
	})

	t.Run("Generic", func(t *testing.T) {
		ok, where := ConversationExists("generic", cwd, "c-5d1e", getenv)
		require.True(t, ok)
		require.Empty(t, where)
	})
}
