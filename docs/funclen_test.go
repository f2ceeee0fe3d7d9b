package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awr-dev/awr/fixtures/testkit"
)

// maxFuncLines is the longest production function a reader is asked to
// hold (issue #46 item 5), not counting the lines of its tables.
const maxFuncLines = 100

// tableLines is the size from which a composite literal counts as a
// table: data a reader scans row by row, not logic to hold.
const tableLines = 8

// TestFunctionsAReaderCanHold: no production function (outside tests,
// testdata and the test-only fixtures) is longer than maxFuncLines once
// its tables are left out.
func TestFunctionsAReaderCanHold(t *testing.T) {
	root := testkit.Root()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if name := d.Name(); rel != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || rel == "fixtures") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if n := logicLines(fset, fn); n > maxFuncLines {
				t.Errorf("%s:%d: %s is %d lines without its tables (at most %d): split it into named steps",
					rel, fset.Position(fn.Pos()).Line, fn.Name.Name, n, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// logicLines is fn's length in lines, less the lines of the tables in it
// (outermost composite literals of tableLines lines or more).
func logicLines(fset *token.FileSet, fn *ast.FuncDecl) int {
	line := func(p token.Pos) int { return fset.Position(p).Line }
	n := line(fn.End()) - line(fn.Pos()) + 1
	ast.Inspect(fn.Body, func(node ast.Node) bool {
		lit, ok := node.(*ast.CompositeLit)
		if !ok {
			return true
		}
		if size := line(lit.End()) - line(lit.Pos()) + 1; size >= tableLines {
			n -= size
			return false
		}
		return true
	})
	return n
}
