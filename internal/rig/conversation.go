package rig

import (
	"fmt"
	"github.com/awr-dev/awr/internal/lazyre"
	"os"
	"path/filepath"
	"strings"

	"github.com/awr-dev/awr/events"
)

// conversationIDRE is the shape of a Claude Code or Codex conversation id.
var conversationIDRE = lazyre.New(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// ConversationExists reports whether conversation id is kept where runtime
// keeps its conversations for an agent started in directory cwd, and where
// it looked. getenv reads the environment the agent gets (HOME,
// CLAUDE_CONFIG_DIR, CODEX_HOME).
//
//   - claude: the transcript CONFIG/projects/SLUG/ID.jsonl, CONFIG being
//     $CLAUDE_CONFIG_DIR or ~/.claude and SLUG the directory (symbolic
//     links resolved) with every character other than an ASCII letter or
//     digit replaced by '-'. Claude Code looks a conversation up only
//     there, and `--session-id ID` without it starts an empty conversation
//     under the same id.
//   - codex: a rollout CODEX_HOME/sessions/YYYY/MM/DD/rollout-*-ID.jsonl,
//     CODEX_HOME defaulting to ~/.codex.
//
// An id that is not a UUID is never found. For other runtimes awr does not
// know the storage: it reports true and where "".
func ConversationExists(runtime, cwd, id string, getenv func(string) string) (bool, string) {
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	switch runtime {
	case events.RuntimeClaude:
		conf := getenv("CLAUDE_CONFIG_DIR")
		if conf == "" {
			conf = filepath.Join(home, ".claude")
		}
		if r, err := filepath.EvalSymlinks(cwd); err == nil {
			cwd = r
		}
		dir := filepath.Join(conf, "projects", claudeSlug(cwd))
		if !conversationIDRE.MatchString(id) {
			return false, dir
		}
		p := filepath.Join(dir, id+".jsonl")
		st, err := os.Stat(p)
		return err == nil && st.Mode().IsRegular(), p
	case events.RuntimeCodex:
		ch := getenv("CODEX_HOME")
		if ch == "" {
			ch = filepath.Join(home, ".codex")
		}
		pattern := filepath.Join(ch, "sessions", "*", "*", "*", "rollout-*-"+id+".jsonl")
		if !conversationIDRE.MatchString(id) {
			return false, filepath.Join(ch, "sessions")
		}
		m, _ := filepath.Glob(pattern)
		for _, p := range m {
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return true, p
			}
		}
		return false, strings.Replace(pattern, filepath.Join("*", "*", "*"), filepath.Join("YYYY", "MM", "DD"), 1)
	}
	return true, ""
}

// claudeSlug is Claude Code's directory name for a working directory: one
// '-' for each character that is not an ASCII letter or digit.
func claudeSlug(cwd string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, cwd)
}

// missingConversation says why conversation id of seat s cannot be
// resumed: it is not where the runtime keeps it (where, as
// conversationExists looked).
func missingConversation(s *events.SeatDeclared, id, where string) string {
	return fmt.Sprintf("conversation %s is not in %s's store (looked for %s), so it cannot be resumed", id, s.Runtime, where)
}

// conversationExists is ConversationExists for seat s, whose declared
// conversation store (runtime generic) says where its agent keeps them.
func (m *Manager) conversationExists(s *events.SeatDeclared, cwd, id string, getenv func(string) string) (bool, string) {
	if s.Runtime != events.RuntimeGeneric || s.ConversationStore == "" {
		return ConversationExists(s.Runtime, cwd, id, getenv)
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	p := strings.NewReplacer("{conversation}", id, "{project}", m.Dir, "{home}", home).Replace(s.ConversationStore)
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	if id == "" || strings.ContainsAny(id, "/\\") || id == "." || id == ".." {
		return false, p
	}
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular(), p
}
