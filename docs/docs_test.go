package docs_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awr-dev/awr/fixtures"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/stretchr/testify/require"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the output shown in the runnable blocks of the checked docs from a real run")

// checkedDocs are the docs whose command examples run as tests; each must
// hold at least one runnable block.
var checkedDocs = []string{"quickstart.md", "handoff.md", "commands.md"}

// TestDocs runs the command examples of checkedDocs against real projects
// and compares what they print with what the docs show.
//
// A doc marks what runs with HTML comments (invisible once rendered):
//
//	<!-- doctest: project NAME [git] [dir=PATH] -->
//	    starts a scenario: a copy of fixtures/projects/NAME (an empty
//	    directory for "empty") in a temporary directory (a git repository
//	    with one commit with git); PATH is the directory the doc's text
//	    shows for it.
//	    With as=LABEL, the scenario can be taken up again later with
//	<!-- doctest: scenario LABEL -->
//	    (a doc whose sections alternate between two projects).
//	<!-- doctest: file SRC DST -->
//	    copies the repository's file SRC (fixtures/hooks/claude/stop.json)
//	    to DST in the scenario's directory: an input the doc's commands read.
//	<!-- doctest: copy LABEL -->
//	    copies the scenario as it is now to another temporary directory,
//	    a scenario named LABEL (its ids and hashes are the same): a copy
//	    "taken just before" a write the doc shows twice. Paths under the
//	    scenario it was copied from, which its log names, are printed back
//	    as /tmp/ paths too.
//	<!-- doctest: fixture NAME PATH -->
//	    copies fixtures/projects/NAME to PATH (a /tmp/ path of the doc)
//	    in the scenario's root: another project the doc's commands name.
//	<!-- doctest: sh COMMAND -->
//	    runs COMMAND there, unshown (a precondition the prose states).
//	<!-- doctest: run -->
//	    before a fenced block: each "$ " line of the block runs, in order,
//	    in the scenario's directory (bash, pipefail; a heredoc runs with its
//	    lines); the lines after it, up to the next "$ " line, are its
//	    output (stdout and stderr). A lone "…" line stands for any lines.
//	<!-- doctest: run whole -->
//	    the same for a block that is one command, its first line: all the
//	    rest is its output, even lines that start with "$ ".
//	<!-- doctest: let TOKEN COMMAND -->
//	    runs COMMAND there, unshown, and binds the id or hash TOKEN the doc
//	    shows to what COMMAND prints (trimmed): a state the prose describes
//	    (a session started off-page) that the doc's commands name.
//	<!-- doctest: skip REASON -->
//	    before a fenced block: the block does not run, for REASON (it needs
//	    a real agent host, a wall-clock wait of minutes, ...).
//
// Every fenced block holding an awr command ("$ " line naming awr) must
// be marked run or skip; the test logs how many blocks each doc runs and
// skips. Every /tmp/ path of a command is a path under the scenario's own
// temporary root (where a scenario the doc shows under /tmp/ lives too),
// printed back as /tmp/. The examples' HOME is /tmp/home, and the awr
// they run is printed as /tmp/bin/awr. fakeagent (fixtures/fakeagent) is
// on their PATH beside it, and each scenario runs its seats on its own
// tmux server (AWR_TMUX_SOCKET), killed when the test ends. A state an
// agent reaches on its own (a checkpoint it records when asked) is waited
// for with a hidden sh step that polls with a deadline, never a bare sleep.
//
// The steps of a scenario share the shell variables they set, and "$?"
// is the exit code of the step before ("$ echo $?").
//
// A command whose shown output holds an awr error ("awr: ... (Code)" or
// {"code":...}) must exit 1, or 2 for Usage, one that shows a sqlite3
// "Error: ... (N)" must exit N, one that echoes its own exit code
// ("; echo "exit $?"") must exit 0, and any other must exit 0. An id a
// command names must be one an earlier output showed or a let bound
// (unless the command is shown failing with NotFound). Before comparing,
// ids (ULIDs), conversation ids (UUIDs), the tmux sessions of seats
// (awr-XXXXXX-ROLE@RIG, named after the project's directory), hashes, git
// commits and checksums are matched up in order
// of appearance (a doc id seen once stands for the real id at that place,
// in later commands too; one shown id stands for one real id in the whole
// doc), and times, durations in ms, token counts and runs of spaces are
// normalised (and the size of the context file the fake agent of the seat
// examples reports). -update-docs rewrites the shown output, and the ids and
// hashes after it, from the run.
// Slow: every example is an awr process, and the rig examples start agents in tmux.
func TestDocs(t *testing.T) {
	bin := testkit.Programs(t, testkit.AWR, testkit.FakeAgent)
	for _, name := range checkedDocs {
		t.Run(strings.TrimSuffix(name, ".md"), func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(name)
			require.NoError(t, err)
			doc := &docFile{path: name, lines: strings.Split(string(src), "\n"), renames: &renames{m: map[string]string{}}}
			chains := doc.parse(t)
			// The scenarios run in parallel, each chain of them (a scenario
			// and those that take it up again or copy it) in the doc's order.
			runs := make([]*docRun, len(chains))
			t.Run("scenarios", func(t *testing.T) {
				for i, ch := range chains {
					t.Run(fmt.Sprintf("line%d", ch.line+1), func(t *testing.T) {
						t.Parallel()
						runs[i] = &docRun{t: t, doc: doc, bin: bin}
						runs[i].run(ch.items)
					})
				}
			})
			ran := 0
			var edits []docEdit
			for _, d := range runs {
				if d != nil {
					ran += d.ran
					edits = append(edits, d.edits...)
				}
			}
			require.NotZero(t, ran, "%s has no runnable block (mark one with <!-- doctest: run -->)", name)
			t.Logf("%s: %d blocks run in %d scenario chains, %d skipped", name, ran, len(chains), doc.skipped)
			if *updateDocs {
				require.NoError(t, os.WriteFile(name, []byte(doc.rewritten(edits)), 0o644))
			}
		})
	}
}

// TestMain removes the programs the kit built once the tests end.
func TestMain(m *testing.M) { os.Exit(testkit.Run(m)) }

// docFile is one checked doc: its lines, what its parse found, and the
// renames every scenario of it shares.
type docFile struct {
	path    string
	lines   []string
	skipped int
	renames *renames
}

// renames maps, over the whole doc, a shown token to the real one; the
// doc's scenarios run in parallel and share it.
type renames struct {
	mu sync.Mutex
	m  map[string]string
}

// docItem is a directive (name, arg) or a runnable block (idx, whole) at
// line.
type docItem struct {
	line      int
	name, arg string
	idx       []int
	whole     bool
}

// docChain is a run of items that share scenarios: a project directive
// and what follows it up to the next project or scenario directive, with
// every later part that takes up (scenario LABEL) a scenario it labelled
// or copied.
type docChain struct {
	line  int
	items []docItem
}

// docRun runs one chain of a doc's scenarios.
type docRun struct {
	t   *testing.T
	doc *docFile
	// bin is the directory of the awr binary the examples run.
	bin string
	ran int
	// lastCode is the exit code of the last step.
	lastCode int
	// scenario; root is its temporary directory, and root+"/tmp" the
	// /tmp the doc shows.
	root, dir, shownDir string
	tokens              *tokenMap
	// edits are the output ranges to rewrite with -update-docs.
	edits   []docEdit
	sockets map[string]bool
	// scenarios are the ones a project directive labelled with as=.
	scenarios map[string]scenario
	// roots are the temporary roots of every scenario so far: a copy's log
	// names the paths of the scenario it was copied from.
	roots []string
	// clock is the doc's clock, in Unix ms (see exec).
	clock int64
}

type scenario struct {
	root, dir, shownDir string
	tokens              *tokenMap
}

type docEdit struct {
	from, to int // lines [from, to) of the doc
	out      []string
}

var directive = regexp.MustCompile(`^<!-- doctest: (\w+)\s*(.*?)\s*-->$`)

// parse reads the doc's directives and runnable blocks into chains,
// checks that every block with an awr command is marked, and counts the
// skipped blocks.
func (f *docFile) parse(t *testing.T) []*docChain {
	var chains []*docChain
	labels := map[string]*docChain{}
	cur := &docChain{}
	chains = append(chains, cur)
	add := func(it docItem) { cur.items = append(cur.items, it) }
	inBlock, runBlock, whole := false, false, false
	var block []int
	for i := 0; i < len(f.lines); i++ {
		line := f.lines[i]
		if strings.HasPrefix(line, "```") {
			if inBlock {
				if runBlock {
					add(docItem{line: block0(block, i), idx: block, whole: whole})
				}
				inBlock, runBlock, block = false, false, nil
				continue
			}
			inBlock = true
			prev := ""
			if i > 0 {
				prev = strings.TrimSpace(f.lines[i-1])
			}
			runBlock = prev == "<!-- doctest: run -->" || prev == "<!-- doctest: run whole -->"
			whole = prev == "<!-- doctest: run whole -->"
			skip := directive.FindStringSubmatch(prev)
			marked := runBlock
			if skip != nil && skip[1] == "skip" {
				if skip[2] == "" {
					t.Errorf("%s:%d: doctest skip needs a reason", f.path, i)
				}
				f.skipped++
				marked = true
			}
			if !marked {
				for j := i + 1; j < len(f.lines) && !strings.HasPrefix(f.lines[j], "```"); j++ {
					if awrCommand.MatchString(f.lines[j]) {
						t.Errorf("%s:%d: a block with an awr command is neither run nor skipped: mark it <!-- doctest: run --> or <!-- doctest: skip REASON -->", f.path, i+1)
						break
					}
				}
			}
			continue
		}
		if inBlock {
			block = append(block, i)
			continue
		}
		m := directive.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		it := docItem{line: i, name: m[1], arg: m[2]}
		switch m[1] {
		case "project":
			cur = &docChain{line: i}
			chains = append(chains, cur)
			for _, a := range strings.Fields(m[2]) {
				if label, ok := strings.CutPrefix(a, "as="); ok {
					labels[label] = cur
				}
			}
		case "scenario":
			ch, ok := labels[m[2]]
			if !ok {
				t.Fatalf("%s:%d: doctest scenario %q: no project directive named it (as=%s)", f.path, i+1, m[2], m[2])
			}
			cur = ch
		case "copy":
			labels[m[2]] = cur
		case "run", "skip":
			continue
		}
		add(it)
	}
	var out []*docChain
	for _, ch := range chains {
		if len(ch.items) > 0 {
			out = append(out, ch)
		}
	}
	return out
}

// block0 is the line of a block's first line, or of its closing fence
// when it is empty.
func block0(block []int, fence int) int {
	if len(block) > 0 {
		return block[0]
	}
	return fence
}

// run runs the items of one chain in order.
func (d *docRun) run(items []docItem) {
	d.sockets = map[string]bool{}
	d.scenarios = map[string]scenario{}
	for _, it := range items {
		if it.name == "" {
			d.block(it.idx, it.whole)
			continue
		}
		i, m := it.line, [3]string{"", it.name, it.arg}
		switch m[1] {
		case "project":
			d.project(i, strings.Fields(m[2]))
		case "sh":
			d.need(i)
			if out, code := d.exec(d.toReal(m[2])); code != 0 {
				d.fail(i, "doctest sh %s: exit %d\n%s", m[2], code, out)
			}
		case "scenario":
			sc, ok := d.scenarios[m[2]]
			if !ok {
				d.t.Fatalf("%s:%d: doctest scenario %q: no project directive named it (as=%s)", d.doc.path, i+1, m[2], m[2])
			}
			d.root, d.dir, d.shownDir, d.tokens = sc.root, sc.dir, sc.shownDir, sc.tokens
		case "fixture":
			d.need(i)
			args := strings.Fields(m[2])
			if len(args) != 2 || !strings.HasPrefix(args[1], "/tmp/") {
				d.t.Fatalf("%s:%d: doctest fixture NAME /tmp/PATH", d.doc.path, i+1)
			}
			require.NoError(d.t, copyFixture(args[0], filepath.Join(d.root, args[1])))
		case "file":
			d.need(i)
			args := strings.Fields(m[2])
			if len(args) != 2 || strings.Contains(args[0], "..") {
				d.t.Fatalf("%s:%d: doctest file SRC DST, SRC a path of the repository", d.doc.path, i+1)
			}
			b, err := os.ReadFile(testkit.Path(args[0]))
			require.NoError(d.t, err)
			require.NoError(d.t, os.WriteFile(filepath.Join(d.dir, args[1]), b, 0o644))
		case "copy":
			d.need(i)
			root := d.t.TempDir()
			if out, err := exec.Command("cp", "-a", d.root+"/.", root).CombinedOutput(); err != nil {
				d.t.Fatalf("%s:%d: doctest copy: %v\n%s", d.doc.path, i+1, err, out)
			}
			rel, err := filepath.Rel(d.root, d.dir)
			require.NoError(d.t, err)
			d.scenarios[m[2]] = scenario{root: root, dir: filepath.Join(root, rel), shownDir: d.shownDir, tokens: d.tokens}
			d.roots = append(d.roots, root)
		case "let":
			d.need(i)
			tok, cmd, _ := strings.Cut(m[2], " ")
			out, code := d.exec(d.toReal(cmd))
			if code != 0 {
				d.fail(i, "doctest let %s: exit %d\n%s", m[2], code, out)
			}
			d.tokens.bind(tok, strings.TrimSpace(out))
			d.checkClash(i)
		default:
			d.fail(i, "unknown doctest directive %q", m[1])
		}
	}
}

func (d *docRun) fail(line int, format string, args ...any) {
	d.t.Helper()
	d.t.Errorf("%s:%d: %s", d.doc.path, line+1, fmt.Sprintf(format, args...))
}

func (d *docRun) need(line int) {
	if d.dir == "" {
		d.t.Fatalf("%s:%d: a runnable example before any <!-- doctest: project NAME --> directive", d.doc.path, line+1)
	}
}

func (d *docRun) project(line int, args []string) {
	if len(args) == 0 {
		d.t.Fatalf("%s:%d: doctest project needs a fixture name", d.doc.path, line+1)
	}
	root := d.t.TempDir()
	name, git, shown, label := args[0], false, "", ""
	for _, a := range args[1:] {
		switch {
		case a == "git":
			git = true
		case strings.HasPrefix(a, "as="):
			label = strings.TrimPrefix(a, "as=")
		case strings.HasPrefix(a, "dir="):
			shown = strings.TrimPrefix(a, "dir=")
		default:
			d.t.Fatalf("%s:%d: doctest project: unknown argument %q", d.doc.path, line+1, a)
		}
	}
	dir := filepath.Join(root, name)
	switch {
	case strings.HasPrefix(shown, "/tmp/"):
		dir = filepath.Join(root, shown)
	case shown != "":
		dir = filepath.Join(root, filepath.Base(shown))
	}
	require.NoError(d.t, os.MkdirAll(dir, 0o755))
	if name != "empty" {
		require.NoError(d.t, copyFixture(name, dir))
	}
	require.NoError(d.t, os.MkdirAll(filepath.Join(root, "tmp"), 0o755))
	d.root, d.dir, d.shownDir, d.tokens = root, dir, shown, newTokenMap(d.doc.renames)
	d.roots = append(d.roots, root)
	if label != "" {
		d.scenarios[label] = scenario{root: root, dir: dir, shownDir: shown, tokens: d.tokens}
	}
	if git {
		if out, code := d.exec("git init -q -b main && git add . && git commit -qm 'the fixture'"); code != 0 {
			d.t.Fatalf("%s:%d: git init: %s", d.doc.path, line+1, out)
		}
	}
}

// copyFixture copies fixtures/projects/NAME into dir: the embedded copy
// of the demo's project, the source tree's for the others.
func copyFixture(name, dir string) error {
	if name == "checkout" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		_, err := fixtures.CopyProject(name, dir)
		return err
	}
	return os.CopyFS(dir, os.DirFS(testkit.Path("fixtures", "projects", name)))
}

// exec runs one command line in the scenario's directory.
//
// The steps run on the doc's own clock (AWR_TEST_NOW, where awr's clock
// starts when the process starts), kept in a file of the scenario's root:
// it starts at the real time of the doc's first step and moves 100 ms a
// step, 100 ms each awr command (a bash function stands in for awr: longer
// than a command takes, so the events of two commands never share a
// millisecond), and by the length of each sleep (another function stands in
// for sleep: it moves the clock and does not wait, since awr reads the
// doc's clock; a hidden step that waits on a process, an agent in tmux,
// polls with `command sleep`). So what an example shows does not
// depend on how fast the machine runs it: a lease renews on a holder's
// write once its expiry would move by 1% of the lease (36 s of an hour),
// which the steps of a doc on a loaded machine can take, but the doc's
// clock gets there only through the sleeps the doc shows or hundreds of
// commands. It runs ahead of the real clock by at most a few minutes over
// a doc (verify accepts a day). Processes awr starts (agents in tmux)
// inherit the start time of the step that started them.
func (d *docRun) exec(cmd string) (string, int) {
	if d.clock == 0 {
		d.clock = time.Now().UnixMilli()
	}
	d.clock += 100
	clockFile := filepath.Join(d.root, ".doc-clock")
	if err := os.WriteFile(clockFile, []byte(strconv.FormatInt(d.clock, 10)), 0o644); err != nil {
		return err.Error(), -1
	}
	defer func() {
		if b, err := os.ReadFile(clockFile); err == nil {
			if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && v > d.clock {
				d.clock = v
			}
		}
	}()
	prelude := "set -o pipefail\n" +
		`awr() { local t; t=$(( $(< "$AWR_DOC_CLOCK") + 100 )); echo "$t" > "$AWR_DOC_CLOCK"; AWR_TEST_NOW=$t "$AWR_DOC_BIN" "$@"; }` + "\n" +
		`sleep() { awk -v s="$1" '{ printf "%.0f\n", $1 + s * 1000 }' "$AWR_DOC_CLOCK" > "$AWR_DOC_CLOCK.new" && mv "$AWR_DOC_CLOCK.new" "$AWR_DOC_CLOCK"; }` + "\n"
	c := exec.Command("bash", "-c", prelude+cmd)
	c.Dir = d.dir
	home := filepath.Join(d.root, "tmp", "home")
	_ = os.MkdirAll(home, 0o755)
	// Rig examples run their agents on a private tmux server, gone when
	// the test ends.
	sum := sha256.Sum256([]byte(d.root))
	socket := "awr-doc-" + hex.EncodeToString(sum[:6])
	if _, ok := d.sockets[socket]; !ok {
		d.sockets[socket] = true
		d.t.Cleanup(func() { _ = exec.Command("tmux", "-L", socket, "kill-server").Run() })
	}
	env := []string{"TZ=UTC", "LANG=C", "COLUMNS=80", "NO_COLOR=1", "HOME=" + home, "AWR_TIMEOUT=60s",
		"AWR_TMUX_SOCKET=" + socket, "GORACE=atexit_sleep_ms=0",
		"GIT_AUTHOR_NAME=doc", "GIT_AUTHOR_EMAIL=doc@example.com", "GIT_COMMITTER_NAME=doc", "GIT_COMMITTER_EMAIL=doc@example.com",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH":
			env = append(env, "PATH="+d.bin+string(os.PathListSeparator)+kv[len("PATH="):])
		case "GOCOVERDIR", "TMPDIR":
			env = append(env, kv)
		}
	}
	env = append(env, "AWR_DOC_CLOCK="+clockFile, "AWR_DOC_BIN="+filepath.Join(d.bin, "awr"))
	c.Env = env
	var buf bytes.Buffer
	c.Stdout, c.Stderr = &buf, &buf
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		return err.Error(), -1
	}
	return buf.String(), code
}

var heredoc = regexp.MustCompile(`<<-?'?(\w+)'?`)

// block runs the commands of one runnable block; whole says the block is
// one command, its first line, and all the rest its output (an output
// whose own lines start with "$ ").
func (d *docRun) block(idx []int, whole bool) {
	d.need(idx[0])
	d.ran++
	for k := 0; k < len(idx); {
		i := idx[k]
		line := d.doc.lines[i]
		if !strings.HasPrefix(line, "$ ") {
			d.fail(i, "a runnable block must start each command with \"$ \": %q", line)
			return
		}
		cmd := strings.TrimPrefix(line, "$ ")
		k++
		if m := heredoc.FindStringSubmatch(cmd); m != nil {
			for k < len(idx) {
				l := d.doc.lines[idx[k]]
				cmd += "\n" + l
				k++
				if l == m[1] {
					break
				}
			}
		}
		from := k
		for k < len(idx) && (whole || !strings.HasPrefix(d.doc.lines[idx[k]], "$ ")) {
			k++
		}
		var want []string
		for _, j := range idx[from:k] {
			want = append(want, d.doc.lines[j])
		}
		d.step(i, cmd, want, idx, from, k)
	}
}

var sqliteError = regexp.MustCompile(`^Error: .*\((\d+)\)$`)

var awrError = regexp.MustCompile(`^(awr: .*\((\w+)\)|\{"code":"(\w+)")`)

func (d *docRun) checkClash(line int) {
	for _, tok := range d.tokens.clash {
		d.fail(line, "%s stands for two different real ids or hashes in this doc (in two scenarios?): show another one here", tok)
	}
	d.tokens.clash = nil
}

// toReal turns a command the doc shows into the one to run: bound ids
// and hashes the real ones, the shown directories the scenario's.
func (d *docRun) toReal(cmd string) string {
	real := shownTmp.ReplaceAllString(d.tokens.toReal(cmd), "${1}"+d.root+"/tmp/")
	if d.shownDir != "" && !strings.HasPrefix(d.shownDir, "/tmp/") {
		real = strings.ReplaceAll(real, d.shownDir, d.dir)
	}
	return real
}

// toShown turns what a command printed into what the doc shows.
func (d *docRun) toShown(out string) string {
	out = strings.ReplaceAll(out, d.bin+string(os.PathSeparator), "/tmp/bin/")
	if d.shownDir != "" && !strings.HasPrefix(d.shownDir, "/tmp/") {
		out = strings.ReplaceAll(out, d.dir, d.shownDir)
	}
	for _, root := range d.roots {
		out = strings.ReplaceAll(out, root+"/tmp/", "/tmp/")
	}
	return out
}

var (
	shownTmp = regexp.MustCompile(`(^|[\s='"<>(:])/tmp/`)
	// echoesCode is a command that prints the exit code of the one before.
	echoesCode = regexp.MustCompile(`; echo "?(exit )?\$\?"?$`)
	// awrCommand is a doc line that runs awr.
	awrCommand = regexp.MustCompile(`^\$ .*\bawr\b`)
)

func (d *docRun) step(line int, cmd string, want []string, idx []int, from, to int) {
	// An id the command names stands for one an earlier output showed, or
	// a let bound; any other is a stale id of an older run (unless the
	// command is shown failing on it).
	if !strings.Contains(strings.Join(want, "\n"), "(NotFound)") {
		for _, id := range ulid.FindAllString(cmd, -1) {
			if _, ok := d.tokens.shown[id]; !ok {
				d.fail(line, "%s in the command is shown by no output before it and bound by no let", id)
			}
		}
	}
	real := d.toReal(cmd)
	// Each step is its own shell, which takes over the shell variables the
	// steps before set in the scenario ("loops=(...)", then "${loops[@]}"),
	// and in which "$?" is the exit code of the step before.
	vars := filepath.Join(d.root, ".doctest-vars")
	out, code := d.exec(fmt.Sprintf(`source %[1]q 2>/dev/null
__doctest_base="$(compgen -v)"
(exit %[2]d)
%[3]s
__doctest_rc=$?
__doctest_new=$(comm -13 <(echo "$__doctest_base" | sort) <(compgen -v | sort) | grep -v '^__doctest_')
[ -z "$__doctest_new" ] || declare -p $__doctest_new >>%[1]q 2>/dev/null
exit $__doctest_rc`, vars, d.lastCode, real))
	d.lastCode = code
	if os.Getenv("DOCTEST_TRACE") != "" {
		d.t.Logf("%s:%d: $ %s\n(exit %d)\n%s", d.doc.path, line+1, real, code, out)
	}
	out = d.toShown(out)
	got := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if strings.TrimRight(out, "\n") == "" {
		got = nil
	}
	for len(want) > 0 && strings.TrimSpace(want[len(want)-1]) == "" {
		want = want[:len(want)-1]
	}
	wantCode := 0
	if echoesCode.MatchString(cmd) {
		// The shown output says how the awr command exited.
		wantCode = -2
	}
	for _, l := range want {
		if wantCode == -2 {
			break
		}
		if m := sqliteError.FindStringSubmatch(l); m != nil {
			// sqlite3 exits with the error's code
			wantCode, _ = strconv.Atoi(m[1])
		}
		if m := awrError.FindStringSubmatch(l); m != nil {
			wantCode = 1
			if m[2] == "Usage" || m[3] == "Usage" {
				wantCode = 2
			}
		}
	}
	d.tokens.pair(strings.Join(want, "\n"), strings.Join(got, "\n"))
	d.checkClash(line)
	if !matchLines(d.tokens.normalize(want, false), d.tokens.normalize(got, true)) {
		d.fail(line, "$ %s\nshown:\n%s\nprinted:\n%s", cmd, strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
	if wantCode == -2 {
		wantCode = 0
	}
	if code != wantCode {
		d.fail(line, "$ %s: exit %d, want %d (the shown output decides: an awr error exits 1, 2 for Usage)\n%s", cmd, code, wantCode, out)
	}
	// The shown lines are consecutive: the block's lines from idx[from].
	start := idx[len(idx)-1] + 1
	if from < len(idx) {
		start = idx[from]
	}
	_ = to
	d.edits = append(d.edits, docEdit{from: start, to: start + len(want), out: keepEllipsis(want, got)})
}

// keepEllipsis returns got for a doc that showed it whole; one that elided
// lines with "…" keeps its shown lines.
func keepEllipsis(want, got []string) []string {
	for _, l := range want {
		if strings.TrimSpace(l) == "…" {
			return want
		}
	}
	return got
}

// matchLines compares normalised lines; a "…" line in want matches any
// run of lines.
func matchLines(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if strings.TrimSpace(want[0]) == "…" {
		for k := 0; k <= len(got); k++ {
			if matchLines(want[1:], got[k:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && want[0] == got[0] && matchLines(want[1:], got[1:])
}

// rewritten is the doc with the outputs of edits (from every chain)
// and the ids and hashes of every scenario written in.
func (f *docFile) rewritten(edits []docEdit) string {
	slices.SortFunc(edits, func(a, b docEdit) int { return a.from - b.from })
	var out []string
	pos := 0
	for _, e := range edits {
		out = append(out, f.lines[pos:e.from]...)
		out = append(out, e.out...)
		pos = e.to
	}
	out = append(out, f.lines[pos:]...)
	text := strings.Join(out, "\n")
	return renameAll(text, f.renames.m)
}

// tokenMap pairs the ids, hashes and commits a doc shows with those a run
// prints, in order of appearance, per kind.
type tokenMap struct {
	shown, real map[string]string // token -> placeholder
	toShown     map[string]string // placeholder -> shown token
	toRealTok   map[string]string // placeholder -> real token
	n           map[string]int
	// renames collects shown -> real over every scenario of the doc.
	renames *renames
	// clash lists the shown tokens bound to two real ones.
	clash []string
}

func newTokenMap(renames *renames) *tokenMap {
	return &tokenMap{shown: map[string]string{}, real: map[string]string{}, toShown: map[string]string{}, toRealTok: map[string]string{}, n: map[string]int{}, renames: renames}
}

var ulid = regexp.MustCompile(`\b[0-9A-HJKMNP-TV-Z]{26}\b`)

var tokenKinds = []struct {
	kind string
	re   *regexp.Regexp
}{
	// A conversation id (a UUID) first: its last group would pass for a
	// head.
	{"uuid", regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)},
	// The tmux session of a seat is named after its project's directory.
	{"tmux", regexp.MustCompile(`\bawr-[0-9a-f]{6}\b`)},
	{"id", ulid},
	{"hash", regexp.MustCompile(`\b[0-9a-f]{64}\b`)},
	{"commit", regexp.MustCompile(`\b[0-9a-f]{40}\b`)},
	{"head", regexp.MustCompile(`\b[0-9a-f]{12}\b`)},
	{"sum", regexp.MustCompile(`\b[0-9a-f]{16}\b`)},
	{"short", regexp.MustCompile(`\b[0-9a-f]{7}\b`)},
}

// pair binds, kind by kind, the tokens of shown and printed output that
// stand at the same place and are not bound yet.
func (m *tokenMap) pair(shown, printed string) {
	for _, k := range tokenKinds {
		a, b := k.re.FindAllString(shown, -1), k.re.FindAllString(printed, -1)
		// A kind's tokens are not read again as parts of another kind's.
		shown, printed = k.re.ReplaceAllString(shown, "<>"), k.re.ReplaceAllString(printed, "<>")
		for i := 0; i < len(a) && i < len(b); i++ {
			_, sa := m.shown[a[i]]
			_, sb := m.real[b[i]]
			if sa || sb {
				continue
			}
			m.n[k.kind]++
			ph := fmt.Sprintf("<%s%d>", k.kind, m.n[k.kind])
			m.shown[a[i]], m.real[b[i]] = ph, ph
			m.toShown[ph], m.toRealTok[ph] = a[i], b[i]
			m.rename(a[i], b[i])
		}
	}
}

// bind binds the shown token to the real one.
func (m *tokenMap) bind(shown, real string) {
	kind := "let"
	m.n[kind]++
	ph := fmt.Sprintf("<%s%d>", kind, m.n[kind])
	m.shown[shown], m.real[real] = ph, ph
	m.toShown[ph], m.toRealTok[ph] = shown, real
	m.rename(shown, real)
}

// rename records that the doc's token shown stands for real; -update-docs
// renames it over the whole doc, so one shown id must stand for one real
// id in every scenario.
func (m *tokenMap) rename(shown, real string) {
	m.renames.mu.Lock()
	defer m.renames.mu.Unlock()
	if r, ok := m.renames.m[shown]; ok && r != real {
		m.clash = append(m.clash, shown)
	}
	m.renames.m[shown] = real
}

// toReal replaces the bound shown tokens of a command with the real ones.
func (m *tokenMap) toReal(cmd string) string {
	for _, k := range tokenKinds {
		cmd = k.re.ReplaceAllStringFunc(cmd, func(s string) string {
			if ph, ok := m.shown[s]; ok {
				return m.toRealTok[ph]
			}
			return s
		})
	}
	return cmd
}

// renameAll replaces every shown token of text bound in any scenario with
// the real one.
func renameAll(text string, renames map[string]string) string {
	for _, k := range tokenKinds {
		text = k.re.ReplaceAllStringFunc(text, func(s string) string {
			if r, ok := renames[s]; ok {
				return r
			}
			return s
		})
	}
	return text
}

var (
	rfcTime          = regexp.MustCompile(`\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z\b`)
	msTime           = regexp.MustCompile(`\b1\d{12}\b`)
	evidenceDuration = regexp.MustCompile(`"duration_ms":\d+,`)
	tokenNums        = regexp.MustCompile(`("(?:token_estimate|required_tokens|tokens|token_budget_used|required|duration_ms)":)\d+|\b\d+ ms\b|\b\d+( of \d+)? (o200k_base )?tokens\b|\bto \d+ of \d+\b`)
	spaces           = regexp.MustCompile(`\s+`)
	// contextRead is the fake agent's report of its context file, whose
	// size follows the scenario's temporary path.
	contextRead = regexp.MustCompile(`\bread \d+ bytes of context\b`)
	// cut is the end of a value awr cut to fit its column.
	cut = regexp.MustCompile(`[0-9A-Za-z_:<>?-]*…`)
)

// normalize turns lines into comparable ones: bound tokens as
// placeholders, unbound ones by kind, times, token counts and spacing
// evened out.
func (m *tokenMap) normalize(lines []string, printed bool) []string {
	side := m.shown
	if printed {
		side = m.real
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		for _, k := range tokenKinds {
			l = k.re.ReplaceAllStringFunc(l, func(s string) string {
				if ph, ok := side[s]; ok {
					return ph
				}
				return "<" + k.kind + "?>"
			})
		}
		l = rfcTime.ReplaceAllString(l, "<time>")
		l = msTime.ReplaceAllString(l, "<ms>")
		// Evidence leaves duration_ms out when its run took under a
		// millisecond: shown and run compare with no duration_ms at all.
		l = evidenceDuration.ReplaceAllString(l, "")
		l = tokenNums.ReplaceAllStringFunc(l, func(s string) string {
			if strings.HasPrefix(s, `"`) {
				return s[:strings.Index(s, ":")+1] + "<n>"
			}
			if strings.HasPrefix(s, "to ") {
				return "to <n> of <n>"
			}
			if strings.HasSuffix(s, " ms") {
				return "<n> ms"
			}
			return "<n> tokens"
		})
		l = contextRead.ReplaceAllString(l, "read <n> bytes of context")
		l = cut.ReplaceAllString(l, "…")
		l = strings.TrimSpace(spaces.ReplaceAllString(l, " "))
		out = append(out, l)
	}
	return out
}
