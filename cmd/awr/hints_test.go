package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/require"
)

func testHinter(t *testing.T, dir string) hinter {
	t.Helper()
	return hinter{root: commandTree(), project: dir}
}

// TestHinter_Text: --project goes after the subcommand's path of every
// awr command in a hint, prose and all, and nowhere else.
func TestHinter_Text(t *testing.T) {
	h := testHinter(t, "my proj")
	for in, want := range map[string]string{
		"awr status":                                                  "awr status --project 'my proj'",
		"awr session list --active --work W-1":                        "awr session list --project 'my proj' --active --work W-1",
		"awr context compile --work W-1 --session S1":                 "awr context compile --project 'my proj' --work W-1 --session S1",
		"edit x.toml, then awr source reindex":                        "edit x.toml, then awr source reindex --project 'my proj'",
		"awr demo (a temporary project), or awr demo --dir EMPTY_DIR": "awr demo --project 'my proj' (a temporary project), or awr demo --project 'my proj' --dir EMPTY_DIR",
		"awr import EXPORT.jsonl --project NEW_DIR":                   "awr import EXPORT.jsonl --project NEW_DIR",
		"awr init --help":                                             "awr init --help",
		"run any awr command once":                                    "run any awr command once",
		"upgrade awr":                                                 "upgrade awr",
		"awr verify.":                                                 "awr verify --project 'my proj'.",
	} {
		require.Equal(t, want, h.text(in), in)
	}
	require.Equal(t, "awr status", testHinter(t, "").text("awr status"), "no --project given: unchanged")
	require.Equal(t, "awr init --project . --accept", testHinter(t, ".").text("awr init --accept"))
}

// TestHinter_JSON rewrites the hint fields of a JSON answer and keeps
// every other byte, keys in order.
func TestHinter_JSON(t *testing.T) {
	h := testHinter(t, "p")
	in := `{"z":1,"next_action":"awr ready --all","items":[{"hint":"awr rig ps r","title":"awr status"},{}],"a":null,"b":[true,"x"],"next":"awr status"}` + "\n"
	want := `{"z":1,"next_action":"awr ready --project p --all","items":[{"hint":"awr rig ps --project p r","title":"awr status"},{}],"a":null,"b":[true,"x"],"next":"awr status --project p"}` + "\n"
	require.Equal(t, want, string(h.json([]byte(in))))
}

// TestRun_HintsCarryProject: with --project, the error's hint, the text
// answer's next: line and the JSON answer's hint fields all carry it.
func TestRun_HintsCarryProject(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "p")
	require.NoError(t, os.MkdirAll(p, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(p, "TODO.md"), []byte("# Tasks\n\n- [ ] W-1 Write the store\n"), 0o644))
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"init", "--project", p, "--accept"}, &out, &errb), errb.String())
	out.Reset()
	require.Equal(t, 0, run([]string{"status", "--project", p}, &out, &errb), errb.String())
	require.Contains(t, out.String(), "next: awr session start --project "+p+" --work W-1")
	out.Reset()
	require.Equal(t, 0, run([]string{"--project", p, "status", "--json"}, &out, &errb), errb.String())
	require.Contains(t, out.String(), `"next_action":"awr session start --project `+p+` --work W-1`)
	errb.Reset()
	require.Equal(t, 1, run([]string{"session", "start", "--project", p, "--work", "NOPE", "--agent", "a"}, &out, &errb))
	require.Contains(t, errb.String(), "next: awr ready --project "+p+" --all")
	errb.Reset()
	require.Equal(t, 2, run([]string{"session", "end", "--project", p}, &out, &errb))
	require.Contains(t, errb.String(), "--outcome=completed|incomplete|interrupted|abandoned")
	require.Contains(t, errb.String(), "next: awr session end --help")

	// The commands intake inspect tells to run (run: and "command"),
	// search's show and hygiene's retiring command carry it too; a
	// "command" that is not awr's to give (evidence) is left alone.
	out.Reset()
	require.Equal(t, 0, run([]string{"intake", "inspect", "--project", p}, &out, &errb), errb.String())
	require.Contains(t, out.String(), "run: awr source reindex --project "+p+"\n")
	out.Reset()
	require.Equal(t, 0, run([]string{"intake", "inspect", "--project", p, "--json"}, &out, &errb), errb.String())
	require.Contains(t, out.String(), `"command":"awr source reindex --project `+p+`"`)
	out.Reset()
	require.Equal(t, 0, run([]string{"search", "--project", p, "store"}, &out, &errb), errb.String())
	require.Contains(t, out.String(), "awr work show --project "+p+" W-1")
	out.Reset()
	require.Equal(t, 0, run([]string{"search", "--project", p, "store", "--json"}, &out, &errb), errb.String())
	require.Contains(t, out.String(), `"show":"awr work show --project `+p+` W-1"`)
	require.Equal(t, `{"command":"awr verify"}`, string(hinter{root: commandTree(), project: p}.json([]byte(`{"command":"awr verify"}`))))
}

// TestCommandTree: the tree of command names read from the struct tags
// is kong's, command for command, with the same aliases.
func TestCommandTree(t *testing.T) {
	var cli CLI
	parser, err := kong.New(&cli, kong.Name("awr"), kong.Exit(func(int) {}))
	require.NoError(t, err)
	var walk func(k *kong.Node, c *cmdNode, path string)
	walk = func(k *kong.Node, c *cmdNode, path string) {
		var kids []string
		for _, kc := range k.Children {
			if kc.Type != kong.CommandNode {
				continue
			}
			kids = append(kids, kc.Name)
			cc := c.sub(kc.Name)
			require.NotNil(t, cc, "%s %s: not in the command tree", path, kc.Name)
			require.Equal(t, kc.Name, cc.name, path)
			require.ElementsMatch(t, kc.Aliases, cc.aliases, "%s %s", path, kc.Name)
			walk(kc, cc, path+" "+kc.Name)
		}
		var names []string
		for _, cc := range c.children {
			names = append(names, cc.name)
		}
		require.Equal(t, kids, names, path)
	}
	walk(parser.Model.Node, commandTree(), "awr")
}

// parsedTwice is a command line parsed by the whole model and by the
// model prunedCLI makes for its command words.
type parsedTwice struct {
	whole      CLI
	wctx, pctx *kong.Context
	werr, perr error
	typ        reflect.Type
	pruned     reflect.Value
}

// parseTwice parses args with both models; the pruned one must exist.
func parseTwice(t *testing.T, args []string) parsedTwice {
	t.Helper()
	var pt parsedTwice
	p, err := kong.New(&pt.whole, kong.Name("awr"), kong.Exit(func(int) {}))
	require.NoError(t, err)
	pt.wctx, pt.werr = p.Parse(args)
	typ, ok := prunedCLI(commandWords(args))
	require.True(t, ok, "%v", args)
	pt.typ, pt.pruned = typ, reflect.New(typ)
	pp, err := kong.New(pt.pruned.Interface(), kong.Name("awr"), kong.Exit(func(int) {}))
	require.NoError(t, err)
	pt.pctx, pt.perr = pp.Parse(args)
	return pt
}

// TestPrunedParse: a command line parsed by the model of its subcommand
// alone (and of its sub-subcommand alone, where it names one) fills the
// same globals and flags as the whole model, and one it cannot parse
// fails with the whole model's error.
func TestPrunedParse(t *testing.T) {
	for _, args := range [][]string{
		{"status", "--json"},
		{"--project", "/tmp/x", "--timeout", "5s", "session", "list", "--active"},
		{"--project=/tmp/y", "context", "compile", "--work", "W-1", "--session", "S"},
		{"rig", "up", "portal", "--plan"},
		{"session", "show", "S-1", "--json", "--project", "/tmp/z"},
		{"session", "checkpoint", "--session", "S-1", "--agent", "a", "--digest", "d", "--next-action", "n", "--open-loop", "L1", "--open-loop", "L2", "--resolve-loop", "K-1=done"},
		{"session", "start", "--work", "T-1", "--agent", "a", "--claim", "--ttl-ms", "60000"},
		{"recovery", "inspect", "--session", "S-1", "--at", "1006"},
		{"source", "reindex", "--json"},
		{"session", "--json", "show", "S-1"}, // a flag before the subcommand: only the first level pruned
		{"work", "show", "T-1", "--json"},
		{"search", "some words", "--json"}, // a command without subcommands: the second word is an argument
	} {
		pt := parseTwice(t, args)
		require.NoError(t, pt.werr, "%v", args)
		require.NoError(t, pt.perr, "%v", args)
		var got CLI
		fromPruned(&got, pt.pruned)
		samePruned(t, pt.typ, reflect.ValueOf(pt.whole), reflect.ValueOf(got), fmt.Sprint(args))
		require.Equal(t, pt.wctx.Command(), pt.pctx.Command(), "%v", args)
	}
	// `session show` prunes `session` down to `show`.
	typ, _ := prunedCLI("session", "show")
	session, ok := typ.FieldByName("Session")
	require.True(t, ok)
	require.Equal(t, 1, session.Type.NumField())
	require.Equal(t, "Show", session.Type.Field(0).Name)
	typ, _ = prunedCLI("session", "no-such-subcommand")
	session, _ = typ.FieldByName("Session")
	require.Equal(t, reflect.TypeFor[sessionCmd](), session.Type)

	for _, args := range [][]string{{"session", "show"}, {"session", "bogus", "S"}, {"session", "show", "S-1", "--no-such-flag"}} {
		pt := parseTwice(t, args)
		require.Error(t, pt.werr, "%v", args)
		require.Error(t, pt.perr, "%v: the pruned model refuses it too, and run parses it again with the whole one", args)
	}
	require.Equal(t, "", commandWord([]string{"--help"}))
	require.Equal(t, "", commandWord([]string{"--bogus", "status"}))
	require.Equal(t, "status", commandWord([]string{"--json", "status"}))
	first, second := commandWords([]string{"--project", "x", "session", "show", "--json"})
	require.Equal(t, []string{"session", "show"}, []string{first, second})
	first, second = commandWords([]string{"session", "--json", "show"})
	require.Equal(t, []string{"session", ""}, []string{first, second})
	_, ok = prunedCLI("no-such-command")
	require.False(t, ok)
}

// samePruned requires the fields of the pruned type typ to hold the same
// in whole and got, descending into the command structs pruned.
func samePruned(t *testing.T, typ reflect.Type, whole, got reflect.Value, where string) {
	t.Helper()
	for i := range typ.NumField() {
		f := typ.Field(i)
		w, g := whole.FieldByName(f.Name), got.FieldByName(f.Name)
		if f.Type == w.Type() {
			require.Equal(t, w.Interface(), g.Interface(), "%s: %s", where, f.Name)
			continue
		}
		samePruned(t, f.Type, w, g, where+": "+f.Name)
	}
}

// TestClock: AWR_TEST_NOW (Unix ms) is where awr's clock starts when set, the real one
// when unset or not a time.
func TestClock(t *testing.T) {
	t.Setenv("AWR_TEST_NOW", "1796150977321")
	require.WithinDuration(t, time.UnixMilli(1796150977321), clock()(), time.Second)
	t.Setenv("AWR_TEST_NOW", "soon")
	require.WithinDuration(t, time.Now(), clock()(), time.Minute)
}

// TestHinter_JSONEdges: strings that look like keys, escapes, a hint key
// with a value that is not a string, and a document that is not JSON.
func TestHinter_JSONEdges(t *testing.T) {
	h := testHinter(t, "p q")
	in := `{"x":"a,\"hint\":\"awr status\"","y":"ends in \\","hint":"awr status","next":{"hint":"awr ready"},"next_step":7,"accept":"awr status <now>"}` + "\n"
	want := `{"x":"a,\"hint\":\"awr status\"","y":"ends in \\","hint":"awr status --project 'p q'","next":{"hint":"awr ready --project 'p q'"},"next_step":7,"accept":"awr status --project 'p q' <now>"}` + "\n"
	require.Equal(t, want, string(h.json([]byte(in))))
	for _, bad := range []string{`{"hint":"awr status`, `{"hint":"awr \`, "not json\n"} {
		require.Equal(t, bad, string(h.json([]byte(bad))))
	}
	require.JSONEq(t, `{"hint":"awr status --project 'p q'"}`, string(h.json([]byte("{\n  \"hint\" : \"awr status\"\n}\n"))))
}
