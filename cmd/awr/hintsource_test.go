package main

// The hints in the source: every hint awr's production code can give (an
// error's WithHint, a result's Hint field, a function that builds one) is
// found by reading the code, instantiated with sample values for its
// verbs and parsed as the user would paste it. A hint is one awr command
// line (or several joined by " && ") that awr's own parser accepts,
// required flags and all; prose ("retry", "free disk space", "see
// docs/rigs.md") is not a hint. The error catalogue in docs/reliability.md
// lists, for each error code, the hints given with it; the test keeps the
// two in step (-update-catalogue rewrites the catalogue from the code).

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/awr-dev/awr/internal/shellwords"
	"github.com/stretchr/testify/require"
)

var updateCatalogue = flag.Bool("update-catalogue", false, "rewrite the error catalogue of docs/reliability.md from the hints in the code")

// sourceHint is one hint the code can give.
type sourceHint struct {
	err  bool   // given with an error (WithHint), not a result's field
	pos  string // file:line of the site
	code string // the error code it is given with; "" where the site does not say
	tmpl string // the hint as written (Printf verbs kept); "" when unresolved
}

// hintCall is one call expression and the function it is in.
type hintCall struct {
	in *ast.FuncDecl
	at *ast.CallExpr
}

// passThrough are the functions that hand on a hint made elsewhere (the
// fault package itself, the CLI's rendering of an error).
var passThrough = map[string]bool{"WithHint": true, "ObjectOf": true, "report": true}

// handedOn are the sites whose hint is made elsewhere and handed on in a
// variable the scan does not follow, each with where it is made (and
// checked): the key is the function holding the site.
var handedOn = map[string]string{
	"Accept":          "intake: an init preview's accept command (the Accept field, built by the preview)",
	"refuseAmbiguous": "intake: an init preview's accept command (the Accept field, built by the preview)",
	"Interrupted":     "intake: the command that starts an init or import again, given by each caller",
	"StaleManifest":   "intake: the command that previews an init's map change again (PreviewAgain: the preview's accept command, without --accept and --fingerprint)",
	"ReadFile":        "anchor: awr anchor --to FILE, FILE shown only inside the project (pathcheck.Shown)",
	"Failure":         "anchor: awr anchor [--to FILE] for the anchors named (git or a file shown inside the project)",
	"ClientInstall":   "project: the client install preview command (base)",
	"ApplyInstall":    "hosts: the client install preview command (Change.Preview, built by the door's ClientInstall)",
	"checkSeen":       "hosts: the client install or uninstall preview command (Change.Preview)",
	"writeSettings":   "hosts: the client install or uninstall preview command (Change.Preview)",
	"settingsError":   "hosts: the client install or uninstall preview command (Change.Preview)",
	"removeSettings":  "hosts: the client uninstall preview command (Change.Preview)",
	"refused":         "project: each caller's hint, a constant or an outputHint",
	"Incomplete":      "rig: an up's first seat hint, made in rig/plan.go and rig/up.go, or a restore check's first remedy, made in rig (both scanned there), else awr rig ps RIG",
}

// hintScan reads the module's production Go files.
type hintScan struct {
	fset   *token.FileSet
	consts map[string]string // const name (and pkg.Name) -> value
	funcs  map[string][]*ast.FuncDecl
	calls  map[string][]hintCall // calls by the called function's name
	hints  []sourceHint
	// unresolved are the sites whose hint the scan cannot read.
	unresolved []string
}

func scanHints(t *testing.T, root string) *hintScan {
	t.Helper()
	s := &hintScan{fset: token.NewFileSet(), consts: map[string]string{}, funcs: map[string][]*ast.FuncDecl{}, calls: map[string][]hintCall{}}
	var files []*ast.File
	var names []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "fixtures", "docs", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasSuffix(path, "_awrtest.go") {
			return nil
		}
		f, err := parser.ParseFile(s.fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files = append(files, f)
		names = append(names, rel)
		return nil
	})
	require.NoError(t, err)
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				if d.Tok != token.CONST {
					continue
				}
				for _, sp := range d.Specs {
					vs := sp.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
								v, _ := strconv.Unquote(lit.Value)
								s.consts[n.Name] = v
								s.consts[f.Name.Name+"."+n.Name] = v
							}
						}
					}
				}
			case *ast.FuncDecl:
				s.funcs[d.Name.Name] = append(s.funcs[d.Name.Name], d)
			}
		}
	}
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					switch fun := c.Fun.(type) {
					case *ast.Ident:
						s.calls[fun.Name] = append(s.calls[fun.Name], hintCall{fn, c})
					case *ast.SelectorExpr:
						s.calls[fun.Sel.Name] = append(s.calls[fun.Sel.Name], hintCall{fn, c})
					}
				}
				return true
			})
		}
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if n.Body != nil && !passThrough[n.Name.Name] {
					s.inspectFunc(n)
				}
				return false
			}
			return true
		})
	}
	return s
}

// inspectFunc finds the hint sites of one function.
func (s *hintScan) inspectFunc(fn *ast.FuncDecl) {
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "WithHint" && len(n.Args) > 0 {
				s.site(fn, n.Pos(), codeOf(sel.X), s.format(fn, n.Args))
				s.hints = markErr(s.hints, s.fset.Position(n.Pos()))
			}
		case *ast.KeyValueExpr:
			if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Hint" {
				s.site(fn, n.Pos(), "", s.expr(fn, n.Value, 0))
			}
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				if sel, ok := l.(*ast.SelectorExpr); ok && sel.Sel.Name == "Hint" && i < len(n.Rhs) {
					s.site(fn, n.Pos(), "", s.expr(fn, n.Rhs[i], 0))
				}
			}
		}
		return true
	})
}

// site records the hints one site can give; tmpls nil means it could not
// be read.
func (s *hintScan) site(fn *ast.FuncDecl, pos token.Pos, code string, tmpls []string) {
	p := s.fset.Position(pos)
	where := fmt.Sprintf("%s:%d", filepath.ToSlash(p.Filename), p.Line)
	if rel, err := filepath.Rel(testkit.Root(), where); err == nil {
		where = rel
	}
	if tmpls == nil && handedOn[fn.Name.Name] != "" {
		return
	}
	if tmpls == nil {
		s.unresolved = append(s.unresolved, where+" (in "+fn.Name.Name+")")
		return
	}
	for _, t := range tmpls {
		s.hints = append(s.hints, sourceHint{pos: where, code: code, tmpl: t})
	}
}

// markErr marks the hints recorded at pos as an error's.
func markErr(hs []sourceHint, pos token.Position) []sourceHint {
	where := fmt.Sprintf("%s:%d", filepath.ToSlash(pos.Filename), pos.Line)
	if rel, err := filepath.Rel(testkit.Root(), where); err == nil {
		where = rel
	}
	for i := range hs {
		if hs[i].pos == where {
			hs[i].err = true
		}
	}
	return hs
}

// codeOf returns the code of the error a WithHint is called on when the
// call chain says it (fault.New(fault.X, ...).With(...).WithHint(...)).
func codeOf(x ast.Expr) string {
	for {
		call, ok := x.(*ast.CallExpr)
		if !ok {
			return ""
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return ""
		}
		if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "fault" && (sel.Sel.Name == "New" || sel.Sel.Name == "Wrap") && len(call.Args) > 0 {
			if c, ok := call.Args[0].(*ast.SelectorExpr); ok {
				return c.Sel.Name
			}
			return ""
		}
		x = sel.X
	}
}

// format returns the templates of a Printf-style call's arguments.
func (s *hintScan) format(fn *ast.FuncDecl, args []ast.Expr) []string {
	f := s.expr(fn, args[0], 0)
	if f == nil {
		return nil
	}
	var out []string
	for _, t := range f {
		if t == "%s" && len(args) == 2 {
			sub := s.expr(fn, args[1], 0)
			if sub == nil {
				return nil
			}
			out = append(out, sub...)
			continue
		}
		out = append(out, t)
	}
	return out
}

// expr returns the hint templates an expression can evaluate to, or nil
// when the scan cannot tell.
func (s *hintScan) expr(fn *ast.FuncDecl, e ast.Expr, depth int) []string {
	if depth > 6 {
		return nil
	}
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			v, _ := strconv.Unquote(e.Value)
			return []string{v}
		}
	case *ast.ParenExpr:
		return s.expr(fn, e.X, depth+1)
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return nil
		}
		l, r := s.expr(fn, e.X, depth+1), s.expr(fn, e.Y, depth+1)
		// A field joined to a hint (s.SuccessorID, req.Key) is a word.
		if _, field := e.X.(*ast.SelectorExpr); l == nil && field {
			l = []string{"w1"}
		}
		if _, field := e.Y.(*ast.SelectorExpr); r == nil && field {
			r = []string{"w1"}
		}
		if l == nil || r == nil {
			return nil
		}
		var out []string
		for _, a := range l {
			for _, b := range r {
				out = append(out, a+b)
			}
		}
		return out
	case *ast.SelectorExpr:
		if pkg, ok := e.X.(*ast.Ident); ok {
			if v, ok := s.consts[pkg.Name+"."+e.Sel.Name]; ok {
				return []string{v}
			}
		}
		if e.Sel.Name == "Hint" || e.Sel.Name == "Accept" {
			return []string{} // passed on from a hint checked at its own site
		}
	case *ast.Ident:
		if v, ok := s.consts[e.Name]; ok {
			return []string{v}
		}
		return s.local(fn, e.Name, depth)
	case *ast.CallExpr:
		switch fun := e.Fun.(type) {
		case *ast.SelectorExpr:
			if pkg, ok := fun.X.(*ast.Ident); ok && pkg.Name == "fmt" && fun.Sel.Name == "Sprintf" {
				return s.format(fn, e.Args)
			}
			if pkg, ok := fun.X.(*ast.Ident); ok && pkg.Name == "strings" && fun.Sel.Name == "TrimSpace" {
				return s.expr(fn, e.Args[0], depth+1)
			}
			if pkg, ok := fun.X.(*ast.Ident); ok && pkg.Name == "strings" && fun.Sel.Name == "Join" {
				return []string{"w1"} // words the code knows
			}
			if pkg, ok := fun.X.(*ast.Ident); ok && pkg.Name == "shellwords" && fun.Sel.Name == "Quote" {
				return []string{"w1"} // one word, quoted
			}
			return s.returns(fun.Sel.Name, depth)
		case *ast.Ident:
			if fun.Name == "shellWord" || fun.Name == "shellQuote" {
				return []string{"w1"}
			}
			return s.returns(fun.Name, depth)
		}
	}
	return nil
}

// local returns what a local variable of fn holding a hint is assigned.
func (s *hintScan) local(fn *ast.FuncDecl, name string, depth int) []string {
	var out []string
	found, bad := false, false
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				if id, ok := l.(*ast.Ident); ok && id.Name == name && len(n.Rhs) == len(n.Lhs) {
					found = true
					v := s.expr(fn, n.Rhs[i], depth+1)
					if v == nil {
						bad = true
					}
					out = append(out, v...)
				}
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				if id.Name == name && i < len(n.Values) {
					found = true
					v := s.expr(fn, n.Values[i], depth+1)
					if v == nil {
						bad = true
					}
					out = append(out, v...)
				}
			}
		}
		return true
	})
	if !found {
		return s.param(fn, name, depth)
	}
	if bad {
		return nil
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// param returns what the callers of fn pass as its parameter name.
func (s *hintScan) param(fn *ast.FuncDecl, name string, depth int) []string {
	idx, i := -1, 0
	for _, f := range fn.Type.Params.List {
		for _, n := range f.Names {
			if n.Name == name {
				idx = i
			}
			i++
		}
		if len(f.Names) == 0 {
			i++
		}
	}
	if idx < 0 || len(s.calls[fn.Name.Name]) == 0 {
		return nil
	}
	out := []string{}
	for _, c := range s.calls[fn.Name.Name] {
		if idx >= len(c.at.Args) {
			continue
		}
		v := s.expr(c.in, c.at.Args[idx], depth+1)
		if v == nil {
			return nil
		}
		out = append(out, v...)
	}
	return out
}

// returns returns the hints a function named name returns (each of its
// declarations, each return of a string).
func (s *hintScan) returns(name string, depth int) []string {
	fns := s.funcs[name]
	if len(fns) == 0 || !strings.Contains(strings.ToLower(name), "hint") {
		return nil
	}
	var out []string
	bad := false
	for _, fn := range fns {
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if _, ok := n.(*ast.FuncLit); ok {
				return false
			}
			if r, ok := n.(*ast.ReturnStmt); ok && len(r.Results) > 0 {
				v := s.expr(fn, r.Results[0], depth+1)
				if v == nil {
					bad = true
				}
				out = append(out, v...)
			}
			return true
		})
	}
	if bad {
		return nil
	}
	return out
}

// verbContexts are the verbs whose value the flag before them constrains
// (an enum) or that stand for more than one word.
var verbContexts = [][2]string{
	{"--runtime %s", "--runtime generic"},
	{"awr audit %s", "awr audit --work %s"},
}

// verbRE matches a Printf verb.
var verbRE = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z%]`)

// instantiate fills a template's verbs with sample values: a number for
// %d, a word for the others.
func instantiate(tmpl string) string { return fillVerbs(tmpl, "7", "w1", `"w1"`) }

// fillVerbs puts number for each %d of a template, quoted for each %q and
// word for every other verb (%% stays %), after verbContexts.
func fillVerbs(tmpl, number, word, quoted string) string {
	for _, c := range verbContexts {
		tmpl = strings.ReplaceAll(tmpl, c[0], c[1])
	}
	return verbRE.ReplaceAllStringFunc(tmpl, func(v string) string {
		switch v[len(v)-1] {
		case 'd':
			return number
		case '%':
			return "%"
		case 'q':
			return quoted
		}
		return word
	})
}

// hintProblem says why a hint is not a command awr parses, "" when it is.
func hintProblem(hint string) string {
	if hint == "" {
		return ""
	}
	for _, part := range strings.Split(hint, " && ") {
		if !strings.HasPrefix(part, "awr ") {
			return "not an awr command"
		}
		var cli CLI
		p, err := kong.New(&cli, kong.Name("awr"), kong.Exit(func(int) {}), kong.Writers(devNull{}, devNull{}))
		if err != nil {
			return err.Error()
		}
		words := shellwords.Split(strings.TrimPrefix(part, "awr "))
		if slices.Contains(words, "--help") {
			if _, err := p.Parse(slices.DeleteFunc(words, func(w string) bool { return w == "--help" })); err != nil {
				var pe *kong.ParseError
				if e, ok := err.(*kong.ParseError); ok {
					pe = e
				}
				if pe == nil || !strings.Contains(err.Error(), "missing") && !strings.Contains(err.Error(), "expected") {
					return "does not parse: " + err.Error()
				}
			}
			continue
		}
		if _, err := p.Parse(words); err != nil {
			return "does not parse: " + err.Error()
		}
	}
	return ""
}

type devNull struct{}

func (devNull) Write(b []byte) (int, error) { return len(b), nil }

// TestHints_InSourceAreCommands: every hint the code can give parses as
// an awr command line.
func TestHints_InSourceAreCommands(t *testing.T) {
	testkit.PlainOnly(t, "a scan of the source tree")
	t.Parallel()
	s := scanHints(t, testkit.Root())
	require.Greater(t, len(s.hints), 250, "the scan finds the hints")
	var bad []string
	for _, h := range s.hints {
		if p := hintProblem(instantiate(h.tmpl)); p != "" {
			bad = append(bad, fmt.Sprintf("%s: %q: %s", h.pos, h.tmpl, p))
		}
	}
	sort.Strings(bad)
	require.Empty(t, bad, "%d hints are not commands:\n%s", len(bad), strings.Join(bad, "\n"))
	require.Empty(t, strings.Join(s.unresolved, "\n"), "hint sites the scan cannot read (make the hint a constant, a fmt.Sprintf, or a function named *Hint)")
}

// TestHintProblem: the check itself tells a command from prose.
func TestHintProblem(t *testing.T) {
	t.Parallel()
	for h, want := range map[string]bool{
		"":                                     true,
		"awr status":                           true,
		"awr ready --all":                      true,
		"awr session list --active --work W-1": true,
		"awr init --help":                      true,
		"awr import EXPORT.jsonl --project NEW_DIR":                             true,
		"awr bench project DIR --tasks 150 && awr bench generate --project DIR": true,
		"retry":                                false,
		"free disk space, then retry":          false,
		"see docs/rigs.md for the spec format": false,
		"awr frobnicate":                       false,
		"awr status --nope":                    false,
		"awr evidence add --work W-1":          false, // --criterion is required
		"awr session start --work W-1":         false, // --agent is required
		"awr status; rm -rf /":                 false,
	} {
		require.Equal(t, want, hintProblem(h) == "", "%q: %s", h, hintProblem(h))
	}
}

// catalogueDoc is the page that holds the error catalogue, and the
// headings that open and close it.
const (
	catalogueDoc   = "docs/reliability.md"
	catalogueStart = "## Error catalogue"
)

// shown renders a hint template for the catalogue: each verb becomes a
// placeholder (ARG, or N for a number).
func shown(tmpl string) string { return fillVerbs(tmpl, "N", "ARG", "ARG") }

// fromShown is instantiate for a catalogued hint.
func fromShown(h string) string {
	var out []string
	for _, w := range strings.Split(h, " ") {
		switch w {
		case "ARG", "'ARG'":
			w = "w1"
		case "N":
			w = "7"
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// faultCodes returns the codes package fault declares, in order.
func faultCodes(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), testkit.Path("internal", "fault", "fault.go"), nil, 0)
	require.NoError(t, err)
	var codes []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			vs := sp.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "Code" {
				codes = append(codes, vs.Names[0].Name)
			}
		}
	}
	require.NotEmpty(t, codes)
	return codes
}

// catalogue renders the catalogue's table from the code: a row per code,
// its exit status and the hints given with it (those whose site does not
// say its code, an error handed on, are in the last row).
func catalogue(codes []string, hs []sourceHint) string {
	by := map[string]map[string]bool{}
	for _, h := range hs {
		if !h.err {
			continue
		}
		c := h.code
		if !slices.Contains(codes, c) {
			c = ""
		}
		if by[c] == nil {
			by[c] = map[string]bool{}
		}
		by[c][shown(h.tmpl)] = true
	}
	var b strings.Builder
	b.WriteString("| Code | Exit | Hints given with it |\n|---|---|---|\n")
	row := func(name, exit string, set map[string]bool) {
		var list []string
		for h := range set {
			if h != "" {
				list = append(list, "`"+strings.ReplaceAll(h, "|", "\\|")+"`")
			}
		}
		sort.Strings(list)
		if len(list) == 0 {
			list = []string{"none"}
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", name, exit, strings.Join(list, "<br>"))
	}
	for _, c := range codes {
		exit := "1"
		if c == "Usage" {
			exit = "2"
		}
		row("`"+c+"`", exit, by[c])
	}
	row("any (the code is decided where the error is made)", "1 or 2", by[""])
	return b.String()
}

// catalogueSection returns the table of the catalogue in doc and where it
// is.
func catalogueSection(t *testing.T, doc string) (table string, start, end int) {
	t.Helper()
	i := strings.Index(doc, catalogueStart)
	require.GreaterOrEqual(t, i, 0, "%s has no %q section", catalogueDoc, catalogueStart)
	start = i + strings.Index(doc[i:], "\n| Code |") + 1
	require.Greater(t, start, i, "the catalogue's table")
	end = start
	for end < len(doc) && doc[end] == '|' {
		end += strings.Index(doc[end:], "\n") + 1
	}
	return doc[start:end], start, end
}

// TestErrorCatalogue walks the error catalogue of docs/reliability.md:
// every code of package fault has its row, every hint in it is a command
// awr parses, and it lists exactly the hints the code gives with each
// code (-update-catalogue rewrites it from the code).
func TestErrorCatalogue(t *testing.T) {
	testkit.PlainOnly(t, "a scan of the source tree")
	t.Parallel()
	codes := faultCodes(t)
	s := scanHints(t, testkit.Root())
	want := catalogue(codes, s.hints)
	b, err := os.ReadFile(testkit.Path(catalogueDoc))
	require.NoError(t, err)
	doc := string(b)
	got, start, end := catalogueSection(t, doc)
	if *updateCatalogue {
		require.NoError(t, os.WriteFile(testkit.Path(catalogueDoc), []byte(doc[:start]+want+doc[end:]), 0o644))
		got = want
	}
	rows := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(got), "\n")[2:] {
		cells := strings.Split(strings.Trim(l, "|"), " | ")
		require.Len(t, cells, 3, "a row of three cells: %s", l)
		rows[strings.Trim(strings.TrimSpace(cells[0]), "`")] = cells[2]
		for _, h := range strings.Split(strings.TrimSpace(cells[2]), "<br>") {
			if h == "none" {
				continue
			}
			h = strings.ReplaceAll(strings.Trim(h, "`"), "\\|", "|")
			require.Empty(t, hintProblem(fromShown(h)), "%s: the catalogued hint %q", cells[0], h)
		}
	}
	for _, c := range codes {
		require.Contains(t, rows, c, "the catalogue has no row for %s", c)
	}
	require.Equal(t, want, got, "the catalogue differs from the hints in the code: go test ./cmd/awr -run TestErrorCatalogue -update-catalogue")
}
