package hosts

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
)

// TestPlugin: awr's OpenCode plugin runs exactly the hook command it was
// installed with (its words, without a shell; leading assignments as its
// environment), knows itself by its first line, and a second install
// changes nothing.
func TestPlugin(t *testing.T) {
	t.Parallel()
	out, err := Install(OpenCode, nil, `AWR_X=1 '/opt/my tools/awr' client hook --client opencode`)
	require.NoError(t, err)
	golden(t, "plugin_opencode.golden", out)
	require.True(t, IsPlugin(out))
	argv := regexp.MustCompile(`(?m)^const AWR = (.*)$`).FindSubmatch(out)
	require.NotNil(t, argv)
	var words []string
	require.NoError(t, json.Unmarshal(argv[1], &words))
	require.Equal(t, []string{"/opt/my tools/awr", "client", "hook", "--client", "opencode"}, words)
	env := regexp.MustCompile(`(?m)^const AWR_ENV = (.*)$`).FindSubmatch(out)
	require.NotNil(t, env)
	require.JSONEq(t, `{"AWR_X":"1"}`, string(env[1]))
	require.Contains(t, string(out), "shell: false")

	again, err := Install(OpenCode, out, `AWR_X=1 '/opt/my tools/awr' client hook --client opencode`)
	require.NoError(t, err)
	require.Equal(t, string(out), string(again))
	other, err := Install(OpenCode, out, "awr client hook --client opencode")
	require.NoError(t, err)
	require.NotEqual(t, string(out), string(other), "another command replaces awr's plugin")

	// Not awr's hook command: refused.
	_, err = Install(OpenCode, nil, "node evil.js")
	require.ErrorIs(t, err, ErrNotAwrCommand)

	// Another tool's file at awr's path: refused, never overwritten.
	foreign := raw(t, OpenCode, "plugin_other.js")
	_, err = Install(OpenCode, foreign, command(OpenCode))
	require.ErrorIs(t, err, ErrSettingsShape)
	require.Equal(t, fault.InvalidInput, fault.CodeOf(err))
	back, err := Uninstall(OpenCode, foreign)
	require.NoError(t, err)
	require.Equal(t, string(foreign), string(back), "uninstall leaves another tool's file alone")

	gone, err := Uninstall(OpenCode, out)
	require.NoError(t, err)
	require.Nil(t, gone, "without awr, nothing of its plugin is left")
	require.Equal(t, Installed(OpenCode), AwrEvents(OpenCode, out))
	require.Empty(t, AwrEvents(OpenCode, foreign))
}

// TestPlugin_InstallUninstall: install creates the plugin file (and its
// directories); uninstall removes the file it created; a preview writes
// nothing; a foreign file is refused and left as it was.
func TestPlugin_InstallUninstall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	path, err := SettingsPath(OpenCode, Project, dir, "", nil)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, ".opencode", "plugins", "awr.js"), path)
	c := Change{Host: OpenCode, Scope: Project, Path: path, Command: "/nonexistent/" + command(OpenCode), Dir: dir,
		Keep: filepath.Join(dir, ".awr", "hosts"), Accept: true, Force: true, Preview: "awr client install --client opencode"}
	res, err := ApplyInstall(ctx, c)
	require.NoError(t, err)
	require.Equal(t, StatusInstalled, res.Status)
	require.Equal(t, Installed(OpenCode), res.Events)
	require.FileExists(t, path)
	require.True(t, InstalledFile(dir, ".opencode/plugins/awr.js"), "awr's plugin is no change of the work")
	require.False(t, InstalledFile(dir, ".opencode/plugins/other.js"))

	un := Change{Host: OpenCode, Scope: Project, Path: path, Keep: c.Keep, Preview: "awr client uninstall --client opencode"}
	pre, err := ApplyUninstall(un)
	require.NoError(t, err)
	require.True(t, pre.Removed)
	require.FileExists(t, path, "a preview writes nothing")
	un.Accept = true
	res, err = ApplyUninstall(un)
	require.NoError(t, err)
	require.Equal(t, StatusUninstalled, res.Status)
	require.NoFileExists(t, path)

	// Without install's record (removed by hand), the plugin still goes.
	_, err = ApplyInstall(ctx, c)
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(c.Keep))
	res, err = ApplyUninstall(un)
	require.NoError(t, err)
	require.True(t, res.Removed)
	require.NoFileExists(t, path)

	foreign := raw(t, OpenCode, "plugin_other.js")
	require.NoError(t, os.WriteFile(path, foreign, 0o644))
	_, err = ApplyInstall(ctx, c)
	require.Error(t, err)
	require.Equal(t, fault.InvalidInput, fault.CodeOf(err))
	require.Contains(t, err.Error(), path)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(foreign), string(got))
	res, err = ApplyUninstall(un)
	require.NoError(t, err)
	require.Equal(t, StatusUnchanged, res.Status)
	require.False(t, InstalledFile(dir, ".opencode/plugins/awr.js"))
}
