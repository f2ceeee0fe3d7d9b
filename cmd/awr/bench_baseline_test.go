package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/awr-dev/awr/internal/lab/bench"
	"github.com/stretchr/testify/require"
)

// TestBenchRunBaseline: `bench run --compare --baseline` measures the
// targets that divide two histories of one register (3: status and
// ready; 7: a checkpoint as a process) as paired runs of the real binary,
// names both histories' sizes, leaves no session of its own open in
// either project, and refuses a baseline of another register or without
// --compare before it writes anything. Slow: it generates three histories
// and runs each figure as paired processes; the short form's histories
// are a third of the long form's (AWR_LONG=1).
func TestBenchRunBaseline(t *testing.T) {
	t.Parallel()
	bin := buildAWR(t)
	bigN, smallN, otherN := 200, 50, 40
	if os.Getenv("AWR_LONG") != "" {
		bigN, smallN, otherN = 600, 150, 100
	}
	awr := func(args ...string) ([]byte, error) { return exec.Command(bin, args...).CombinedOutput() }
	must := func(args ...string) []byte {
		t.Helper()
		out, err := awr(args...)
		require.NoError(t, err, "awr %s: %s", strings.Join(args, " "), out)
		return out
	}
	big, small, other := t.TempDir(), t.TempDir(), t.TempDir()
	for _, p := range []struct {
		dir          string
		tasks, count int
	}{{big, 20, bigN}, {small, 20, smallN}, {other, 7, otherN}} {
		must("bench", "project", p.dir, "--tasks", strconv.Itoa(p.tasks), "--seed", "1", "--json")
		must("--project", p.dir, "bench", "generate", "--events", strconv.Itoa(p.count), "--json")
	}
	head := func(dir string) int64 {
		var st struct {
			ProjectRevision int64 `json:"project_revision"`
		}
		require.NoError(t, json.Unmarshal(must("--project", dir, "status", "--json"), &st))
		return st.ProjectRevision
	}
	bigHead, smallHead := head(big), head(small)

	var res bench.RunResult
	require.NoError(t, json.Unmarshal(must("--project", big, "bench", "run", "--compare", "--pairs", "2", "--count", "1", "--replay-count", "1",
		"--floor", bin, "--baseline", small, "--json"), &res))
	found := map[string]bench.Target{}
	for _, tg := range res.Targets {
		for _, prefix := range []string{"status at ", "ready at ", "session checkpoint at "} {
			if strings.HasPrefix(tg.Name, prefix) {
				found[prefix] = tg
			}
		}
	}
	require.Len(t, found, 3, "%+v", res.Targets)
	for prefix, tg := range found {
		want := 3
		if prefix == "session checkpoint at " {
			want = 7
		}
		require.Equal(t, want, tg.ID, tg.Name)
		require.NotNil(t, tg.Measured, tg.Name)
		require.NotNil(t, tg.Met, tg.Name)
		require.Positive(t, *tg.Measured, tg.Name)
		require.Contains(t, tg.Name, strconv.FormatInt(bigHead, 10)+" events / at "+strconv.FormatInt(smallHead, 10), "the figure names both histories")
	}
	for _, dir := range []string{big, small} {
		var list struct {
			Sessions []struct {
				Agent string `json:"agent"`
			} `json:"sessions"`
		}
		require.NoError(t, json.Unmarshal(must("--project", dir, "session", "list", "--active", "--json"), &list))
		for _, s := range list.Sessions {
			require.NotEqual(t, "bench-run", s.Agent, "%s: bench run left its session open", dir)
		}
	}

	before := head(big)
	out, err := awr("--project", big, "bench", "run", "--compare", "--pairs", "2", "--count", "1", "--replay-count", "1",
		"--floor", bin, "--baseline", other, "--json")
	var fe struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Hint    string `json:"hint"`
	}
	require.Error(t, err)
	require.Equal(t, 1, err.(*exec.ExitError).ExitCode(), "%s", out)
	require.NoError(t, json.Unmarshal(out, &fe), "%s", out)
	require.Equal(t, "InvalidInput", fe.Code)
	require.Contains(t, fe.Message, "holds another register (7 work items against this project's 20)")
	require.True(t, strings.HasPrefix(fe.Hint, "awr bench project ") && strings.HasSuffix(fe.Hint, " BASELINE_DIR --tasks 20 --seed 1"), fe.Hint)
	require.Equal(t, before, head(big), "refused before anything was written")

	out, err = awr("--project", big, "bench", "run", "--baseline", small, "--json")
	require.Error(t, err)
	require.Equal(t, 2, err.(*exec.ExitError).ExitCode(), "%s", out)
	require.Contains(t, string(out), "--baseline "+small+" needs --compare")
}
