package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/require"
)

// TestRootHelp: `awr`, `awr help` and `awr --help` print the grouped page:
// at most 60 lines of at most 80 columns, every visible command exactly
// once under a heading of helpGroups (none under "Other"), and no name in
// helpGroups that is not a command.
func TestRootHelp(t *testing.T) {
	t.Parallel()
	var cli CLI
	parser, err := kong.New(&cli, kong.Name("awr"), kong.Exit(func(int) {}))
	require.NoError(t, err)
	visible := map[string]bool{}
	for _, c := range parser.Model.Node.Children {
		if c.Type == kong.CommandNode && !c.Hidden {
			visible[c.Name] = true
		}
	}
	for _, g := range helpGroups {
		for _, c := range g.cmds {
			require.True(t, visible[c[0]], "helpGroups names %q, which is not a visible command", c[0])
		}
	}
	var first string
	for _, args := range [][]string{nil, {"help"}, {"--help"}, {"-h"}} {
		var out, errb bytes.Buffer
		require.Equal(t, 0, run(args, &out, &errb), "awr %v: %s", args, errb.String())
		require.Empty(t, errb.String())
		page := out.String()
		if first == "" {
			first = page
		}
		require.Equal(t, first, page, "awr %v prints the same page", args)
	}
	lines := strings.Split(strings.TrimSuffix(first, "\n"), "\n")
	require.LessOrEqual(t, len(lines), 60, first)
	require.NotContains(t, first, "\nOther:")
	for _, l := range lines {
		require.LessOrEqual(t, len([]rune(l)), 80, "%q", l)
	}
	for name := range visible {
		n := 0
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 0 && f[0] == name && strings.HasPrefix(l, "  ") {
				n++
			}
		}
		require.Equal(t, 1, n, "command %s on the root page:\n%s", name, first)
	}
}

// TestNounAloneListsVerbs: a command of verbs named alone lists its verbs
// with exit status 0, also after global flags; one that runs a default
// verb (doctor), one given --json, and one with a stray word are not
// turned into help.
func TestNounAloneListsVerbs(t *testing.T) {
	t.Parallel()
	nouns := 0
	for _, n := range commandTree().children {
		if len(n.children) == 0 || n.hasDefault || n.name == "__complete" {
			continue
		}
		nouns++
		var out, errb bytes.Buffer
		require.Equal(t, 0, run([]string{n.name}, &out, &errb), "awr %s: %s", n.name, errb.String())
		require.Contains(t, out.String(), "Usage: awr "+n.name+" <command>")
		for _, v := range n.children {
			require.Contains(t, out.String(), n.name+" "+v.name, "awr %s lists %s", n.name, v.name)
		}
	}
	require.GreaterOrEqual(t, nouns, 10)
	require.Equal(t, "rig", nounAlone([]string{"--project", "p", "rig"}))
	require.Equal(t, "rig", nounAlone([]string{"--timeout=5s", "rig"}))
	for _, args := range [][]string{{"doctor"}, {"session", "--json"}, {"session", "frob"}, {"status"}, {"session", "--nope"}, {}} {
		require.Empty(t, nounAlone(args), "%v", args)
	}
	var out, errb bytes.Buffer
	require.Equal(t, 2, run([]string{"session", "--json"}, &out, &errb))
	require.Contains(t, errb.String(), `"code":"Usage"`)
}
