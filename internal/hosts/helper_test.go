package hosts

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/awr-dev/awr/fixtures/testkit"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the goldens in testdata/ from the actual output")

// fixtureDir is the hook fixtures of the repository.
var fixtureDir = testkit.Path("fixtures", "hooks")

// testCwd replaces the fixtures' cwd, as a project under the test's temporary
// directory would.
const testCwd = "/tmp/awr-test/project"

// fixture reads fixtures/hooks/HOST/NAME with its cwd rewritten to testCwd.
func fixture(t testing.TB, host Host, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, string(host), name))
	require.NoError(t, err)
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || m["cwd"] == nil {
		return b // settings files and broken files are used as they are
	}
	m["cwd"] = json.RawMessage(`"` + testCwd + `"`)
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return out
}

// raw reads a fixture file as it is.
func raw(t testing.TB, host Host, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, string(host), name))
	require.NoError(t, err)
	return b
}

// golden compares got with testdata/NAME, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden; run go test ./internal/hosts -update")
	require.Equal(t, string(want), string(got), "golden %s differs; run go test ./internal/hosts -update if the change is intended", path)
}

// payloads lists the fixture payload files of a host (settings files left
// out).
func payloads(t testing.TB, host Host) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(fixtureDir, string(host)))
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		n := e.Name()
		if filepath.Ext(n) != ".json" || n == "settings_other_tool.json" || n == "settings_broken.json" ||
			n == "hooks_other_tool.json" || n == "hooks_broken.json" {
			continue
		}
		out = append(out, n)
	}
	return out
}
