package hook

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNoProcess keeps hook answering, which acts on a host's word, from
// starting a process itself (mcpserver's TestNoProcessInFrontEnds holds
// the front ends to the same): no file of this package imports os/exec
// or calls os.StartProcess, syscall.Exec, syscall.ForkExec or
// syscall.StartProcess.
func TestNoProcess(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		fset := token.NewFileSet()
		af, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		checked++
		for _, im := range af.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			require.NotEqual(t, "os/exec", path, "%s imports os/exec", f)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok {
					switch x.Name + "." + sel.Sel.Name {
					case "os.StartProcess", "syscall.Exec", "syscall.ForkExec", "syscall.StartProcess":
						t.Errorf("%s calls %s.%s", fset.Position(sel.Pos()), x.Name, sel.Sel.Name)
					}
				}
			}
			return true
		})
	}
	require.GreaterOrEqual(t, checked, 2)
}
