package docs_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/awr-dev/awr/fixtures/doctest"
	"github.com/awr-dev/awr/fixtures/testkit"
)

// goPackage is what `go list -json` says of one package of the module.
type goPackage struct {
	ImportPath, Dir, Doc      string
	Imports                   []string
	TestGoFiles, XTestGoFiles []string
}

// testDoc is the package comment of a package made only of tests (a
// suite such as fixtures/badinput), read from its test files.
func testDoc(p goPackage) string {
	for _, f := range append(p.TestGoFiles, p.XTestGoFiles...) {
		file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(p.Dir, f), nil, parser.PackageClauseOnly|parser.ParseComments)
		if err == nil && file.Doc != nil {
			return file.Doc.Text()
		}
	}
	return ""
}

// modulePackages lists the module's packages with their imports inside
// the module (test files' imports left out), by path relative to the root.
func modulePackages(t *testing.T) map[string]goPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Dir,Doc,Imports,TestGoFiles,XTestGoFiles", "./...")
	cmd.Dir = testkit.Root()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]goPackage{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p goPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(p.ImportPath, testkit.Module+"/")
		if rel == "docs" {
			continue // the docs' own tests
		}
		var in []string
		for _, imp := range p.Imports {
			if r, ok := strings.CutPrefix(imp, testkit.Module+"/"); ok {
				in = append(in, r)
			}
		}
		p.ImportPath, p.Imports = rel, in
		if p.Doc == "" {
			p.Doc = testDoc(p)
		}
		pkgs[rel] = p
	}
	return pkgs
}

// floors numbers each package by the longest chain of imports below it:
// floor 0 imports nothing of awr's, and every import points to a lower floor.
func floors(pkgs map[string]goPackage) map[string]int {
	floor := map[string]int{}
	var of func(string) int
	of = func(p string) int {
		if f, ok := floor[p]; ok {
			return f
		}
		f := 0
		for _, imp := range pkgs[p].Imports {
			f = max(f, of(imp)+1)
		}
		floor[p] = f
		return f
	}
	for p := range pkgs {
		of(p)
	}
	return floor
}

// firstSentence is a package comment's first sentence as written.
func firstSentence(doc string) string {
	doc = strings.Join(strings.Fields(doc), " ")
	if i := regexp.MustCompile(`\.(\s|$)`).FindStringIndex(doc); i != nil {
		doc = doc[:i[0]+1]
	}
	return strings.ReplaceAll(doc, "|", `\|`)
}

// architectureMap renders the map docs/architecture.md opens with: the
// floors, then one row per package.
func architectureMap(pkgs map[string]goPackage) string {
	floor := floors(pkgs)
	top := 0
	byFloor := map[int][]string{}
	var names []string
	for p, f := range floor {
		byFloor[f] = append(byFloor[f], p)
		top = max(top, f)
		names = append(names, p)
	}
	var b strings.Builder
	b.WriteString("```\n")
	for f := top; f >= 0; f-- {
		sort.Strings(byFloor[f])
		fmt.Fprintf(&b, "floor %d  %s\n", f, strings.Join(byFloor[f], "  "))
	}
	b.WriteString("```\n\n")
	sort.Slice(names, func(i, j int) bool {
		if floor[names[i]] != floor[names[j]] {
			return floor[names[i]] > floor[names[j]]
		}
		return names[i] < names[j]
	})
	b.WriteString("| package | floor | what it is (its package comment) | imports within awr |\n|---|---|---|---|\n")
	for _, p := range names {
		imps := pkgs[p].Imports
		sort.Strings(imps)
		shown := make([]string, len(imps))
		for i, imp := range imps {
			shown[i] = "`" + imp + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %d | %s | %s |\n", p, floor[p], firstSentence(pkgs[p].Doc), strings.Join(shown, ", "))
	}
	return b.String()
}

const (
	mapBegin = "<!-- map: generated from `go list` by docs/architecture_test.go; go test ./docs -run TestArchitectureMap -update-docs -->\n"
	mapEnd   = "<!-- end of map -->\n"
)

// TestArchitectureMap: the floors and the package table of
// docs/architecture.md are what `go list` says of the module today (every
// package, its floor, its package comment's first sentence and its
// imports), so the map cannot drift from the code; -update-docs rewrites
// them. Every package has a package comment, and no import points to a
// floor at or above its own (go would refuse a cycle; the floors make the
// direction visible).
func TestArchitectureMap(t *testing.T) {
	t.Parallel()
	pkgs := modulePackages(t)
	for p, pkg := range pkgs {
		if strings.TrimSpace(pkg.Doc) == "" {
			t.Errorf("package %s has no package comment: the map shows each package's first sentence", p)
		}
	}
	want := architectureMap(pkgs)
	path := testkit.Path("docs", "architecture.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(doc, []byte(mapBegin))
	j := bytes.Index(doc, []byte(mapEnd))
	if i < 0 || j < i {
		t.Fatalf("docs/architecture.md has no generated map (the lines %q and %q)", mapBegin, mapEnd)
	}
	got := string(doc[i+len(mapBegin) : j])
	if got == want {
		return
	}
	if doctest.Updating() {
		var b bytes.Buffer
		b.Write(doc[:i+len(mapBegin)])
		b.WriteString(want)
		b.Write(doc[j:])
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/architecture.md's map differs from `go list` (go test ./docs -run TestArchitectureMap -update-docs rewrites it):\n--- the doc\n%s\n--- go list\n%s", got, want)
}
