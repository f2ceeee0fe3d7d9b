package project_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/awr-dev/awr/fixtures/testkit"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/hosts"
	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

// fakeAwr writes an executable named awr under dir that answers
// `version --json` as awr does, and returns its path.
func fakeAwr(t *testing.T, dir string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake awr is a shell script")
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	bin := filepath.Join(dir, "awr")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\necho '{\"version\":\"test\"}'\n"), 0o755))
	return bin
}

// hostProject opens a project in a fresh directory whose hook command
// runs a fake awr that answers.
func hostProject(t *testing.T) (*project.Project, string) {
	t.Helper()
	root := t.TempDir()
	bin := fakeAwr(t, filepath.Join(root, "bin"))
	dir := filepath.Join(root, "proj")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	p, err := project.Open(context.Background(), dir, project.Options{Rig: project.RigOptions{AwrBin: bin}})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p, bin
}

func projectPath(dir string, h hosts.Host) string {
	switch h {
	case hosts.Claude:
		return filepath.Join(dir, ".claude", "settings.json")
	case hosts.Codex:
		return filepath.Join(dir, ".codex", "hooks.json")
	case hosts.OpenCode:
		return filepath.Join(dir, ".opencode", "plugins", "awr.js")
	}
	return filepath.Join(dir, ".gemini", "settings.json")
}

func settingsFixture(t *testing.T, h hosts.Host, kind string) []byte {
	t.Helper()
	name := "settings_" + kind + ".json"
	if h == hosts.Codex {
		name = "hooks_" + kind + ".json"
	}
	b := mustReadFile(t, testkit.Path("fixtures", "hooks", string(h), name))
	return b
}

func place(t *testing.T, path string, b []byte) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

func decoded(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	return v
}

// TestClientInstall_AbsentFile: the preview writes nothing and shows the
// file; accepting it writes exactly that; a second install is unchanged.
func TestClientInstall_AbsentFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, h := range hosts.Hosts() {
		t.Run(string(h), func(t *testing.T) {
			t.Parallel()
			p, bin := hostProject(t)
			path := projectPath(p.Dir(), h)
			req := project.ClientInstallRequest{Client: string(h)}

			pre, err := p.ClientInstall(ctx, req)
			require.NoError(t, err)
			require.Equal(t, project.HostPreview, pre.Status)
			require.True(t, pre.Changed)
			require.Equal(t, path, pre.Path)
			require.Equal(t, "project", pre.Scope)
			require.Equal(t, hosts.Absent, pre.Fingerprint)
			require.Equal(t, hosts.Installed(h), pre.Events)
			require.Equal(t, bin+" client hook --client "+string(h), pre.Command)
			require.Contains(t, pre.Content, pre.Command)
			require.Contains(t, pre.Next, "awr client install --client "+string(h)+" --scope project")
			require.True(t, strings.HasSuffix(pre.Next, " --accept --fingerprint absent"), pre.Next)
			require.Equal(t, []project.HostCheck{{Name: "hook_command", OK: true, Detail: bin + " answers: awr test"}}, pre.Checks)
			require.NoFileExists(t, path, "a preview writes nothing")

			req.Accept, req.Fingerprint = true, pre.Fingerprint
			got, err := p.ClientInstall(ctx, req)
			require.NoError(t, err)
			require.Equal(t, project.HostInstalled, got.Status)
			require.True(t, got.Changed)
			require.Empty(t, got.Next)
			b := mustReadFile(t, path)
			require.Equal(t, pre.Content, string(b), "accept writes what the preview showed")

			again, err := p.ClientInstall(ctx, project.ClientInstallRequest{Client: string(h), Accept: true})
			require.NoError(t, err)
			require.Equal(t, project.HostUnchanged, again.Status)
			require.False(t, again.Changed)
			require.Equal(t, hosts.Fingerprint(b, true), again.Fingerprint)
			b2 := mustReadFile(t, path)
			require.Equal(t, string(b), string(b2), "a second install changes nothing")
		})
	}
}

// TestClientInstall_OtherHooks: installing into a file that holds another
// tool's hooks keeps them; uninstalling removes only awr's entries.
func TestClientInstall_OtherHooks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, h := range []hosts.Host{hosts.Claude, hosts.Codex, hosts.Gemini} { // OpenCode's file is awr's whole (internal/hosts TestPlugin)
		t.Run(string(h), func(t *testing.T) {
			t.Parallel()
			p, _ := hostProject(t)
			path := projectPath(p.Dir(), h)
			orig := settingsFixture(t, h, "other_tool")
			place(t, path, orig)

			pre, err := p.ClientInstall(ctx, project.ClientInstallRequest{Client: string(h)})
			require.NoError(t, err)
			require.Equal(t, hosts.Fingerprint(orig, true), pre.Fingerprint)
			got, err := p.ClientInstall(ctx, project.ClientInstallRequest{Client: string(h), Accept: true, Fingerprint: pre.Fingerprint})
			require.NoError(t, err)
			require.Equal(t, project.HostInstalled, got.Status)
			b := mustReadFile(t, path)
			want, err := hosts.Install(h, orig, got.Command)
			require.NoError(t, err)
			require.Equal(t, string(want), string(b))

			un, err := p.ClientUninstall(ctx, project.ClientUninstallRequest{Client: string(h)})
			require.NoError(t, err)
			require.Equal(t, project.HostPreview, un.Status)
			require.Equal(t, hosts.Installed(h), un.Events)
			require.Contains(t, un.Next, "awr client uninstall --client "+string(h))
			require.Contains(t, un.Next, "--accept --fingerprint "+hosts.Fingerprint(b, true))
			still := mustReadFile(t, path)
			require.Equal(t, string(b), string(still), "an uninstall preview writes nothing")

			un, err = p.ClientUninstall(ctx, project.ClientUninstallRequest{Client: string(h), Accept: true, Fingerprint: un.Fingerprint})
			require.NoError(t, err)
			require.Equal(t, project.HostUninstalled, un.Status)
			back := mustReadFile(t, path)
			require.Equal(t, decoded(t, orig), decoded(t, back), "every other hook and setting is kept")

			un, err = p.ClientUninstall(ctx, project.ClientUninstallRequest{Client: string(h), Accept: true})
			require.NoError(t, err)
			require.Equal(t, project.HostUnchanged, un.Status)
			require.Empty(t, un.Events)
		})
	}
}

// TestClientInstall_BrokenJSON: a settings file that is not valid JSON is
// refused with its path, line and column, and nothing is written.
func TestClientInstall_BrokenJSON(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	at := map[hosts.Host][2]int{hosts.Claude: {8, 9}, hosts.Codex: {6, 9}, hosts.Gemini: {5, 3}}
	for _, h := range []hosts.Host{hosts.Claude, hosts.Codex, hosts.Gemini} { // OpenCode's plugin is no JSON
		t.Run(string(h), func(t *testing.T) {
			t.Parallel()
			p, _ := hostProject(t)
			path := projectPath(p.Dir(), h)
			broken := settingsFixture(t, h, "broken")
			place(t, path, broken)
			_, ierr := p.ClientInstall(ctx, project.ClientInstallRequest{Client: string(h), Accept: true})
			_, uerr := p.ClientUninstall(ctx, project.ClientUninstallRequest{Client: string(h), Accept: true})
			for _, err := range []error{ierr, uerr} {
				require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
				require.ErrorIs(t, err, hosts.ErrSettingsSyntax)
				fe := fault.As(err)
				pos := at[h]
				require.Contains(t, fe.Message, path+":"+strconv.Itoa(pos[0])+":"+strconv.Itoa(pos[1])+": not valid JSON")
				require.Equal(t, pos[0], fe.Details["line"])
				require.Equal(t, pos[1], fe.Details["column"])
				require.Equal(t, path, fe.Details["path"])
				require.Contains(t, fe.Hint, "awr client ")
			}
			b := mustReadFile(t, path)
			require.Equal(t, string(broken), string(b), "nothing written")
		})
	}
}

// TestClientInstall_ChangedSincePreview: accepting a preview whose file
// changed since is SourceStale with the command that previews again, and
// nothing is written.
func TestClientInstall_ChangedSincePreview(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p, _ := hostProject(t)
	path := projectPath(p.Dir(), hosts.Claude)

	pre, err := p.ClientInstall(ctx, project.ClientInstallRequest{Client: "claude"})
	require.NoError(t, err)
	edited := []byte(`{"model":"other"}` + "\n")
	place(t, path, edited)
	_, err = p.ClientInstall(ctx, project.ClientInstallRequest{Client: "claude", Accept: true, Fingerprint: pre.Fingerprint})
	require.True(t, fault.Is(err, fault.SourceStale), "%v", err)
	fe := fault.As(err)
	require.Equal(t, hosts.Absent, fe.Details["expected"])
	require.Equal(t, hosts.Fingerprint(edited, true), fe.Details["actual"])
	require.True(t, strings.HasPrefix(fe.Hint, "awr client install --client claude --scope project"), fe.Hint)
	require.NotContains(t, fe.Hint, "--accept", "the hint previews again")
	b := mustReadFile(t, path)
	require.Equal(t, string(edited), string(b))

	// The same for an uninstall.
	_, err = p.ClientInstall(ctx, project.ClientInstallRequest{Client: "claude", Accept: true})
	require.NoError(t, err)
	un, err := p.ClientUninstall(ctx, project.ClientUninstallRequest{Client: "claude"})
	require.NoError(t, err)
	place(t, path, edited)
	_, err = p.ClientUninstall(ctx, project.ClientUninstallRequest{Client: "claude", Accept: true, Fingerprint: un.Fingerprint})
	require.True(t, fault.Is(err, fault.SourceStale), "%v", err)
	require.Contains(t, fault.As(err).Hint, "awr client uninstall --client claude --scope project")
}

// TestClientInstall_Check: a hook command whose binary does not answer is
// reported by the check; a preview still shows the file, an accept is
// refused unless Force.
func TestClientInstall_Check(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p, bin := hostProject(t)
	path := projectPath(p.Dir(), hosts.Gemini)
	missing := filepath.Join(filepath.Dir(bin), "gone", "awr") + " client hook --client gemini"

	pre, err := p.ClientInstall(ctx, project.ClientInstallRequest{Client: "gemini", Command: missing})
	require.NoError(t, err)
	require.Equal(t, project.HostPreview, pre.Status)
	require.False(t, pre.Checks[0].OK)
	require.Contains(t, pre.Checks[0].Detail, "does not exist")
	require.Contains(t, pre.Next, "--command '"+missing+"'")

	_, err = p.ClientInstall(ctx, project.ClientInstallRequest{Client: "gemini", Command: missing, Accept: true})
	require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
	require.Contains(t, fault.As(err).Message, "--force")
	require.Equal(t, pre.Next[:strings.Index(pre.Next, " --accept")], fault.As(err).Hint, "the hint previews again")
	require.NoFileExists(t, path)

	got, err := p.ClientInstall(ctx, project.ClientInstallRequest{Client: "gemini", Command: missing, Accept: true, Force: true})
	require.NoError(t, err)
	require.Equal(t, project.HostInstalled, got.Status)
	require.FileExists(t, path)

	// Not executable.
	noexec := filepath.Join(t.TempDir(), "awr")
	require.NoError(t, os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644))
	pre, err = p.ClientInstall(ctx, project.ClientInstallRequest{Client: "claude", Command: noexec + " client hook --client claude"})
	require.NoError(t, err)
	require.Contains(t, pre.Checks[0].Detail, "is not executable")

	// Answers, but not as awr.
	mute := filepath.Join(t.TempDir(), "awr")
	require.NoError(t, os.WriteFile(mute, []byte("#!/bin/sh\necho hello\n"), 0o755))
	pre, err = p.ClientInstall(ctx, project.ClientInstallRequest{Client: "claude", Command: mute + " client hook --client claude"})
	require.NoError(t, err)
	require.Contains(t, pre.Checks[0].Detail, "did not print awr's version")

	// Not a hook command of awr.
	_, err = p.ClientInstall(ctx, project.ClientInstallRequest{Client: "claude", Command: "notify-send hi"})
	require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
	require.ErrorIs(t, err, hosts.ErrNotAwrCommand)
}

// TestClientInstall_PathWithSpaces: the default command quotes a binary
// path holding a space, and the check still finds it.
func TestClientInstall_PathWithSpaces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bin := fakeAwr(t, filepath.Join(t.TempDir(), "my tools"))
	p := opened(t, t.TempDir(), project.Options{Rig: project.RigOptions{AwrBin: bin}})
	res, err := p.ClientInstall(ctx, project.ClientInstallRequest{Client: "codex"})
	require.NoError(t, err)
	require.Equal(t, "'"+bin+"' client hook --client codex", res.Command)
	require.True(t, res.Checks[0].OK, res.Checks[0].Detail)
	require.True(t, hosts.IsAwrCommand(res.Command, nil))
}

// TestClientInstall_Unknown: an unknown client or scope reaching the door
// is InvalidInput.
func TestClientInstall_Unknown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p, _ := hostProject(t)
	_, err := p.ClientInstall(ctx, project.ClientInstallRequest{Client: "vim"})
	require.True(t, errors.Is(err, hosts.ErrUnknownHost), "%v", err)
	_, err = p.ClientUninstall(ctx, project.ClientUninstallRequest{Client: "claude", Scope: "team"})
	require.True(t, errors.Is(err, hosts.ErrUnknownScope), "%v", err)
	require.True(t, fault.Is(err, fault.InvalidInput))
}

// TestClientInstall_UserScope: user scope writes under each host's
// documented home, read from the environment (temporary directories
// here, never the real home).
func TestClientInstall_UserScope(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("CODEX_HOME", "")
	t.Setenv("GEMINI_CLI_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	p, _ := hostProject(t)
	want := map[hosts.Host]string{
		hosts.Claude:   filepath.Join(home, ".claude", "settings.json"),
		hosts.Codex:    filepath.Join(home, ".codex", "hooks.json"),
		hosts.Gemini:   filepath.Join(home, ".gemini", "settings.json"),
		hosts.OpenCode: filepath.Join(home, ".config", "opencode", "plugins", "awr.js"),
	}
	for _, h := range hosts.Hosts() {
		res, err := p.ClientInstall(ctx, project.ClientInstallRequest{Client: string(h), Scope: "user", Accept: true})
		require.NoError(t, err)
		require.Equal(t, want[h], res.Path)
		require.Equal(t, "user", res.Scope)
		require.FileExists(t, want[h])
		require.NotContains(t, res.Next, "--project")
		require.NoFileExists(t, projectPath(p.Dir(), h))
	}

	claude, codex, gemini, xdg := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", claude)
	t.Setenv("CODEX_HOME", codex)
	t.Setenv("GEMINI_CLI_HOME", gemini)
	t.Setenv("XDG_CONFIG_HOME", xdg)
	want = map[hosts.Host]string{
		hosts.Claude:   filepath.Join(claude, "settings.json"),
		hosts.Codex:    filepath.Join(codex, "hooks.json"),
		hosts.Gemini:   filepath.Join(gemini, ".gemini", "settings.json"),
		hosts.OpenCode: filepath.Join(xdg, "opencode", "plugins", "awr.js"),
	}
	for _, h := range hosts.Hosts() {
		pre, err := p.ClientInstall(ctx, project.ClientInstallRequest{Client: string(h), Scope: "user"})
		require.NoError(t, err)
		require.Equal(t, want[h], pre.Path)
		require.Contains(t, pre.Next, "--scope user --accept --fingerprint absent")
		_, err = p.ClientInstall(ctx, project.ClientInstallRequest{Client: string(h), Scope: "user", Accept: true, Fingerprint: pre.Fingerprint})
		require.NoError(t, err)
		un, err := p.ClientUninstall(ctx, project.ClientUninstallRequest{Client: string(h), Scope: "user", Accept: true})
		require.NoError(t, err)
		require.Equal(t, project.HostUninstalled, un.Status)
		require.Equal(t, want[h], un.Path)
	}
}
