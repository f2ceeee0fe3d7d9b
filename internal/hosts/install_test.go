package hosts

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUninstallRestoresBytes: for every host, uninstall after install
// gives back the settings file byte for byte, whatever it held (one line,
// other indentation, a byte order mark, CRLF line ends, no final newline,
// an empty object), and removes a file install created; a second install
// keeps the first original. Without Keep, uninstall works on the
// structure: a one-line file comes back indented.
func TestUninstallRestoresBytes(t *testing.T) {
	t.Parallel()
	originals := []string{
		`{"theme":"dark"}`,
		"{\n    \"theme\": \"dark\",\n    \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify.sh\"}]}]}\n}\n",
		"\xef\xbb\xbf{\r\n  \"model\": \"x\"\r\n}\r\n",
		"{}",
		"{\"hooks\":{}}\n",
	}
	out, err := Uninstall(Claude, must(Install(Claude, []byte(originals[0]), command(Claude))))
	require.NoError(t, err)
	require.Equal(t, "{\n  \"theme\": \"dark\"\n}\n", string(out), "by structure only, the file is reformatted")
	ctx := context.Background()
	for _, h := range jsonHosts() {
		dir := t.TempDir()
		path := filepath.Join(dir, "settings.json")
		// A binary that does not exist: the check fails at once (Force
		// installs anyway) instead of running an awr found on PATH.
		c := Change{Host: h, Scope: Project, Path: path, Command: "/nonexistent/" + command(h), Dir: dir, Keep: filepath.Join(dir, "kept"), Accept: true, Force: true, Preview: "awr client install"}
		un := Change{Host: h, Scope: Project, Path: path, Keep: c.Keep, Accept: true, Preview: "awr client uninstall"}
		for i, orig := range originals {
			require.NoError(t, os.WriteFile(path, []byte(orig), 0o600))
			_, err := ApplyInstall(ctx, c)
			require.NoError(t, err)
			again := c
			again.Command += " --no-block" // a changed install keeps the first original
			_, err = ApplyInstall(ctx, again)
			require.NoError(t, err)
			res, err := ApplyUninstall(un)
			require.NoError(t, err)
			require.False(t, res.Removed)
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, orig, string(got), "%s #%d: uninstall restores the file byte for byte", h, i)
		}
		require.NoError(t, os.Remove(path))

		// A file install created is removed by uninstall.
		_, err := ApplyInstall(ctx, c)
		require.NoError(t, err)
		require.FileExists(t, path)
		pre, err := ApplyUninstall(Change{Host: h, Scope: Project, Path: path, Keep: c.Keep, Preview: "awr client uninstall"})
		require.NoError(t, err)
		require.True(t, pre.Removed, "%s: the preview says the file goes", h)
		require.FileExists(t, path, "%s: a preview writes nothing", h)
		un.Fingerprint = pre.Fingerprint
		res, err := ApplyUninstall(un)
		require.NoError(t, err)
		require.Equal(t, StatusUninstalled, res.Status)
		require.True(t, res.Removed)
		require.NoFileExists(t, path, "%s: the file awr created is gone", h)

		// A file changed since install is uninstalled by structure: the
		// other change stays.
		require.NoError(t, os.WriteFile(path, []byte(originals[0]), 0o600))
		_, err = ApplyInstall(ctx, c)
		require.NoError(t, err)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, append(data, ' '), 0o600))
		un.Fingerprint = ""
		_, err = ApplyUninstall(un)
		require.NoError(t, err)
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Contains(t, string(got), `"theme": "dark"`)
		require.NotContains(t, string(got), "client hook")
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
