package docs_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awr-dev/awr/fixtures/doctest"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/stretchr/testify/require"
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

// TestLinks checks that every relative link of the docs (docs/*.md and
// the pages under docs/, README.md) names a file that exists and, with a
// #anchor, a heading of that file.
func TestLinks(t *testing.T) {
	t.Parallel()
	var files []string
	err := filepath.WalkDir(testkit.Path("docs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(testkit.Root(), p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	require.NoError(t, err)
	require.Contains(t, files, "docs/commands.md")
	doctest.CheckLinks(t, append(files, "README.md")...)
}
