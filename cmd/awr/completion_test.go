package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/stretchr/testify/require"
)

// TestCompletion_Bash sources the bash script in a real bash, sets
// COMP_WORDS and COMP_CWORD as bash's completion does, calls the
// function the script registered and reads COMPREPLY: the script and
// awr __complete together complete commands, enum values after "=" (which
// bash splits into a word of its own) and the project's session ids.
func TestCompletion_Bash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	// The completion script runs awr from $PATH: the one testkit built.
	t.Setenv("PATH", testkit.Programs(t, testkit.AWR)+string(filepath.ListSeparator)+os.Getenv("PATH"))
	_, err = exec.LookPath("awr")
	require.NoError(t, err)

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"), []byte("# Tasks\n\n- [ ] W-1 Write the store\n"), 0o644))
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"init", "--project", dir, "--accept"}, &out, &errb), errb.String())
	out.Reset()
	require.Equal(t, 0, run([]string{"session", "start", "--project", dir, "--work", "W-1", "--agent", "a", "--json"}, &out, &errb), errb.String())
	var script bytes.Buffer
	require.Equal(t, 0, run([]string{"completion", "bash"}, &script, &errb))
	file := filepath.Join(t.TempDir(), "awr.bash")
	require.NoError(t, os.WriteFile(file, script.Bytes(), 0o644))

	complete := func(words ...string) []string {
		t.Helper()
		// The words as bash's readline splits them, the cursor on the last.
		var b strings.Builder
		b.WriteString("source " + shellQuote(file) + "\nCOMP_WORDS=(awr")
		for _, w := range words {
			b.WriteString(" " + shellQuote(w))
		}
		b.WriteString(")\nCOMP_CWORD=" + strconv.Itoa(len(words)) + "\n")
		b.WriteString("fn=$(complete -p awr | sed -n 's/.*-F \\([^ ]*\\) .*/\\1/p')\n$fn awr\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n")
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", b.String())
		cmd.Dir = dir
		got, err := cmd.CombinedOutput()
		require.NoError(t, err, string(got))
		return strings.Fields(string(got))
	}
	require.Equal(t, []string{"ready", "recovery", "replay"}, complete("re"))
	require.Equal(t, []string{"abandoned", "completed", "incomplete", "interrupted"}, complete("session", "end", "--outcome", "=", ""))
	require.Equal(t, []string{"incomplete", "interrupted"}, complete("session", "end", "--outcome", "=", "in"))
	require.Equal(t, []string{"--session"}, complete("session", "end", "--sess"))
	require.Equal(t, []string{"W-1"}, complete("context", "compile", "--work", ""))
	var started struct{ Session struct{ ID string } }
	require.NoError(t, json.Unmarshal(out.Bytes(), &started))
	require.Equal(t, []string{started.Session.ID}, complete("session", "show", ""))
}
