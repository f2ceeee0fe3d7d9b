// Package commandsdoc runs the command examples of docs/commands.md, the
// reference of every command, against real projects (fixtures/doctest):
// a package of its own so that Go runs it beside the other docs' examples.
package commandsdoc

import (
	"os"
	"testing"

	"github.com/awr-dev/awr/fixtures/doctest"
	"github.com/awr-dev/awr/fixtures/testkit"
)

// TestMain removes the programs the kit built once the tests end.
func TestMain(m *testing.M) { os.Exit(testkit.Run(m)) }

// TestDocs runs commands.md's examples (-update-docs rewrites what it
// shows from the run).
// Slow: every example is an awr process, and the rig examples start agents in tmux.
func TestDocs(t *testing.T) {
	doctest.Run(t, "commands.md")
}
