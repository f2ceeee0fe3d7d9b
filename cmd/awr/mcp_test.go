package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMCPWithoutServer: `awr mcp` runs awr-mcp; with none beside awr nor
// on PATH it says so (NotFound, exit 1) with the command that installs
// it, and writes nothing.
func TestMCPWithoutServer(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	dir := t.TempDir()
	var out, errb bytes.Buffer
	require.Equal(t, 1, run([]string{"--json", "--project", dir, "mcp"}, &out, &errb), errb.String())
	var e struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Hint    string         `json:"hint"`
		Details map[string]any `json:"details"`
	}
	require.NoError(t, json.Unmarshal(errb.Bytes(), &e), errb.String())
	require.Equal(t, "NotFound", e.Code)
	require.Contains(t, e.Message, "awr-mcp")
	require.Contains(t, e.Message, "PATH")
	exe, err := os.Executable()
	require.NoError(t, err)
	require.Equal(t, filepath.Dir(exe), e.Details["looked_in"])
	require.Empty(t, e.Hint, "no awr command installs it")
	require.Contains(t, e.Message, "CGO_ENABLED=0 go install -trimpath github.com/awr-dev/awr/cmd/awr-mcp@latest")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "awr mcp wrote into the project")
}

// TestMCPOnPath: awr-mcp is found on PATH when it is not beside awr; a
// file of that name that is not executable is not a server.
func TestMCPOnPath(t *testing.T) {
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	p := filepath.Join(bin, "awr-mcp")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o644))
	_, err := awrMCPBinary()
	require.Error(t, err, "a file that is not executable")
	require.NoError(t, os.Chmod(p, 0o755))
	got, err := awrMCPBinary()
	require.NoError(t, err)
	require.Equal(t, p, got)
}

// TestCLIWithoutMCPSDK: the CLI does not link the MCP SDK (its packages'
// initialisation cost every awr call; awr mcp runs awr-mcp instead).
func TestCLIWithoutMCPSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, pkg := range strings.Fields(string(out)) {
		require.False(t, strings.HasPrefix(pkg, "github.com/modelcontextprotocol/") || pkg == "github.com/awr-dev/awr/internal/serve/mcpserver" || pkg == "encoding/gob",
			"awr links %s", pkg)
	}
}
