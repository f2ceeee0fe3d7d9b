package main

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/awr-dev/awr/fixtures/testkit"

	"github.com/alecthomas/kong"
	"github.com/awr-dev/awr/internal/serve/mcpserver"
	"github.com/stretchr/testify/require"
)

// cliOnly lists the operations the CLI has and the MCP server does not,
// each with the reason. Every other CLI operation must be an MCP tool.
var cliOnly = map[string]string{
	"version":          "the MCP handshake already reports the server's version",
	"init":             "writes the team's manifest and .gitignore after a person reviewed the preview",
	"mcp":              "serves the MCP tools itself",
	"replay":           "an operator's repair that rebuilds every projection; not an agent's step",
	"export":           "streams the whole log to a file or stdout, which a tool result cannot carry",
	"import":           "creates a project from a file; an operator's step",
	"migrate":          "moves the project's log between stores and rewrites the team's manifest; an operator's step",
	"demo":             "a scripted walkthrough on a temporary project",
	"bench project":    "writes a synthetic project for measurement",
	"bench generate":   "appends a synthetic history for measurement",
	"bench run":        "measures awr by running its binary",
	"bench context":    "measures the packets on a project of its own, for a person",
	"bench compare":    "measures awr beside another tool's binary, for a person",
	"rig apply":        "reads a YAML spec from the supervisor's file system",
	"client install":   "writes the host's settings on this machine, not the project's log",
	"client uninstall": "writes the host's settings on this machine, not the project's log",
	"client hook":      "the host runs it with the event on stdin and reads its answer on stdout",
	"completion":       "prints a script for the user's shell",
	"__complete":       "the shell's completion script calls it for each word",
	"__hold-store":     "awr starts it in the background for a shared store's connections (internal/storehold)",
	"exec run":         "runs an arbitrary command on the machine that serves the tools; agents run side effects through the CLI",
	"ui":               "serves a web page until interrupted; an agent reads the same state through awr_log, awr_status and awr_verify",
}

// leaves returns each leaf command of the CLI with the struct kong fills.
func leaves(t *testing.T) map[string]reflect.Value {
	t.Helper()
	var cli CLI
	parser, err := kong.New(&cli, kong.Name("awr"), kong.Exit(func(int) {}))
	require.NoError(t, err)
	out := map[string]reflect.Value{}
	var walk func(n *kong.Node, path []string)
	walk = func(n *kong.Node, path []string) {
		sub := 0
		for _, c := range n.Children {
			if c.Type == kong.CommandNode {
				sub++
				walk(c, append(append([]string{}, path...), c.Name))
			}
		}
		if sub == 0 && len(path) > 0 {
			out[strings.Join(path, " ")] = n.Target
		}
	}
	walk(parser.Model.Node, nil)
	return out
}

// toolName is the MCP tool of a CLI path: awr_ plus its words (and the
// words of a hyphenated command) joined by _.
func toolName(path string) string {
	return "awr_" + strings.NewReplacer(" ", "_", "-", "_").Replace(path)
}

// request returns the door request type a command struct embeds, or nil.
func request(v reflect.Value) reflect.Type {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && strings.HasSuffix(f.Type.Name(), "Request") {
			return f.Type
		}
	}
	return nil
}

// TestSurfaces_OneDeclarationPerOperation walks the CLI's command tree and
// the MCP tool list: every CLI operation is an MCP tool (awr_ plus its
// path joined by _) unless cliOnly says why not, every tool is a CLI
// operation, and the two sides of one operation decode into the very same
// request type, so their fields cannot drift.
func TestSurfaces_OneDeclarationPerOperation(t *testing.T) {
	t.Parallel()
	srv, err := mcpserver.New(mcpserver.Options{Project: t.TempDir()})
	require.NoError(t, err)
	defer srv.Close()
	tools := map[string]reflect.Type{}
	for _, tl := range srv.Tools() {
		tools[tl.Name] = tl.Input
	}
	cmds := leaves(t)
	var missing, extra, stale []string
	for path, target := range cmds {
		name := toolName(path)
		in, onMCP := tools[name]
		_, exempt := cliOnly[path]
		switch {
		case onMCP && exempt:
			stale = append(stale, path)
		case !onMCP && !exempt:
			missing = append(missing, path)
		case onMCP:
			req := request(target)
			require.NotNil(t, req, "awr %s embeds no request type of the door", path)
			require.Equal(t, in, req, "awr %s and %s decode into different request types", path, name)
		}
		if req := request(target); req != nil {
			require.Contains(t, []string{"github.com/awr-dev/awr/internal/project", "github.com/awr-dev/awr/commands"}, req.PkgPath(),
				"awr %s: its request %v is declared outside the door and commands", path, req)
		}
	}
	names := map[string]bool{}
	for path := range cmds {
		names[toolName(path)] = true
	}
	for name := range tools {
		if !names[name] {
			extra = append(extra, name)
		}
	}
	for path := range cliOnly {
		if _, ok := cmds[path]; !ok {
			stale = append(stale, path)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	sort.Strings(stale)
	require.Empty(t, missing, "CLI operations without an MCP tool (add the tool, or say why in cliOnly)")
	require.Empty(t, extra, "MCP tools without a CLI operation")
	require.Empty(t, stale, "cliOnly entries that are on MCP or no longer exist")
}

// TestSurfaces_SchemaFromFlags: each MCP tool's input schema describes
// every property with the help the CLI shows and requires exactly what the
// CLI requires.
func TestSurfaces_SchemaFromFlags(t *testing.T) {
	t.Parallel()
	srv, err := mcpserver.New(mcpserver.Options{Project: t.TempDir()})
	require.NoError(t, err)
	defer srv.Close()
	for _, tl := range srv.Tools() {
		var walk func(rt reflect.Type)
		walk = func(rt reflect.Type) {
			for i := 0; i < rt.NumField(); i++ {
				f := rt.Field(i)
				if f.Anonymous {
					walk(f.Type)
					continue
				}
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if name == "-" {
					continue
				}
				require.NotEmpty(t, name, "%s.%s has no JSON name", tl.Name, f.Name)
				require.NotEmpty(t, f.Tag.Get("help"), "%s.%s has no help", tl.Name, f.Name)
				_, req := f.Tag.Lookup("required")
				_, arg := f.Tag.Lookup("arg")
				_, optional := f.Tag.Lookup("optional") // an optional positional (verify --anchors [FILE])
				require.Equal(t, req || (arg && !optional), !strings.Contains(f.Tag.Get("json"), "omitempty"),
					"%s.%s: required on the CLI must match a JSON field without omitempty", tl.Name, f.Name)
			}
		}
		walk(tl.Input)
	}
}

// TestSingleDoor: the front ends (the CLI, awr-mcp, the MCP server, the
// web page) reach the core only through package project, over the whole
// import graph (go list -deps): from a front end, every path to a package
// of awr's passes through the door, or through the lab's door
// (internal/lab, which only cmd/awr imports, for awr bench and awr demo;
// bench and demo are imported by nothing else), unless the package is
// another front end, one only the front ends share (frontShared), or the
// ground every floor stands on (ground: typed errors, secret detection,
// lazy regexps, the build's version). What is
// behind the door is not a list kept by hand: a new package is behind it
// from its first line. Nor does a path reach the database drivers
// (SQLite, PostgreSQL) around the door. And no front end gets at the
// event store or the command environment (what the door's EventLog and
// Env return): TestFrontEndTypes.
func TestSingleDoor(t *testing.T) {
	testkit.PlainOnly(t, "a scan of the packages' imports (go list)")
	in := func(p string) string { return testkit.Module + "/" + p }
	args := []string{"list", "-deps", "-f", `{{.ImportPath}}: {{join .Imports " "}}`, testkit.Module + "/..."}
	out, err := exec.Command("go", args...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		imports[strings.TrimSuffix(f[0], ":")] = f[1:]
	}
	doors := map[string]bool{in("internal/project"): true, in("internal/lab"): true}
	around := map[string]bool{} // what a front end may reach without a door
	for _, p := range append(append([]string{"internal/fault", "internal/secret", "internal/lazyre", "internal/buildinfo"}, frontEnds...), frontShared...) {
		require.Contains(t, imports, in(p), "no package %s: update the ground or the front ends", p)
		around[in(p)] = true
	}
	for _, p := range []string{"events", "projections", "commands", "replay", "internal/lab/bench", "internal/lab/demo"} {
		require.Contains(t, imports, in(p), "no package %s", p)
	}
	drivers := []string{"zombiezen.com/go/sqlite", "modernc.org/sqlite", "github.com/jackc/pgx/v5"}
	behind := func(p string) bool {
		if strings.HasPrefix(p, testkit.Module+"/") {
			return !around[p]
		}
		for _, d := range drivers {
			if p == d || strings.HasPrefix(p, d+"/") {
				return true
			}
		}
		return false
	}
	// Who may open the lab's door, and who may reach the lab behind it;
	// what the front ends share is theirs alone.
	front := map[string]bool{}
	for _, f := range frontEnds {
		front[in(f)] = true
	}
	for p, imps := range imports {
		for _, imp := range imps {
			switch {
			case slices.Contains(frontShared, strings.TrimPrefix(imp, testkit.Module+"/")) && !front[p] && !strings.HasPrefix(p, imp+"/"):
				t.Errorf("%s imports %s, which only the front ends share", p, imp)
			case imp == in("internal/lab") && p != in("cmd/awr"):
				t.Errorf("%s imports the lab's door (internal/lab): only cmd/awr may", p)
			case (imp == in("internal/lab/bench") || imp == in("internal/lab/demo")) && p != in("internal/lab") && !strings.HasPrefix(p, imp+"/"):
				t.Errorf("%s imports %s: only the lab's door (internal/lab) may", p, imp)
			}
		}
	}
	for _, front := range frontEnds {
		seen := map[string]bool{}
		var walk func(p string, path []string)
		walk = func(p string, path []string) {
			if seen[p] || doors[p] {
				return
			}
			seen[p] = true
			path = append(path, strings.TrimPrefix(p, testkit.Module+"/"))
			if behind(p) {
				t.Errorf("%s reaches %s around the door: %s", front, path[len(path)-1], strings.Join(path, " → "))
				return
			}
			for _, imp := range imports[p] {
				walk(imp, path)
			}
		}
		walk(in(front), nil)
	}
}

// frontShared are packages the front ends share and nothing else imports
// (the HTTP services' Host check); TestSingleDoor walks through them, so
// they reach nothing behind the door either.
var frontShared = []string{"internal/serve/hostcheck"}

// frontEnds are the packages a person or an agent talks to.
var frontEnds = []string{"cmd/awr", "cmd/awr-mcp", "internal/serve/mcpserver", "internal/serve/ui"}

// TestFrontEndTypes type-checks every front end (its non-test files,
// against the compiled export data of what it imports) and fails on any
// expression, declaration or conversion whose type is or carries (as a
// pointer, a result, a parameter, an element) the event store
// (events.Store) or the command environment (commands.Env): a front end
// that called the door's EventLog or Env, or got either from anywhere
// else, could write around the door.
func TestFrontEndTypes(t *testing.T) {
	testkit.PlainOnly(t, "a scan of the front ends' types (go list)")
	forbidden := map[string]bool{testkit.Module + "/events.Store": true, testkit.Module + "/commands.Env": true}
	args := []string{"list", "-export", "-deps", "-f", `{{.ImportPath}}|{{.Export}}|{{.Dir}}|{{join .GoFiles " "}}`}
	for _, f := range frontEnds {
		args = append(args, testkit.Module+"/"+f)
	}
	out, err := exec.Command("go", args...).Output()
	require.NoError(t, err)
	export, dirs, files := map[string]string{}, map[string]string{}, map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		require.Len(t, f, 4, line)
		export[f[0]], dirs[f[0]], files[f[0]] = f[1], f[2], strings.Fields(f[3])
	}
	for _, front := range frontEnds {
		path := testkit.Module + "/" + front
		fset := token.NewFileSet()
		imp := importer.ForCompiler(fset, "gc", func(p string) (io.ReadCloser, error) {
			if export[p] == "" {
				return nil, fmt.Errorf("no export data for %s", p)
			}
			return os.Open(export[p])
		})
		var parsed []*ast.File
		for _, name := range files[path] {
			f, err := parser.ParseFile(fset, filepath.Join(dirs[path], name), nil, parser.SkipObjectResolution)
			require.NoError(t, err)
			parsed = append(parsed, f)
		}
		info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
		_, err := (&types.Config{Importer: imp}).Check(path, fset, parsed, info)
		require.NoError(t, err, front)
		report := func(pos token.Pos, ty types.Type) {
			if name := carries(ty, forbidden, map[types.Type]bool{}); name != "" {
				t.Errorf("%s: %s gets at %s (through %s): front ends go through the door's operations", front, fset.Position(pos), name, ty)
			}
		}
		for e, tv := range info.Types {
			report(e.Pos(), tv.Type)
		}
		for id, obj := range info.Defs {
			if obj != nil {
				report(id.Pos(), obj.Type())
			}
		}
		for id, obj := range info.Uses {
			report(id.Pos(), obj.Type())
		}
	}
}

// carries returns the forbidden named type ty is or carries, "" for
// none. A named type's own fields are not looked into (the door's Project
// holds a store; a front end may hold a Project), only what it is built
// from as a pointer, a slice, a map, a channel or a function.
func carries(ty types.Type, forbidden map[string]bool, seen map[types.Type]bool) string {
	if ty == nil || seen[ty] {
		return ""
	}
	seen[ty] = true
	switch u := ty.(type) {
	case *types.Named:
		if o := u.Obj(); o.Pkg() != nil && forbidden[o.Pkg().Path()+"."+o.Name()] {
			return o.Pkg().Path() + "." + o.Name()
		}
		for i := range u.TypeArgs().Len() {
			if n := carries(u.TypeArgs().At(i), forbidden, seen); n != "" {
				return n
			}
		}
	case *types.Alias:
		return carries(types.Unalias(u), forbidden, seen)
	case *types.Pointer:
		return carries(u.Elem(), forbidden, seen)
	case *types.Slice:
		return carries(u.Elem(), forbidden, seen)
	case *types.Array:
		return carries(u.Elem(), forbidden, seen)
	case *types.Map:
		if n := carries(u.Key(), forbidden, seen); n != "" {
			return n
		}
		return carries(u.Elem(), forbidden, seen)
	case *types.Chan:
		return carries(u.Elem(), forbidden, seen)
	case *types.Tuple:
		for i := range u.Len() {
			if n := carries(u.At(i).Type(), forbidden, seen); n != "" {
				return n
			}
		}
	case *types.Signature:
		if n := carries(u.Params(), forbidden, seen); n != "" {
			return n
		}
		return carries(u.Results(), forbidden, seen)
	case *types.Struct:
		for i := range u.NumFields() {
			if n := carries(u.Field(i).Type(), forbidden, seen); n != "" {
				return n
			}
		}
	}
	return ""
}
