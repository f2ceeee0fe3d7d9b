package hosts

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
)

func command(h Host) string { return "awr client hook --client " + string(h) }

// jsonHosts are the hosts whose hooks live in a JSON settings file (all
// but OpenCode, whose file is awr's plugin: plugin_test.go).
func jsonHosts() []Host { return []Host{Claude, Codex, Gemini} }

func otherTool(h Host) string {
	if h == Codex {
		return "hooks_other_tool.json"
	}
	return "settings_other_tool.json"
}

func broken(h Host) string {
	if h == Codex {
		return "hooks_broken.json"
	}
	return "settings_broken.json"
}

func tree(t testing.TB, b []byte) *node {
	t.Helper()
	n, err := parseTree(b)
	require.NoError(t, err)
	return n
}

// TestInstall_Fixtures: installing into a file that holds another tool's
// hooks and unrelated settings keeps all of them where they were, adds
// awr's groups at the end of each event, is idempotent, and uninstalling
// gives back the original document, key order included.
func TestInstall_Fixtures(t *testing.T) {
	t.Parallel()
	for _, h := range jsonHosts() {
		t.Run(string(h), func(t *testing.T) {
			t.Parallel()
			orig := raw(t, h, otherTool(h))
			out, err := Install(h, orig, command(h))
			require.NoError(t, err)
			require.True(t, json.Valid(out))
			golden(t, "install_"+string(h)+".golden", out)

			again, err := Install(h, out, command(h))
			require.NoError(t, err)
			require.Equal(t, string(out), string(again), "a second install changes nothing")

			before, after := tree(t, orig), tree(t, out)
			// Top-level keys keep their order; only "hooks" changed.
			require.Equal(t, len(before.members), len(after.members))
			for i, m := range before.members {
				require.Equal(t, m.key, after.members[i].key)
				if m.key != "hooks" {
					require.Equal(t, m.val.compact(), after.members[i].val.compact())
				}
			}
			// Every existing event keeps its groups at their positions.
			bh, ah := before.get("hooks"), after.get("hooks")
			for i, m := range bh.members {
				require.Equal(t, m.key, ah.members[i].key, "event order kept")
				got := ah.members[i].val
				for j, g := range m.val.items {
					require.Equal(t, g.compact(), got.items[j].compact(), "%s[%d] kept in place", m.key, j)
				}
			}
			// awr's group is the last of each installed event.
			for _, ev := range Installed(h) {
				list := ah.get(ev)
				require.NotNil(t, list, ev)
				last := list.items[len(list.items)-1]
				i, only := awrGroup(list)
				require.True(t, only)
				require.Equal(t, len(list.items)-1, i)
				s, _ := lookup(h, ev)
				require.Equal(t, group(h, s, command(h)).compact(), last.compact())
			}

			back, err := Uninstall(h, out)
			require.NoError(t, err)
			require.Equal(t, before.compact(), tree(t, back).compact(), "uninstall gives back the original document")

			same, err := Uninstall(h, orig)
			require.NoError(t, err)
			require.Equal(t, string(orig), string(same), "nothing to remove: the bytes are returned as they are")
		})
	}
}

// TestInstall_New: a host without a settings file gets one holding only
// awr's hooks, indented by two spaces.
func TestInstall_New(t *testing.T) {
	t.Parallel()
	out, err := Install(Claude, nil, "/usr/local/bin/awr client hook --client claude")
	require.NoError(t, err)
	want := `{
  "hooks": {
    "SessionStart": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/awr client hook --client claude",
            "timeout": 10
          }
        ]
      }
    ],
    "PreCompact": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/awr client hook --client claude",
            "timeout": 5
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/awr client hook --client claude",
            "timeout": 5
          }
        ]
      }
    ],
    "SessionEnd": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/awr client hook --client claude",
            "timeout": 3
          }
        ]
      }
    ]
  }
}
`
	require.Equal(t, want, string(out))
	for _, blank := range [][]byte{{}, []byte(" \n")} {
		o, err := Install(Claude, blank, "/usr/local/bin/awr client hook --client claude")
		require.NoError(t, err)
		require.Equal(t, want, string(o))
	}
	back, err := Uninstall(Claude, out)
	require.NoError(t, err)
	require.Equal(t, "{}\n", string(back))
	none, err := Uninstall(Gemini, nil)
	require.NoError(t, err)
	require.Nil(t, none)
}

// TestInstall_Broken: a file that is not JSON is refused, naming the line
// and column, and never rewritten.
func TestInstall_Broken(t *testing.T) {
	t.Parallel()
	want := map[Host][2]int{Claude: {8, 9}, Codex: {6, 9}, Gemini: {5, 3}}
	for _, h := range jsonHosts() {
		for name, run := range map[string]func([]byte) ([]byte, error){
			"install":   func(b []byte) ([]byte, error) { return Install(h, b, command(h)) },
			"uninstall": func(b []byte) ([]byte, error) { return Uninstall(h, b) },
		} {
			out, err := run(raw(t, h, broken(h)))
			require.Nil(t, out)
			require.ErrorIs(t, err, ErrSettingsSyntax, "%s %s", h, name)
			var se *SyntaxError
			require.True(t, errors.As(err, &se))
			require.Equal(t, want[h], [2]int{se.Line, se.Column}, "%s %s: %v", h, name, err)
			fe := fault.As(err)
			require.Equal(t, fault.InvalidInput, fe.Code)
			require.Equal(t, se.Line, fe.Details["line"])
			require.Equal(t, se.Column, fe.Details["column"])
			require.Contains(t, fe.Message, "line ")
			require.Empty(t, fe.Hint, "the caller's preview is the hint (project.ClientInstall)")
			if h == Gemini {
				require.Contains(t, fe.Message, "comments are not JSON")
			}
		}
	}
}

func TestInstall_Shape(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`[]`:                                  "(root)",
		`"settings"`:                          "(root)",
		`{"hooks": []}`:                       "hooks",
		`{"hooks": {"Stop": {}}}`:             "hooks.Stop",
		`{"hooks": {"Stop": [{"hooks": 1}]}}`: "hooks.Stop[0].hooks",
	}
	for in, path := range cases {
		_, err := Install(Codex, []byte(in), command(Codex))
		require.ErrorIs(t, err, ErrSettingsShape, in)
		require.Equal(t, path, fault.As(err).Details["path"], in)
		_, err = Uninstall(Codex, []byte(in))
		require.ErrorIs(t, err, ErrSettingsShape, in)
	}
}

func TestInstall_Errors(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"", "echo hi", "awr client bind", "awr client hook\n--client claude", "notawr client hook"} {
		_, err := Install(Claude, nil, cmd)
		require.ErrorIs(t, err, ErrNotAwrCommand, cmd)
		require.Equal(t, fault.InvalidInput, fault.CodeOf(err))
	}
	_, err := Install(Host("vim"), nil, "awr client hook")
	require.ErrorIs(t, err, ErrUnknownHost)
	_, err = Uninstall(Host("vim"), nil)
	require.ErrorIs(t, err, ErrUnknownHost)
}

// TestInstall_Upgrade: an older awr install (another binary path, other
// timeouts, an event awr no longer installs) is brought to the current one:
// its group replaced where it was, the stale handler removed, other hooks
// untouched.
func TestInstall_Upgrade(t *testing.T) {
	t.Parallel()
	old := `{
	"hooks": {
		"SessionStart": [
			{"matcher": "*", "hooks": [{"type": "command", "command": "/opt/old/awr client hook --client claude", "timeout": 60}]},
			{"matcher": "startup", "hooks": [{"type": "command", "command": "banner.sh"}]}
		],
		"PostCompact": [
			{"hooks": [{"type": "command", "command": "'/opt/old/awr' client hook --client claude"}]}
		],
		"Stop": [
			{"hooks": [{"type": "command", "command": "notify.sh"}, {"type": "command", "command": "AWR_DEBUG=1 awr client hook --client claude"}]}
		]
	}
}
`
	out, err := Install(Claude, []byte(old), command(Claude))
	require.NoError(t, err)
	n := tree(t, out)
	hooks := n.get("hooks")
	ss := hooks.get("SessionStart")
	require.Len(t, ss.items, 2)
	s, _ := lookup(Claude, "SessionStart")
	require.Equal(t, group(Claude, s, command(Claude)).compact(), ss.items[0].compact(), "replaced in place")
	require.Contains(t, ss.items[1].compact(), "banner.sh")
	require.Nil(t, hooks.get("PostCompact"), "awr's stale PostCompact handler removed with its event")
	stop := hooks.get("Stop")
	require.Len(t, stop.items, 2, "the mixed group keeps notify.sh; awr's group is appended")
	require.Equal(t, `{"hooks":[{"type":"command","command":"notify.sh"}]}`, stop.items[0].compact())
	require.Equal(t, []string{"SessionStart", "Stop", "PreCompact", "SessionEnd"}, keys(hooks))
	require.True(t, strings.HasPrefix(string(out), "{\n\t\"hooks\""), "the file's tab indentation is kept")

	again, err := Install(Claude, out, command(Claude))
	require.NoError(t, err)
	require.Equal(t, string(out), string(again))
}

// TestInstall_CRLF: a file with Windows line endings keeps them.
func TestInstall_CRLF(t *testing.T) {
	t.Parallel()
	in := strings.ReplaceAll(string(raw(t, Gemini, "settings_other_tool.json")), "\n", "\r\n")
	out, err := Install(Gemini, []byte(in), command(Gemini))
	require.NoError(t, err)
	require.Equal(t, strings.Count(string(out), "\n"), strings.Count(string(out), "\r\n"))
	again, err := Install(Gemini, out, command(Gemini))
	require.NoError(t, err)
	require.Equal(t, string(out), string(again))
}

// TestUninstall: only awr's handlers go, in either form Claude accepts.
func TestUninstall(t *testing.T) {
	t.Parallel()
	in := "\xef\xbb\xbf" + `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"awr","args":["client","hook","--client","claude"]}]}],` +
		`"Stop":[{"hooks":[{"type":"command","command":"keep.sh"},{"type":"command","command":"\"C:\\tools\\awr.exe\" client hook --client claude"},{"type":"command","command":"/opt/my\\ tools/awr client hook --client claude"}]}],` +
		`"Notification":[]},"theme":"dark"}`
	out, err := Uninstall(Claude, []byte(in))
	require.NoError(t, err)
	require.Equal(t, "\xef\xbb\xbf"+`{
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "keep.sh"
          }
        ]
      }
    ],
    "Notification": []
  },
  "theme": "dark"
}
`, string(out), "the byte order mark is kept; an empty event awr did not empty stays")
}

func keys(n *node) []string {
	var out []string
	for _, m := range n.members {
		out = append(out, m.key)
	}
	return out
}

func TestIsAwrCommand(t *testing.T) {
	t.Parallel()
	yes := []string{
		"awr client hook --client claude",
		"/usr/local/bin/awr client hook --client codex",
		`"/Users/me/my tools/awr" client hook --client gemini`,
		`'/opt/awr' client hook`,
		`C:\Program Files\awr\awr.exe client hook --client claude`[len(`C:\Program Files\awr\`):],
		`"C:\tools\AWR.EXE" client hook`,
		// A backslash escapes a blank as the host's shell reads it: the
		// two splitters awr had disagreed here, and uninstall kept it.
		`/opt/my\ tools/awr client hook --client claude`,
		"AWR_LOG=1 HOME=/tmp awr client hook --client claude",
		"  awr   client   hook  ",
	}
	for _, c := range yes {
		require.True(t, IsAwrCommand(c, nil), c)
	}
	no := []string{
		"", "awr", "awr client", "awr client bind", "awr hook client",
		"echo awr client hook", "awrx client hook", "/bin/sh -c 'awr client hook'",
		"notify-send awr", "=x awr client hook", `/opt/my\ tools/awr\ client hook`,
	}
	for _, c := range no {
		require.False(t, IsAwrCommand(c, nil), c)
	}
	require.True(t, IsAwrCommand("/bin/awr", []string{"client", "hook", "--client", "claude"}))
	require.True(t, IsAwrCommand(`C:\my tools\awr.exe`, []string{"client", "hook"}))
	require.False(t, IsAwrCommand("awr", []string{"client"}))
}

func TestSettingsPath(t *testing.T) {
	t.Parallel()
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	cases := []struct {
		h    Host
		sc   Scope
		env  map[string]string
		want string
	}{
		{Claude, Project, nil, "/work/project/.claude/settings.json"},
		{Codex, Project, nil, "/work/project/.codex/hooks.json"},
		{Gemini, Project, nil, "/work/project/.gemini/settings.json"},
		{Claude, User, nil, "/home/me/.claude/settings.json"},
		{Codex, User, nil, "/home/me/.codex/hooks.json"},
		{Gemini, User, nil, "/home/me/.gemini/settings.json"},
		{Claude, User, map[string]string{"CLAUDE_CONFIG_DIR": "/cfg/claude"}, "/cfg/claude/settings.json"},
		{Codex, User, map[string]string{"CODEX_HOME": "/cfg/codex"}, "/cfg/codex/hooks.json"},
		{Gemini, User, map[string]string{"GEMINI_CLI_HOME": "/cfg/g"}, "/cfg/g/.gemini/settings.json"},
	}
	for _, tc := range cases {
		for k := range env {
			delete(env, k)
		}
		for k, v := range tc.env {
			env[k] = v
		}
		got, err := SettingsPath(tc.h, tc.sc, "/work/project", "/home/me", getenv)
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
	}
	got, err := SettingsPath(Codex, User, "", "/home/me", nil)
	require.NoError(t, err)
	require.Equal(t, "/home/me/.codex/hooks.json", got)

	_, err = SettingsPath(Claude, Project, "relative", "/home/me", nil)
	require.Equal(t, fault.InvalidInput, fault.CodeOf(err))
	_, err = SettingsPath(Claude, User, "/p", "", nil)
	require.Equal(t, fault.InvalidInput, fault.CodeOf(err))
	_, err = SettingsPath(Codex, User, "/p", "/home/me", func(string) string { return "rel/dir" })
	require.Equal(t, fault.InvalidInput, fault.CodeOf(err))
	_, err = SettingsPath(Claude, Scope("system"), "/p", "/home/me", nil)
	require.ErrorIs(t, err, ErrUnknownScope)
	_, err = SettingsPath(Host("x"), Project, "/p", "/home/me", nil)
	require.ErrorIs(t, err, ErrUnknownHost)
}

func TestParseScope(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Scope{"": Project, "project": Project, " USER ": User} {
		got, err := ParseScope(in)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	_, err := ParseScope("local")
	require.ErrorIs(t, err, ErrUnknownScope)
}
