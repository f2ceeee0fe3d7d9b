package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"
	"github.com/awr-dev/awr/fixtures/doctest"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/awr-dev/awr/internal/lab"
	"github.com/awr-dev/awr/internal/project"
	"github.com/awr-dev/awr/internal/serve/mcpserver"
	"github.com/stretchr/testify/require"
)

// The command reference (docs/commands.md, the index, and a page per noun
// under docs/commands/) holds, for every command of the CLI's tree, a
// region generated from the tree: its usage line, its help, every
// visible flag and argument with its type, default and help, its exit
// statuses and, when its result type is known (the MCP tool of the same
// operation returns it), the fields of its --json answer. Prose and the
// executed examples around the regions are written by hand
// (docs/commandsdoc runs them).

const refCmd = "go test ./cmd/awr -run TestCommandReference -update-docs"

var (
	refStart = regexp.MustCompile(`^<!-- reference (.+?): generated from the command tree`)
	refEnd   = "<!-- end reference -->"
)

// refDocs are the pages of the reference, paths of the repository.
func refDocs(t *testing.T) []string {
	pages, err := filepath.Glob(testkit.Path("docs", "commands", "*.md"))
	require.NoError(t, err)
	out := []string{"docs/commands.md"}
	for _, p := range pages {
		out = append(out, "docs/commands/"+filepath.Base(p))
	}
	return out
}

// refRegion is one generated region of a page: the lines [from, to) between
// its markers, and the heading it stands under.
type refRegion struct {
	path     string
	from, to int
	anchor   string
}

// TestCommandReference fails when a generated region of the reference
// differs from what the command tree gives (-update-docs rewrites them),
// when a command has no region, or when a region names no command.
func TestCommandReference(t *testing.T) {
	t.Parallel()
	var cli CLI
	parser, err := newParser(&cli, io.Discard, io.Discard)
	require.NoError(t, err)
	cmds := map[string]*kong.Node{}
	var order []string
	for _, n := range parser.Model.Leaves(true) {
		path := cmdPath(n)
		cmds[path] = n
		order = append(order, path)
	}
	srv, err := mcpserver.New(mcpserver.Options{Project: t.TempDir()})
	require.NoError(t, err)
	defer srv.Close()
	results := map[string]reflect.Type{}
	for path, f := range cliResults {
		results[toolName(path)] = reflect.TypeOf(f).Out(0)
	}
	for _, tl := range srv.Tools() {
		results[tl.Name] = tl.Output
	}

	where := map[string]refRegion{}
	lines := map[string][]string{}
	regions := map[string][]refRegion{}
	for _, doc := range refDocs(t) {
		b, err := os.ReadFile(testkit.Path(doc))
		require.NoError(t, err)
		ls := strings.Split(string(b), "\n")
		lines[doc] = ls
		heads := doctest.Headings(ls)
		for i := 0; i < len(ls); i++ {
			m := refStart.FindStringSubmatch(ls[i])
			if m == nil {
				continue
			}
			end := slices.Index(ls[i:], refEnd)
			if end < 0 {
				t.Fatalf("%s:%d: a reference region without its end marker %s", doc, i+1, refEnd)
			}
			r := refRegion{path: doc, from: i + 1, to: i + end}
			for _, h := range heads {
				if h.Line < i {
					r.anchor = h.Anchor
				}
			}
			name := m[1]
			if _, ok := where[name]; ok {
				t.Errorf("%s:%d: a second reference region for %q", doc, i+1, name)
			}
			where[name] = r
			regions[doc] = append(regions[doc], r)
			i += end
		}
	}

	want := map[string]string{} // region name -> its content
	for _, path := range order {
		r, ok := where["awr "+path]
		if !ok {
			t.Errorf("awr %s has no section in the command reference: add a section with the marker\n<!-- reference awr %s: generated from the command tree (%s) -->\n%s\nto the page of its noun under docs/commands/, then run %s", path, path, refCmd, refEnd, refCmd)
			continue
		}
		want["awr "+path] = reference(cmds[path], results[toolName(path)], r.path)
	}
	for name, r := range where {
		if _, ok := want[name]; !ok && name != "index" {
			t.Errorf("%s:%d: a reference region for %q, which is no command of the tree (hidden or gone?)", r.path, r.from, name)
		}
	}
	if r, ok := where["index"]; ok {
		want["index"] = refIndex(parser.Model.Node, where, r.path)
	} else {
		t.Errorf("docs/commands.md has no index region: <!-- reference index: generated from the command tree (%s) -->", refCmd)
	}

	for doc, rs := range regions {
		ls := lines[doc]
		var out []string
		pos := 0
		changed := false
		for _, r := range rs {
			name := refStart.FindStringSubmatch(ls[r.from-1])[1]
			got := strings.Join(ls[r.from:r.to], "\n")
			w, ok := want[name]
			if !ok {
				continue
			}
			if got != w {
				changed = true
				if !doctest.Updating() {
					t.Errorf("%s:%d: the reference of %s differs from the command tree (run %s):\n--- the page\n%s\n--- the tree\n%s", doc, r.from, name, refCmd, got, w)
				}
			}
			out = append(out, ls[pos:r.from]...)
			out = append(out, strings.Split(w, "\n")...)
			pos = r.to
		}
		out = append(out, ls[pos:]...)
		if changed && doctest.Updating() {
			require.NoError(t, os.WriteFile(testkit.Path(doc), []byte(strings.Join(out, "\n")), 0o644))
			t.Logf("rewrote the reference regions of %s", doc)
		}
	}
}

// reference renders the region of one command for the page at doc.
func reference(n *kong.Node, result reflect.Type, doc string) string {
	index := "../commands.md"
	if doc == "docs/commands.md" {
		index = ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "```\nawr %s\n```\n\n", n.Summary())
	help := n.Help
	if n.Detail != "" {
		help += "\n\n" + n.Detail
	}
	fmt.Fprintf(&b, "%s\n", help)
	var rows []string
	for _, a := range n.Positional {
		req := "optional"
		if a.Required {
			req = "required"
		}
		rows = append(rows, fmt.Sprintf("| `%s` | %s, argument | %s | %s |", cell(a.Summary()), valueType(a), req, cell(a.Help)))
	}
	var flags []*kong.Flag
	for p := n; p != nil && p.Parent != nil; p = p.Parent {
		flags = append(slices.Clone(p.Flags), flags...)
	}
	for _, f := range flags {
		if f.Hidden {
			continue
		}
		name := "--" + f.Name
		if f.Short != 0 {
			name = fmt.Sprintf("-%c, %s", f.Short, name)
		}
		if !f.IsBool() && !f.IsCounter() {
			name += "=" + f.FormatPlaceHolder()
		}
		def := "—"
		switch {
		case f.IsBool() && !f.HasDefault:
			def = "off"
		case f.Required:
			def = "required"
		case f.HasDefault && f.Default != "":
			def = "`" + f.Default + "`"
		}
		help := f.Help
		for _, a := range f.Aliases {
			help += fmt.Sprintf(" Alias `--%s`.", a)
		}
		for _, e := range f.Envs {
			help += fmt.Sprintf(" Env `%s`.", e)
		}
		rows = append(rows, fmt.Sprintf("| `%s` | %s | %s | %s |", cell(name), valueType(f.Value), cell(def), cell(help)))
	}
	if len(rows) > 0 {
		b.WriteString("\n| flag or argument | type | default | meaning |\n|---|---|---|---|\n")
		b.WriteString(strings.Join(rows, "\n") + "\n")
	}
	exit := fmt.Sprintf("Exit status: 0 on success, 1 on a domain error, 2 on a usage error ([exit codes](%s#exit-codes))", index)
	if note, ok := exitNotes[cmdPath(n)]; ok {
		if strings.HasPrefix(note, "Exit status:") {
			exit = note
		} else {
			exit += "; " + note
		}
	}
	fmt.Fprintf(&b, "\n%s. The [global flags](%s#global-flags) apply.\n", exit, index)
	for result != nil && result.Kind() == reflect.Pointer {
		result = result.Elem()
	}
	if result != nil {
		fmt.Fprintf(&b, "\n`--json` prints one object (`%s`): %s.\n", result, strings.Join(jsonFields(result), ", "))
	}
	return strings.TrimRight(b.String(), "\n")
}

// cliResults are the door's (or the lab's) calls whose result the
// commands the MCP server does not offer print with --json.
var cliResults = map[string]any{
	"init":             (*project.Project).Init,
	"replay":           (*project.Project).Replay,
	"migrate":          (*project.Project).Migrate,
	"export":           (*project.Project).Export,
	"import":           (*project.Project).Import,
	"exec run":         (*project.Project).ExecRun,
	"client install":   (*project.Project).ClientInstall,
	"client uninstall": (*project.Project).ClientUninstall,
	"rig apply":        (*project.Project).RigApply,
	"demo":             lab.Demo,
	"bench run":        lab.Run,
	"bench context":    lab.Context,
	"bench compare":    lab.ComparePeer,
}

// exitNotes are the exit statuses of a command besides 0, 1 and 2 (or,
// starting "Exit status:", instead of them).
var exitNotes = map[string]string{
	"exec run":    "a command that exited with another status makes awr exit with that status, as a wrapper does",
	"client hook": "Exit status: 0 whatever the event holds (a problem goes to `.awr/hooks.log`, never to the host), 2 on a usage error",
	"mcp":         "once awr-mcp runs (awr becomes it), the status is the server's",
}

// cell is a help text fit for a table cell.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// valueType names the type of a flag's or argument's value.
func valueType(v *kong.Value) string {
	switch {
	case v.IsCounter():
		return "counter"
	case v.IsBool():
		return "bool"
	case v.Enum != "":
		return "enum"
	}
	t := v.Target.Type()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	elem := ""
	if v.IsSlice() {
		t, elem = t.Elem(), ", repeatable"
	}
	if v.IsMap() {
		return "KEY=VALUE, repeatable"
	}
	switch {
	case t == reflect.TypeFor[time.Duration]():
		return "duration" + elem
	case t.Kind() == reflect.String:
		return "string" + elem
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "integer" + elem
	case t.Kind() == reflect.Float64 || t.Kind() == reflect.Float32:
		return "number" + elem
	}
	return t.String() + elem
}

// jsonFields lists the top-level fields of a result type as JSON shows
// them: `name` (type), marked optional when omitempty leaves them out.
func jsonFields(t reflect.Type) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, jsonFields(ft)...)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		desc := jsonType(f.Type)
		if strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero") {
			desc += ", optional"
		}
		out = append(out, fmt.Sprintf("`%s` (%s)", name, desc))
	}
	return out
}

// jsonType names the JSON type of a Go type.
func jsonType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeFor[time.Time]():
		return "string"
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		return "string"
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		return "array of " + jsonType(t.Elem())
	case t.Kind() == reflect.Map || t.Kind() == reflect.Struct:
		return "object"
	case t.Kind() == reflect.String:
		return "string"
	case t.Kind() == reflect.Bool:
		return "boolean"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "integer"
	case t.Kind() == reflect.Float64 || t.Kind() == reflect.Float32:
		return "number"
	}
	return "any"
}

// refIndex renders the index of docs/commands.md: the commands by the
// root help's groups, each linked to its section.
func refIndex(root *kong.Node, where map[string]refRegion, doc string) string {
	var b strings.Builder
	link := func(path string) string {
		r := where["awr "+path]
		rel, _ := filepath.Rel(filepath.Dir(doc), r.path)
		if r.path == doc {
			rel = ""
		}
		return fmt.Sprintf("[`awr %s`](%s#%s)", path, filepath.ToSlash(rel), r.anchor)
	}
	listed := map[string]bool{}
	groups := slices.Clone(helpGroups)
	for _, g := range groups {
		for _, c := range g.cmds {
			listed[c[0]] = true
		}
	}
	var other [][2]string
	for _, c := range root.Children {
		if c.Type == kong.CommandNode && !c.Hidden && !listed[c.Name] {
			other = append(other, [2]string{c.Name, firstSentence(c.Help)})
		}
	}
	if len(other) > 0 {
		groups = append(groups, helpGroup{"Other", other})
	}
	for gi, g := range groups {
		if gi > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "**%s**\n\n| command | what it does |\n|---|---|\n", g.title)
		for _, c := range g.cmds {
			var node *kong.Node
			for _, n := range root.Children {
				if n.Name == c[0] && n.Type == kong.CommandNode {
					node = n
				}
			}
			if node == nil || node.Hidden {
				continue
			}
			leaves := node.Leaves(true)
			if len(leaves) == 0 {
				leaves = []*kong.Node{node}
			}
			for _, l := range leaves {
				path := cmdPath(l)
				if _, ok := where["awr "+path]; !ok {
					continue
				}
				fmt.Fprintf(&b, "| %s | %s |\n", link(path), cell(firstSentence(l.Help)))
			}
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// cmdPath is a command's words after awr ("session start").
func cmdPath(n *kong.Node) string {
	var words []string
	for ; n != nil && n.Type == kong.CommandNode; n = n.Parent {
		words = append([]string{n.Name}, words...)
	}
	return strings.Join(words, " ")
}
