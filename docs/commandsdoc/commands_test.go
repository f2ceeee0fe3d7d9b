// Package commandsdoc runs the command examples of the command reference
// (docs/commands.md, the index, and its pages per noun under
// docs/commands/) against real projects (fixtures/doctest): a package of
// its own so that Go runs it beside the other docs' examples.
package commandsdoc

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/awr-dev/awr/fixtures/doctest"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/stretchr/testify/require"
)

// TestMain removes the programs the kit built once the tests end.
func TestMain(m *testing.M) { os.Exit(testkit.Run(m)) }

// TestDocs runs the examples of commands.md and of every page under
// docs/commands/, each page a parallel subtest (TestDocs/commands/session)
// whose scenario chains run in parallel again (-update-docs rewrites what
// they show from the run).
// Slow: every example is an awr process, and the rig examples start agents in tmux.
func TestDocs(t *testing.T) {
	pages, err := filepath.Glob(testkit.Path("docs", "commands", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, pages, "no page under docs/commands/")
	names := []string{"commands.md"}
	for _, p := range pages {
		names = append(names, filepath.Join("commands", filepath.Base(p)))
	}
	doctest.Run(t, names...)
}
