package lazyre

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/awr-dev/awr/fixtures/testkit"

	"github.com/stretchr/testify/require"
)

func TestRegexp_CompiledOnFirstUse(t *testing.T) {
	re := New(`^(?P<key>[A-Z]+)-(\d+)$`)
	require.True(t, re.MatchString("CART-12"))
	require.Equal(t, []string{"CART-12", "CART", "12"}, re.FindStringSubmatch("CART-12"))
	require.Equal(t, 1, re.SubexpIndex("key"))
	require.Equal(t, "X", re.ReplaceAllString("CART-12", "X"))
	require.Same(t, re.Regexp(), re.Regexp(), "compiled once")

	bad := New(`(`)
	require.Panics(t, func() { bad.MatchString("x") }, "an invalid expression panics on first use")
}

// TestPatterns_Compile: every expression the module declares with New and
// a string literal compiles, so none waits for its first use to panic.
func TestPatterns_Compile(t *testing.T) {
	root := testkit.Root()
	fset := token.NewFileSet()
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != root) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(node ast.Node) bool {
			c, ok := node.(*ast.CallExpr)
			if !ok || len(c.Args) != 1 {
				return true
			}
			s, ok := c.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := s.X.(*ast.Ident); !ok || x.Name != "lazyre" || s.Sel.Name != "New" {
				return true
			}
			lit, ok := c.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			src, err := strconv.Unquote(lit.Value)
			require.NoError(t, err)
			_, err = regexp.Compile(src)
			require.NoError(t, err, "%s", fset.Position(lit.Pos()))
			n++
			return true
		})
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, n, 20, "the module's expressions were found (secret declares its detectors through a function, compiled by its own tests)")
}

var sink *Regexp

// TestNew_DoesNoWork: declaring an expression allocates only the Regexp
// itself (a package-level one costs start-up nothing more), and a use
// after the first allocates nothing for the laziness.
func TestNew_DoesNoWork(t *testing.T) {
	require.Equal(t, 1.0, testing.AllocsPerRun(100, func() { sink = New(`\d+`) }))
	re := New(`\d+`)
	require.True(t, re.MatchString("12"))
	if testkit.Race {
		// Under -race, sync.Pool drops a quarter of what is put back on
		// purpose, so the regexp package's own matcher pool allocates;
		// the laziness is measured in the plain run.
		t.Log("allocations after the first use are counted only without -race (sync.Pool drops items under it)")
		return
	}
	require.Equal(t, 0.0, testing.AllocsPerRun(100, func() { re.MatchString("12") }))
}
