package rig

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSiblingAwr(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(filepath.Dir(exe), "awr")); err == nil {
		t.Skip("an awr beside the test binary")
	}
	t.Setenv("PATH", t.TempDir())
	require.Equal(t, "", SiblingAwr(), "no awr beside it or on PATH: agents find their own")

	dir := t.TempDir()
	bin := filepath.Join(dir, "awr")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755))
	t.Setenv("PATH", dir)
	require.Equal(t, bin, SiblingAwr(), "the awr on PATH, absolute")
}
