package docs_test

import (
	"os"
	"testing"

	"github.com/awr-dev/awr/fixtures/doctest"
	"github.com/awr-dev/awr/fixtures/testkit"
)

// TestMain removes the programs the kit built once the tests end.
func TestMain(m *testing.M) { os.Exit(testkit.Run(m)) }

// TestDocs runs the command examples of the walkthroughs against real
// projects and compares what they print with what the docs show
// (fixtures/doctest). commands.md runs in docs/commandsdoc, beside them.
// Slow: every example is an awr process.
func TestDocs(t *testing.T) {
	doctest.Run(t, "quickstart.md", "handoff.md")
}
