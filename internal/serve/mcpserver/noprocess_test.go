package mcpserver_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/awr-dev/awr/fixtures/testkit"

	"github.com/awr-dev/awr/commands"
	"github.com/stretchr/testify/require"
)

// TestServer_EvidenceRunsNothing: awr_evidence_add never runs the command
// it is given (issue #47: it ran `sh -c COMMAND` without exit_code). A
// command without exit_code is refused (InvalidInput naming exit_code,
// nothing written, the marker the command would create never appears);
// with exit_code the result is recorded as reported, still not run.
func TestServer_EvidenceRunsNothing(t *testing.T) {
	t.Parallel()
	dir := initProject(t)
	cs := connect(t, dir)
	marker := filepath.Join(t.TempDir(), "ran")
	command := "touch " + marker + "; echo ran > " + filepath.Join(dir, "ran.txt")
	before := rev(t, ok(t, cs, "awr_status", nil))

	out := fails(t, cs, "awr_evidence_add", map[string]any{"work": "CART-1", "criterion": "1", "command": command}, "InvalidInput")
	require.Equal(t, "exit_code", get(out, "details.field"), "%v", out)
	require.Contains(t, out["message"], "exit_code")
	require.True(t, strings.HasPrefix(out["hint"].(string), "awr evidence add --work CART-1 --criterion 1 --command "), "%v", out["hint"])
	// Also with a session (its directory is where the CLI would run it).
	s := ok(t, cs, "awr_session_start", map[string]any{"work": "CART-1", "agent": "a"})
	session := get(s, "session.id").(string)
	fails(t, cs, "awr_evidence_add", map[string]any{"work": "CART-1", "criterion": "1", "command": command, "session": session}, "InvalidInput")
	require.Equal(t, before+1, rev(t, ok(t, cs, "awr_status", nil)), "only the session start was written")

	res := ok(t, cs, "awr_evidence_add", map[string]any{"work": "CART-1", "criterion": "1", "command": command, "exit_code": 0, "session": session})
	require.Equal(t, "reported", get(res, "evidence.level"), "%v", res)
	require.Equal(t, command, get(res, "evidence.command"))
	require.EqualValues(t, 0, get(res, "evidence.exit_code"))
	require.Nil(t, get(res, "evidence.output_hash"), "nothing ran, so there is no output")

	for _, f := range []string{marker, filepath.Join(dir, "ran.txt")} {
		_, err := os.Stat(f)
		require.ErrorIs(t, err, os.ErrNotExist, "the command ran: %s exists", f)
	}
}

// TestServer_SeatCommandsArePersons: over MCP a seat's start and resume
// commands (what rig up runs) can only repeat the declared ones; a new
// seat with a command, or another command for a declared seat, is
// refused with nothing written. A declaration that omits them, or
// repeats them, is accepted.
func TestServer_SeatCommandsArePersons(t *testing.T) {
	t.Parallel()
	dir := initProject(t)
	env := openEnv(t, dir, 4)
	st := env.Store
	_, err := commands.DeclareSeat(context.Background(), env, commands.SeatRequest{Address: "build@portal", Runtime: "generic", Command: "agent {context_file}", ResumeCommand: "agent --resume {conversation}", Work: "CART-1"})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	cs := connect(t, dir)
	before := rev(t, ok(t, cs, "awr_status", nil))

	out := fails(t, cs, "awr_seat_add", map[string]any{"address": "evil@portal", "runtime": "generic", "command": "touch /tmp/x"}, "InvalidInput")
	require.Equal(t, "command", get(out, "details.field"))
	require.Equal(t, "awr seat show evil@portal", out["hint"])
	out = fails(t, cs, "awr_seat_add", map[string]any{"address": "build@portal", "runtime": "generic", "command": "agent {context_file}; touch /tmp/x"}, "InvalidInput")
	require.Equal(t, "command", get(out, "details.field"))
	out = fails(t, cs, "awr_seat_add", map[string]any{"address": "build@portal", "runtime": "generic", "command": "agent {context_file}", "resume_command": "sh"}, "InvalidInput")
	require.Equal(t, "resume_command", get(out, "details.field"))
	fails(t, cs, "awr_seat_add", map[string]any{"address": "not an address", "runtime": "generic", "command": "x"}, "InvalidInput")
	require.Equal(t, before, rev(t, ok(t, cs, "awr_status", nil)), "nothing was written")

	same := ok(t, cs, "awr_seat_add", map[string]any{"address": "build@portal", "runtime": "generic", "command": "agent {context_file}", "resume_command": "agent --resume {conversation}", "work": "CART-1"})
	require.Equal(t, false, same["changed"])
	ok(t, cs, "awr_seat_add", map[string]any{"address": "review@portal", "runtime": "claude", "work": "CART-1"})
}

// TestNoProcessInFrontEnds keeps the front ends that act on an agent's
// word (this server, awr-mcp, the web page, the hook parsers, hook
// answering in internal/hook and the door's hook path) from starting a
// process themselves: none of their files imports os/exec or calls os.StartProcess, syscall.Exec,
// syscall.ForkExec or syscall.StartProcess. What they reach through the
// door is held by TestServer_EvidenceRunsNothing and, on the built binary,
// by cmd/awr-mcp's TestNoProcessOnAgentsWord.
func TestNoProcessInFrontEnds(t *testing.T) {
	t.Parallel()
	var files []string
	for _, d := range []string{".", testkit.Path("cmd", "awr-mcp"), testkit.Path("internal", "serve", "ui"), testkit.Path("internal", "hosts"), testkit.Path("internal", "hook")} {
		m, err := filepath.Glob(filepath.Join(d, "*.go"))
		require.NoError(t, err)
		require.NotEmpty(t, m, d)
		files = append(files, m...)
	}
	files = append(files, testkit.Path("internal", "project", "hook.go"))
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
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok {
				switch x.Name + "." + sel.Sel.Name {
				case "os.StartProcess", "syscall.Exec", "syscall.ForkExec", "syscall.StartProcess":
					t.Errorf("%s: %s calls %s.%s", fset.Position(sel.Pos()), f, x.Name, sel.Sel.Name)
				}
			}
			return true
		})
	}
	require.Greater(t, checked, 20)
}
