package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// requireInert fails when a text view holds a control character other
// than its own newlines and tabs, or a line that is not one of the view's
// (a recorded name that started a row of its own).
func requireInert(t *testing.T, what, out string, fake string) {
	t.Helper()
	for _, r := range out {
		if r == '\n' || r == '\t' {
			continue
		}
		require.False(t, r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u202e', "%s: raw %q in %q", what, r, out)
	}
	for _, l := range strings.Split(out, "\n") {
		require.False(t, strings.HasPrefix(strings.TrimSpace(l), fake), "%s: a name made the row %q", what, l)
	}
}

// TestTextViews_Inert: names and texts a person or a source wrote (a
// source file's name, a work item's title and key, an agent label) reach
// every text view escaped: no terminal escape (title set, screen clear),
// no line of their own (a fake row), no reordering control; JSON keeps
// them exactly.
func TestTextViews_Inert(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := "notes\x1b]0;pwned\x07\x1b[2J\n    99  2026-01-01T00:00:00Z  fake_row.md"
	todo := "# TODO\n\n- [ ] T-1: Build \x1b[2Jthe \u202ething\r    99  fake_title\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"), []byte(todo), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("# Notes\n\n- [ ] N-1: A note\n"), 0o644))
	awr := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		code := run(append([]string{"--project", dir}, args...), &out, &errb)
		require.Zero(t, code, "%v: %s", args, errb.String())
		requireInert(t, strings.Join(args, " ")+" (stderr)", errb.String(), "99")
		if args[len(args)-1] != "--json" {
			requireInert(t, strings.Join(args, " "), out.String(), "99")
		}
		return out.String()
	}
	awr("init", "--accept", "--source", "TODO.md")
	awr("source", "add", name)
	awr("session", "start", "--work", "T-1", "--agent", "bob", "--claim")
	for _, args := range [][]string{{"log"}, {"source", "list"}, {"source", "reindex"}, {"status"}, {"ready", "--all"}, {"session", "list"}, {"work", "show", "T-1"}, {"intake", "inspect"}, {"search", "note"}} {
		awr(args...)
	}
	// JSON keeps the name exactly (escaped by JSON itself).
	out := awr("source", "list", "--json")
	require.Contains(t, out, `notes\u001b]0;pwned\u0007\u001b[2J\n`)
}

// The last step of every text view escapes what a call site let through,
// and keeps the view's own newlines and tabs.
func TestRender_TextIsInert(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	app := &App{Stdout: &out}
	require.NoError(t, app.render(struct{}{}, func(w io.Writer) {
		io.WriteString(w, "name\t\x1b]0;title\x07\x1b[2J\rx\u2028y\u202ez\n")
	}))
	require.Equal(t, "name\t\\x1b]0;title\\x07\\x1b[2J\\x0dx\\u2028y\\u202ez\n", out.String())
}
