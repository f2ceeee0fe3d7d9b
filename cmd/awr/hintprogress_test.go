package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/awr-dev/awr/fixtures"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/stretchr/testify/require"
)

// hintCase triggers one error that carries a hint, in a copy of the
// checkout fixture initialized with awr init --accept: setup runs first
// (sh lines, awr on PATH, in the project), then trigger must fail with
// code and a hint that instantiates hint, the catalogue's template (ARG
// stands for a value awr fills in, N for a number, w1 for an id the scan
// of the code could not name). The hint then runs
// as printed, from outside the project (so it must carry --project),
// and must make progress: exit 0, end no session that was active, and
// leave the condition after (a sh line, exit 0) true.
type hintCase struct {
	name    string
	setup   []string
	trigger string
	code    string
	hint    string
	after   string
}

var hintCases = []hintCase{
	{name: "unknown-work", trigger: `awr session start --work NOPE-1 --agent a`, code: "NotFound", hint: "awr ready --all"},
	{name: "unknown-session", trigger: `awr session show 01NOPE`, code: "NotFound", hint: "awr session list"},
	{name: "not-initialized", setup: []string{`rm -r .awr`}, trigger: `awr status`, code: "NotFound", hint: "awr init",
		after: `true`},
	{name: "source-stale", setup: []string{`echo '# edited' >> ledger/work-ledger.yaml`}, trigger: `awr session start --work CART-1 --agent a --claim`,
		code: "SourceStale", hint: "awr source reindex", after: `awr session start --work CART-1 --agent a --claim`},
	{name: "claim-held", setup: []string{`awr session start --work CART-1 --agent a --claim`}, trigger: `awr session start --work CART-1 --agent b --claim`,
		code: "ClaimConflict", hint: "awr session list --active --work ARG"},
	{name: "dependency-open", trigger: `awr session start --work CART-2 --agent a --claim`, code: "DependencyBlocked", hint: "awr ready"},
	{name: "claim-again", setup: []string{`awr session start --work CART-1 --agent a --json | sed 's/.*"session":{"id":"\([^"]*\)".*/\1/' > sid`, `awr claim acquire --session $(cat sid)`},
		trigger: `awr claim acquire --session $(cat sid)`, code: "InvalidTransition", hint: "awr claim renew --session ARG"},
	{name: "ended-session", setup: []string{`awr session start --work CART-1 --agent a --claim --json | sed 's/.*"session":{"id":"\([^"]*\)".*/\1/' > sid`,
		`awr session end --session $(cat sid) --outcome interrupted`},
		trigger: `awr session checkpoint --session $(cat sid) --agent a --digest d --next-action n`, code: "InvalidTransition",
		hint: `awr session resume --from-session w1 --agent "$USER"`, after: `awr session list --active --json | grep -q '"predecessor_id":"'$(cat sid)'"'`},
	// A session resumed by one agent and still active: resuming it again
	// would take the work from that agent; the hint only reads it.
	{name: "resumed-by-a-live-session", setup: []string{`awr session start --work CART-1 --agent a --claim --json | sed 's/.*"session":{"id":"\([^"]*\)".*/\1/' > sid`,
		`awr session checkpoint --session $(cat sid) --agent a --digest d --next-action n`, `awr session end --session $(cat sid) --outcome interrupted`,
		`awr session resume --from-session $(cat sid) --agent b`},
		trigger: `awr session resume --from-session $(cat sid) --agent c`, code: "InvalidTransition", hint: "awr recovery inspect --session ARG"},
	{name: "resumed-by-an-ended-session", setup: []string{`awr session start --work CART-1 --agent a --claim --json | sed 's/.*"session":{"id":"\([^"]*\)".*/\1/' > sid`,
		`awr session end --session $(cat sid) --outcome interrupted`,
		`awr session resume --from-session $(cat sid) --agent b --json | sed 's/.*"resumed":{"session":{"id":"\([^"]*\)".*/\1/' > succ`,
		`awr session end --session $(cat succ) --outcome interrupted`},
		trigger: `awr session resume --from-session $(cat sid) --agent c`, code: "InvalidTransition", hint: "awr session resume --from-session ARG --agent ARG",
		after: `awr session list --active --json | grep -q '"predecessor_id":"'$(cat succ)'"'`},
	{name: "budget", trigger: `awr context compile --work CART-1 --budget 20`, code: "BudgetExceeded", hint: "awr context compile --work ARG --budget N"},
	{name: "evidence-missing", setup: []string{`awr session start --work CART-1 --agent a --claim --json | sed 's/.*"session":{"id":"\([^"]*\)".*/\1/' > sid`},
		trigger: `awr work complete CART-1 --session $(cat sid)`, code: "EvidenceMissing", hint: "awr work show ARG"},
}

// TestHints_RunAndProgress triggers each error of hintCases with
// --project, runs the hint it printed as a user pastes it and checks that
// it parses, carries --project, acts on no other agent's live session
// and makes progress. Each template must be one the error catalogue
// (docs/reliability.md) lists for the code.
func TestHints_RunAndProgress(t *testing.T) {
	t.Parallel()
	bin := filepath.Dir(testkit.Program(t, testkit.AWR))
	catalogue, err := os.ReadFile(testkit.Path(catalogueDoc))
	require.NoError(t, err)
	covered := 0
	for _, c := range hintCases {
		// The code's row, or the row of the hints whose code is decided
		// where the error is made.
		row := regexp.MustCompile("(?m)^\\| `"+c.code+"` \\|.*$").FindString(string(catalogue)) +
			regexp.MustCompile("(?m)^\\| any .*$").FindString(string(catalogue))
		require.Contains(t, row, "`"+c.hint+"`", "%s: the catalogue lists no hint %q for %s", c.name, c.hint, c.code)
		covered++
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, err := fixtures.CopyProject("checkout", t.TempDir())
			require.NoError(t, err)
			outside := t.TempDir()
			sh := func(line string, cwd string) (stdout, stderr string, code int) {
				cmd := exec.Command("sh", "-c", line)
				cmd.Dir = cwd
				cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "AWR_PROJECT=", "USER=tester")
				var o, e bytes.Buffer
				cmd.Stdout, cmd.Stderr = &o, &e
				err := cmd.Run()
				if ee, ok := err.(*exec.ExitError); ok {
					return o.String(), e.String(), ee.ExitCode()
				}
				require.NoError(t, err, line)
				return o.String(), e.String(), 0
			}
			withProject := func(line string) string {
				words := strings.SplitN(line, " ", 3)
				return strings.Join(append(words[:2:2], "--project "+dir+" "+strings.Join(words[2:], " ")), " ")
			}
			for _, l := range append([]string{"awr init --accept"}, c.setup...) {
				_, e, code := sh(l, dir)
				require.Zero(t, code, "setup %s: %s", l, e)
			}
			_, e, code := sh(withProject(c.trigger)+" --json", dir)
			require.Equal(t, 1, code, "%s: %s", c.trigger, e)
			var obj struct{ Code, Hint, Message string }
			require.NoError(t, json.Unmarshal([]byte(e), &obj), e)
			require.Equal(t, c.code, obj.Code, obj.Message)
			tmpl := regexp.QuoteMeta(c.hint)
			tmpl = strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(tmpl, "ARG", `\S+`), " N", ` \d+`), " w1", ` \S+`)
			unprojected := strings.Replace(obj.Hint, " --project "+dir, "", 1)
			require.Regexp(t, "^"+tmpl+"$", unprojected, "%s: the hint", c.name)
			require.Contains(t, obj.Hint, "--project "+dir, "%s: a hint carries the --project the user gave", c.name)

			active := func() map[string]bool {
				o, e, code := sh("awr session list --active --json --project "+dir, outside)
				m := map[string]bool{}
				if code != 0 {
					return m // no project yet
				}
				var l struct{ Sessions []struct{ ID string } }
				require.NoError(t, json.Unmarshal([]byte(o), &l), e)
				for _, s := range l.Sessions {
					m[s.ID] = true
				}
				return m
			}
			before := active()
			_, e, code = sh(obj.Hint, outside)
			require.NotEqual(t, 2, code, "%s: the hint %q is a usage error: %s", c.name, obj.Hint, e)
			require.Zero(t, code, "%s: the hint %q failed: %s", c.name, obj.Hint, e)
			after := active()
			for id := range before {
				require.True(t, after[id], "%s: the hint %q ended session %s, which was active", c.name, obj.Hint, id)
			}
			if c.after != "" {
				_, e, code := sh(c.after, dir)
				require.Zero(t, code, "%s: after the hint %q, %s: %s", c.name, obj.Hint, c.after, e)
			}
		})
	}
	t.Logf("%d hints of the catalogue triggered and run", covered)
}
