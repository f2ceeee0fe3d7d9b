package exec_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awr-dev/awr/internal/exec"
	"github.com/awr-dev/awr/internal/secret/secrettest"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// TestRun runs a real command: its streams pass through whole, the kept
// copy withholds the line that holds a credential, the hashes and counts
// cover everything written, and the exit code and status are the
// command's.
func TestRun(t *testing.T) {
	root := t.TempDir()
	cred := secrettest.Fresh(rand.New(rand.NewPCG(1, 2)))[0]
	t.Setenv("AWR_EXEC_TEST_CRED", cred.Text)
	x := &projections.Execution{ID: "x1", Argv: []string{"sh", "-c", `echo one; echo "$AWR_EXEC_TEST_CRED"; echo two >&2; exit 3`}}
	var out, errOut bytes.Buffer
	fin, err := exec.Run(context.Background(), x, root, root, nil, &out, &errOut)
	require.NoError(t, err)
	require.Equal(t, 3, fin.ExitCode)
	require.Equal(t, "one\n"+cred.Text+"\n", out.String())
	require.Equal(t, "two\n", errOut.String())
	require.Equal(t, 1, fin.Stdout.Withheld)
	require.EqualValues(t, out.Len(), fin.Stdout.Bytes)
	kept, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(exec.ExecutionDir("x1")), "stdout"))
	require.NoError(t, err)
	require.Equal(t, "one\n[line withheld: it looks like a "+cred.Kind+"]\n", string(kept))
	require.NotContains(t, string(kept), cred.Body)
	code := 3
	require.Equal(t, 3, exec.ExitStatus(&projections.Execution{ExitCode: &code}))
}

// TestRun_NotFound is a command that never starts: exit code 127, the
// reason recorded and said on stderr.
func TestRun_NotFound(t *testing.T) {
	root := t.TempDir()
	var errOut bytes.Buffer
	fin, err := exec.Run(context.Background(), &projections.Execution{ID: "x2", Argv: []string{"awr-no-such-command"}}, root, root, nil, nil, &errOut)
	require.NoError(t, err)
	require.Equal(t, 127, fin.ExitCode)
	require.NotEmpty(t, fin.Error)
	require.True(t, strings.HasPrefix(errOut.String(), "awr: "), errOut.String())
}
