package main

import (
	"os/exec"
	"reflect"
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
	"rig apply":        "reads a YAML spec from the supervisor's file system",
	"client install":   "writes the host's settings on this machine, not the project's log",
	"client uninstall": "writes the host's settings on this machine, not the project's log",
	"client hook":      "the host runs it with the event on stdin and reads its answer on stdout",
	"completion":       "prints a script for the user's shell",
	"__complete":       "the shell's completion script calls it for each word",
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
// web page) reach the core only through package project, directly or
// through anything they import: every path in the import graph from a
// front end to a package behind the door passes through the door.
// sideDoors are the packages still allowed a way around it, each named
// with why.
func TestSingleDoor(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}: {{join .Imports " "}}`, testkit.Module+"/...").CombinedOutput()
	require.NoError(t, err, "%s", out)
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		imports[strings.TrimSuffix(f[0], ":")] = f[1:]
	}
	in := func(p string) string { return testkit.Module + "/" + p }
	door := in("internal/project")
	behind := map[string]bool{}
	for _, p := range []string{"events", "events/pgstore", "projections", "commands", "replay", "internal/intake", "internal/intake/source",
		"internal/workcontext", "internal/rig", "internal/hosts", "internal/audit", "internal/repo", "internal/process"} {
		require.Contains(t, imports, in(p), "no package %s: update the list behind the door", p)
		behind[in(p)] = true
	}
	sideDoors := map[string]string{
		// Issue #46: bench writes its synthetic histories through the
		// command code and demo resumes without a context record; both
		// are to go through the door or a named lab door.
		in("internal/lab/bench"): "writes synthetic histories through commands",
		in("internal/lab/demo"):  "resumes through commands.ResumeSession",
	}
	for _, front := range []string{"cmd/awr", "cmd/awr-mcp", "internal/serve/mcpserver", "internal/serve/ui"} {
		seen := map[string]bool{}
		var walk func(p string, path []string)
		walk = func(p string, path []string) {
			if seen[p] || p == door || sideDoors[p] != "" {
				return
			}
			seen[p] = true
			path = append(path, strings.TrimPrefix(p, testkit.Module+"/"))
			if behind[p] {
				t.Errorf("%s reaches %s around the door: %s", front, path[len(path)-1], strings.Join(path, " → "))
				return
			}
			for _, imp := range imports[p] {
				if strings.HasPrefix(imp, testkit.Module+"/") {
					walk(imp, path)
				}
			}
		}
		walk(in(front), nil)
	}
}
