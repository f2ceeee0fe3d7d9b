package main

import (
	"bytes"
	"cmp"
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
//
// exit is the trigger's exit code when not 1 (2 for a usage error). fill
// replaces, before the hint runs, each placeholder that stands for a name
// only the user can choose (EXPORT.jsonl, NEW_DIR: the hint runner's
// acceptedPlaceholders) with the name a user would give ({dir} is the
// project, {out} a directory outside it). project says what the hint
// must say of the project: "" carries the --project the user gave,
// "none" needs none (help), "other" names the other project it acts on.
// noInit leaves the project uninitialized before setup; needs names a
// program the setup runs (the case skips without it). handed, for a
// hint the catalogue cannot list (made from the preview, handedOn in
// hintsource_test.go), says where it is made; hint is then checked as
// given here.
type hintCase struct {
	name    string
	needs   string
	handed  string
	noInit  bool
	setup   []string
	trigger string
	exit    int
	code    string
	hint    string
	fill    map[string]string
	project string
	after   string
}

// sid is a setup line that starts a session on CART-1 with its claim and
// keeps its id in the file sid.
const sid = `awr session start --work CART-1 --agent a --claim --json | sed 's/.*"session":{"id":"\([^"]*\)".*/\1/' > sid`

// untriggerable are the codes the catalogue lists with hints that no
// input to the CLI can raise in a fixture project, each with the reason;
// every other code with hints has a hintCase (TestHints_EveryCodeRun).
var untriggerable = map[string]string{
	"Internal": "an invariant broken inside awr itself (a projection that disagrees with the rows it wrote, a cache that moved under the shared log's lock): no input reaches it, and a test that could would be a bug report",
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
	// A write that names a revision its session's stream has moved past:
	// the hint reads the revision to name, and the write naming it passes.
	{name: "revision-conflict", setup: []string{sid, `awr session checkpoint --session $(cat sid) --agent a --digest d --next-action n`},
		trigger: `awr session checkpoint --session $(cat sid) --agent a --digest d2 --next-action n2 --expected-revision 3`, code: "RevisionConflict", hint: "awr status",
		after: `awr session checkpoint --session $(cat sid) --agent a --digest d2 --next-action n2 --expected-revision $(awr status --json | sed 's/.*"project_revision":\([0-9]*\).*/\1/')`},
	{name: "at-beyond-head", trigger: `awr status --at 999`, code: "InvalidInput", hint: "awr status"},
	// An anchor file named without --anchors: the hint checks the chain
	// against it.
	{name: "anchor-file-without-anchors", setup: []string{`awr anchor --to anchors.txt`}, trigger: `awr verify anchors.txt`, code: "InvalidInput",
		hint: "awr verify --anchors ARG", after: `awr verify --anchors anchors.txt --json | grep -q '"anchored":1'`},
	// A packet that lacks what the work needs: the hint shows the gap.
	{name: "context-incomplete", trigger: `awr context compile --work OPS-1`, code: "ContextIncomplete", hint: "awr intake inspect",
		after: `awr intake inspect --json | grep -q OPS-1`},
	{name: "restatement-mismatch", setup: []string{sid, `awr session checkpoint --session $(cat sid) --agent a --digest d --next-action n`,
		`awr session end --session $(cat sid) --outcome interrupted`,
		`awr session resume --from-session $(cat sid) --agent b --json | sed 's/.*"resumed":{"session":{"id":"\([^"]*\)".*/\1/' > succ`,
		`echo '{"next_action":"something else"}' > restatement.json`},
		trigger: `awr recovery verify --session $(cat succ) --input restatement.json`, code: "RestatementMismatch", hint: "awr recovery inspect --session ARG"},
	// A head that is not the log's: the hint shows the head to compare.
	{name: "expect-head", trigger: `awr verify --expect-head ` + strings.Repeat("0", 64), code: "VerifyFailed", hint: "awr status --full",
		after: `awr status --full | grep -q 'head hash'`},
	// An imported copy refuses writes; the fork the hint makes takes them.
	{name: "read-only-replica", setup: []string{`awr export --output export.jsonl`, `rm -r .awr`, `awr import export.jsonl --project .`},
		trigger: `awr session start --work CART-1 --agent a`, code: "ReadOnlyReplica", hint: "awr fork --accept",
		after: `awr session start --work CART-1 --agent a`},
	// A damaged database: the hint imports the export kept beside it
	// into a new project, which then reads.
	{name: "damaged-database", setup: []string{`awr export --output backup.jsonl`, `printf 'not a database at all, only some text long enough' > .awr/awr.db`, `rm -f .awr/awr.db-wal .awr/awr.db-shm`},
		trigger: `awr status`, code: "Storage", hint: "awr import EXPORT.jsonl --project NEW_DIR",
		fill: map[string]string{"EXPORT.jsonl": "{dir}/backup.jsonl", "NEW_DIR": "{out}/restored"}, project: "other",
		after: `awr status --project {out}/restored`},
	// A second task list named on an initialized project: the manifest is
	// never rewritten; the hint indexes the sources it lists.
	{name: "manifest-conflict", setup: []string{`printf '# TODO\n\n- [ ] T-1: A task\n' > TODO.md`}, trigger: `awr init --accept --source TODO.md`,
		code: "SourceConflict", hint: "awr source reindex"},
	// A status map accepted with a fingerprint the manifest no longer
	// has: the hint previews it again, and that preview offers the accept.
	{name: "stale-map-fingerprint", trigger: `awr init --accept --status-map planned=ready --fingerprint 0123456789abcdef`,
		code: "SourceStale", hint: "awr init --name ARG --status-map planned=ready", handed: "intake.PreviewAgain",
		after: `awr init --status-map planned=ready --json | grep -q '"fingerprint":"[0-9a-f]\{16\}"'`},
	{name: "log-page-too-large", trigger: `awr log --limit 10001`, code: "InvalidInput", hint: "awr log --limit N"},
	{name: "log-empty-range", trigger: `awr log --since 2 --until 2`, code: "InvalidInput", hint: "awr log --since N"},
	{name: "log-unknown-kind", trigger: `awr log --kind nope`, code: "InvalidInput", hint: "awr log --kind ARG"},
	{name: "diff-backwards", trigger: `awr diff --from 2 --to 1`, code: "InvalidInput", hint: "awr diff --from N --to N"},
	{name: "history-limit", trigger: `awr work history CART-1 --limit 0`, code: "InvalidInput", hint: "awr work history ARG --limit N"},
	{name: "search-empty", trigger: `awr search ''`, code: "InvalidInput", hint: "awr search --help", project: "none"},
	// An import of a file that is not there: the hint writes one, from
	// the project the user names.
	{name: "import-missing-file", trigger: `awr import nope.jsonl`, code: "InvalidInput", hint: "awr export --project SOURCE_DIR --output FILE",
		fill: map[string]string{"SOURCE_DIR": "{dir}", "FILE": "{out}/export.jsonl"}, project: "other", after: `test -s {out}/export.jsonl`},
	// An import into a project with events: the hint imports into an
	// empty one, which then reads.
	{name: "import-into-a-project", setup: []string{`awr export --output export.jsonl`}, trigger: `awr import export.jsonl`, code: "InvalidTransition",
		hint: "awr import FILE --project EMPTY_DIR", fill: map[string]string{"FILE": "{dir}/export.jsonl", "EMPTY_DIR": "{out}/copy"}, project: "other",
		after: `awr status --project {out}/copy`},
	{name: "unknown-execution", trigger: `awr exec show NOPE`, code: "NotFound", hint: "awr exec list"},
	{name: "unknown-seat", trigger: `awr seat show dev@nope`, code: "NotFound", hint: "awr seat list --rig ARG"},
	// A rig with no seat: the hint adds one, and the rig lists it.
	{name: "rig-without-seats", trigger: `awr rig up nope`, code: "NotFound", hint: "awr seat add ROLE@ARG --runtime generic --command 'my-agent {context_file}'",
		fill: map[string]string{"ROLE": "dev"}, after: `awr seat list --rig nope | grep -q dev@nope`},
	// A write to a session already resumed: the hint shows the successor,
	// where the work goes on.
	{name: "write-to-a-resumed-session", setup: []string{sid, `awr session checkpoint --session $(cat sid) --agent a --digest d --next-action n`,
		`awr session end --session $(cat sid) --outcome interrupted`,
		`awr session resume --from-session $(cat sid) --agent b --json | sed 's/.*"resumed":{"session":{"id":"\([^"]*\)".*/\1/' > succ`},
		trigger: `awr claim release --session $(cat sid)`, code: "InvalidTransition", hint: "awr session show w1"},
	{name: "fork-of-an-original", trigger: `awr fork --accept`, code: "InvalidTransition", hint: "awr status"},
	// Evidence for a criterion the work does not have: the hint lists
	// the criteria.
	{name: "unknown-criterion", trigger: `awr evidence add --work CART-1 --criterion 9 --note x`, code: "InvalidInput", hint: "awr work show ARG",
		after: `awr work show CART-1 | grep -q 'Writes are idempotent'`},
	// A row of the log edited behind awr's back (the trigger dropped):
	// verify names it, and the hint restores the export kept before
	// into a new project, which verifies.
	{name: "edited-log", needs: "sqlite3", setup: []string{`awr export --output backup.jsonl`,
		`sqlite3 .awr/awr.db "DROP TRIGGER events_no_update; UPDATE events SET actor='mallory' WHERE seq=2;"`},
		trigger: `awr verify`, code: "VerifyFailed", hint: "awr import EXPORT.jsonl --project NEW_DIR",
		fill: map[string]string{"EXPORT.jsonl": "{dir}/backup.jsonl", "NEW_DIR": "{out}/restored"}, project: "other",
		after: `awr verify --project {out}/restored`},
	// A generic seat without its command: the hint adds it with one.
	{name: "seat-without-command", trigger: `awr seat add dev@r --runtime generic`, code: "InvalidInput",
		hint: "awr seat add ARG --runtime generic --command 'my-agent --context {context_file}'", after: `awr seat list --rig r | grep -q dev@r`},
	{name: "diff-from-beyond-head", trigger: `awr diff --from 999`, code: "InvalidInput", hint: "awr diff --from N"},
	// An anchor file in .awr/ (where nothing but awr writes): the hint
	// writes it where anchors belong.
	{name: "anchor-into-awr", trigger: `awr anchor --to .awr/x.txt`, code: "InvalidInput", hint: "awr anchor --to anchors.txt",
		after: `awr verify --anchors anchors.txt --json | grep -q '"anchored":1'`},
	{name: "unknown-flag", trigger: `awr --nope`, exit: 2, code: "Usage", hint: "awr --help", project: "none"},
	{name: "malformed-map", trigger: `awr init --status-map parked`, exit: 2, code: "Usage", hint: "awr init --help", project: "none"},
}

// TestHints_RunAndProgress triggers each error of hintCases with
// --project, runs the hint it printed as a user pastes it and checks that
// it parses, carries --project, acts on no other agent's live session
// and makes progress. Each template must be one the error catalogue
// (docs/reliability.md) lists for the code.
func TestHints_RunAndProgress(t *testing.T) {
	testkit.PlainOnly(t, "every hint runs as an awr process")
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
		if c.handed == "" {
			require.Contains(t, row, "`"+c.hint+"`", "%s: the catalogue lists no hint %q for %s", c.name, c.hint, c.code)
		}
		covered++
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if _, err := exec.LookPath(cmp.Or(c.needs, "sh")); err != nil {
				t.Skipf("%s is not installed", c.needs)
			}
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
			setup := c.setup
			if !c.noInit {
				setup = append([]string{"awr init --accept"}, setup...)
			}
			for _, l := range setup {
				_, e, code := sh(l, dir)
				require.Zero(t, code, "setup %s: %s", l, e)
			}
			_, e, code := sh(withProject(c.trigger)+" --json", dir)
			require.Equal(t, cmp.Or(c.exit, 1), code, "%s: %s", c.trigger, e)
			var obj struct{ Code, Hint, Message string }
			require.NoError(t, json.Unmarshal([]byte(e), &obj), e)
			require.Equal(t, c.code, obj.Code, obj.Message)
			tmpl := regexp.QuoteMeta(c.hint)
			tmpl = regexp.MustCompile(`\bN\b`).ReplaceAllString(strings.ReplaceAll(strings.ReplaceAll(tmpl, "ARG", `\S+`), " w1", ` \S+`), `\d+`)
			unprojected := strings.Replace(obj.Hint, " --project "+dir, "", 1)
			require.Regexp(t, "^"+tmpl+"$", unprojected, "%s: the hint", c.name)
			switch c.project {
			case "":
				require.Contains(t, obj.Hint, "--project "+dir, "%s: a hint carries the --project the user gave", c.name)
			case "none":
				require.NotContains(t, obj.Hint, "--project", "%s: a help hint needs no project", c.name)
			}
			places := strings.NewReplacer("{dir}", dir, "{out}", outside)
			hint := obj.Hint
			for k, v := range c.fill {
				hint = strings.ReplaceAll(hint, k, places.Replace(v))
			}

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
			_, e, code = sh(hint, outside)
			require.NotEqual(t, 2, code, "%s: the hint %q is a usage error: %s", c.name, hint, e)
			require.Zero(t, code, "%s: the hint %q failed: %s", c.name, hint, e)
			after := active()
			for id := range before {
				require.True(t, after[id], "%s: the hint %q ended session %s, which was active", c.name, obj.Hint, id)
			}
			if c.after != "" {
				_, e, code := sh(places.Replace(c.after), dir)
				require.Zero(t, code, "%s: after the hint %q, %s: %s", c.name, obj.Hint, c.after, e)
			}
		})
	}
	t.Logf("%d hints of the catalogue triggered and run", covered)
}

// TestHints_EveryCodeRun walks the error catalogue (docs/reliability.md,
// generated from the code): every code it lists with a hint has a case in
// hintCases that triggers it and runs its hint (TestHints_RunAndProgress),
// or is in untriggerable with the reason no input reaches it.
func TestHints_EveryCodeRun(t *testing.T) {
	t.Parallel()
	catalogue, err := os.ReadFile(testkit.Path(catalogueDoc))
	require.NoError(t, err)
	run := map[string]bool{}
	for _, c := range hintCases {
		run[c.code] = true
	}
	rows := regexp.MustCompile("(?m)^\\| `(\\w+)` \\| [^|]+ \\| (.*) \\|$").FindAllStringSubmatch(string(catalogue), -1)
	require.NotEmpty(t, rows, "the catalogue's rows")
	hinted := 0
	for _, r := range rows {
		code, hints := r[1], r[2]
		if hints == "none" {
			continue
		}
		hinted++
		if reason, ok := untriggerable[code]; ok {
			require.NotEmpty(t, reason, code)
			require.False(t, run[code], "%s has a case: it is not untriggerable", code)
			continue
		}
		require.True(t, run[code], "the catalogue lists hints for %s, and no hint case triggers it (add one to hintCases, or the reason to untriggerable)", code)
	}
	require.Greater(t, hinted, 10, "codes with hints")
}
