package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/awr-dev/awr/fixtures"
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
//
// A command whose shown output holds an awr error ("awr: ... (Code)" or
// {"code":...}) must exit 1, or 2 for Usage; any other must exit 0.
// Before comparing, ids (ULIDs), hashes and git commits are matched up in
// order of appearance (a doc id seen once stands for the real id at that
// place, in later commands too), and times, token counts and runs of
// spaces are normalised. -update-docs rewrites the shown output, and the
// ids and hashes after it, from the run.
func TestDocs(t *testing.T) {
	for _, name := range checkedDocs {
		t.Run(strings.TrimSuffix(name, ".md"), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("..", "..", "docs", name)
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			d := &docRun{t: t, path: path, lines: strings.Split(string(src), "\n")}
			d.run()
			require.NotZero(t, d.ran, "%s has no runnable block (mark one with <!-- doctest: run -->)", path)
			if *updateDocs {
				require.NoError(t, os.WriteFile(path, []byte(d.rewritten()), 0o644))
			}
		})
	}
}

type docRun struct {
	t     *testing.T
	path  string
	lines []string
	ran   int
	// scenario
	dir, shownDir string
	tokens        *tokenMap
	// edits are the output ranges to rewrite with -update-docs.
	edits []docEdit
	// renames maps, over the whole doc, a shown token to the real one.
	renames map[string]string
	failed  bool
}

type docEdit struct {
	from, to int // lines [from, to) of the doc
	out      []string
}

var directive = regexp.MustCompile(`^<!-- doctest: (\w+)\s*(.*?)\s*-->$`)

func (d *docRun) run() {
	d.renames = map[string]string{}
	inBlock, runBlock, whole := false, false, false
	var block []int
	for i := 0; i < len(d.lines); i++ {
		line := d.lines[i]
		if strings.HasPrefix(line, "```") {
			if inBlock {
				if runBlock {
					d.block(block, whole)
				}
				inBlock, runBlock, block = false, false, nil
				continue
			}
			inBlock = true
			prev := ""
			if i > 0 {
				prev = strings.TrimSpace(d.lines[i-1])
			}
			runBlock = prev == "<!-- doctest: run -->" || prev == "<!-- doctest: run whole -->"
			whole = prev == "<!-- doctest: run whole -->"
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
		switch m[1] {
		case "project":
			d.project(i, strings.Fields(m[2]))
		case "sh":
			d.need(i)
			if out, code := d.exec(m[2]); code != 0 {
				d.fail(i, "doctest sh %s: exit %d\n%s", m[2], code, out)
			}
		case "run":
		default:
			d.fail(i, "unknown doctest directive %q", m[1])
		}
	}
}

func (d *docRun) fail(line int, format string, args ...any) {
	d.t.Helper()
	d.failed = true
	d.t.Errorf("%s:%d: %s", d.path, line+1, fmt.Sprintf(format, args...))
}

func (d *docRun) need(line int) {
	if d.dir == "" {
		d.t.Fatalf("%s:%d: a runnable example before any <!-- doctest: project NAME --> directive", d.path, line+1)
	}
}

func (d *docRun) project(line int, args []string) {
	if len(args) == 0 {
		d.t.Fatalf("%s:%d: doctest project needs a fixture name", d.path, line+1)
	}
	root := d.t.TempDir()
	name, git, shown := args[0], false, ""
	for _, a := range args[1:] {
		switch {
		case a == "git":
			git = true
		case strings.HasPrefix(a, "dir="):
			shown = strings.TrimPrefix(a, "dir=")
		default:
			d.t.Fatalf("%s:%d: doctest project: unknown argument %q", d.path, line+1, a)
		}
	}
	dir := filepath.Join(root, name)
	if shown != "" {
		dir = filepath.Join(root, filepath.Base(shown))
	}
	if name == "empty" {
		require.NoError(d.t, os.MkdirAll(dir, 0o755))
	} else {
		_, err := fixtures.CopyProject(name, dir)
		require.NoError(d.t, err)
	}
	d.dir, d.shownDir, d.tokens = dir, shown, newTokenMap(d.renames)
	if git {
		if out, code := d.exec("git init -q -b main && git add . && git commit -qm 'the fixture'"); code != 0 {
			d.t.Fatalf("%s:%d: git init: %s", d.path, line+1, out)
		}
	}
}

// exec runs one command line in the scenario's directory.
func (d *docRun) exec(cmd string) (string, int) {
	c := exec.Command("bash", "-c", "set -o pipefail\n"+cmd)
	c.Dir = d.dir
	home := filepath.Join(filepath.Dir(d.dir), "home")
	_ = os.MkdirAll(home, 0o755)
	env := []string{"TZ=UTC", "LANG=C", "COLUMNS=80", "NO_COLOR=1", "HOME=" + home, "AWR_TIMEOUT=10s",
		"GIT_AUTHOR_NAME=doc", "GIT_AUTHOR_EMAIL=doc@example.com", "GIT_COMMITTER_NAME=doc", "GIT_COMMITTER_EMAIL=doc@example.com",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "GORACE", "GOCOVERDIR", "TMPDIR":
			env = append(env, kv)
		}
	}
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
		line := d.lines[i]
		if !strings.HasPrefix(line, "$ ") {
			d.fail(i, "a runnable block must start each command with \"$ \": %q", line)
			return
		}
		cmd := strings.TrimPrefix(line, "$ ")
		k++
		if m := heredoc.FindStringSubmatch(cmd); m != nil {
			for k < len(idx) {
				l := d.lines[idx[k]]
				cmd += "\n" + l
				k++
				if l == m[1] {
					break
				}
			}
		}
		from := k
		for k < len(idx) && (whole || !strings.HasPrefix(d.lines[idx[k]], "$ ")) {
			k++
		}
		var want []string
		for _, j := range idx[from:k] {
			want = append(want, d.lines[j])
		}
		d.step(i, cmd, want, idx, from, k)
	}
}

var awrError = regexp.MustCompile(`^(awr: .*\((\w+)\)|\{"code":"(\w+)")`)

func (d *docRun) step(line int, cmd string, want []string, idx []int, from, to int) {
	real := d.tokens.toReal(cmd)
	if d.shownDir != "" {
		real = strings.ReplaceAll(real, d.shownDir, d.dir)
	}
	out, code := d.exec(real)
	if os.Getenv("DOCTEST_TRACE") != "" {
		d.t.Logf("%s:%d: $ %s\n(exit %d)\n%s", d.path, line+1, real, code, out)
	}
	if d.shownDir != "" {
		out = strings.ReplaceAll(out, d.dir, d.shownDir)
	}
	got := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if strings.TrimRight(out, "\n") == "" {
		got = nil
	}
	for len(want) > 0 && strings.TrimSpace(want[len(want)-1]) == "" {
		want = want[:len(want)-1]
	}
	wantCode := 0
	for _, l := range want {
		if m := awrError.FindStringSubmatch(l); m != nil {
			wantCode = 1
			if m[2] == "Usage" || m[3] == "Usage" {
				wantCode = 2
			}
		}
	}
	d.tokens.pair(strings.Join(want, "\n"), strings.Join(got, "\n"))
	if !matchLines(d.tokens.normalize(want, false), d.tokens.normalize(got, true)) {
		d.fail(line, "$ %s\nshown:\n%s\nprinted:\n%s", cmd, strings.Join(want, "\n"), strings.Join(got, "\n"))
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

func (d *docRun) rewritten() string {
	var out []string
	pos := 0
	for _, e := range d.edits {
		out = append(out, d.lines[pos:e.from]...)
		out = append(out, e.out...)
		pos = e.to
	}
	out = append(out, d.lines[pos:]...)
	text := strings.Join(out, "\n")
	return renameAll(text, d.renames)
}

// tokenMap pairs the ids, hashes and commits a doc shows with those a run
// prints, in order of appearance, per kind.
type tokenMap struct {
	shown, real map[string]string // token -> placeholder
	toShown     map[string]string // placeholder -> shown token
	toRealTok   map[string]string // placeholder -> real token
	n           map[string]int
	// renames collects shown -> real over every scenario of the doc.
	renames map[string]string
}

func newTokenMap(renames map[string]string) *tokenMap {
	return &tokenMap{shown: map[string]string{}, real: map[string]string{}, toShown: map[string]string{}, toRealTok: map[string]string{}, n: map[string]int{}, renames: renames}
}

var tokenKinds = []struct {
	kind string
	re   *regexp.Regexp
}{
	{"id", regexp.MustCompile(`\b[0-9A-HJKMNP-TV-Z]{26}\b`)},
	{"hash", regexp.MustCompile(`\b[0-9a-f]{64}\b`)},
	{"commit", regexp.MustCompile(`\b[0-9a-f]{40}\b`)},
	{"head", regexp.MustCompile(`\b[0-9a-f]{12}\b`)},
	{"short", regexp.MustCompile(`\b[0-9a-f]{7}\b`)},
}

// pair binds, kind by kind, the tokens of shown and printed output that
// stand at the same place and are not bound yet.
func (m *tokenMap) pair(shown, printed string) {
	for _, k := range tokenKinds {
		a, b := k.re.FindAllString(shown, -1), k.re.FindAllString(printed, -1)
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
			m.renames[a[i]] = b[i]
		}
	}
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
	rfcTime   = regexp.MustCompile(`\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z\b`)
	msTime    = regexp.MustCompile(`\b1\d{12}\b`)
	tokenNums = regexp.MustCompile(`("(?:token_estimate|required_tokens|tokens|token_budget_used)":)\d+|\b\d+( of \d+)? (o200k_base )?tokens\b`)
	spaces    = regexp.MustCompile(`\s+`)
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
		l = tokenNums.ReplaceAllStringFunc(l, func(s string) string {
			if strings.HasPrefix(s, `"`) {
				return s[:strings.Index(s, ":")+1] + "<n>"
			}
			return "<n> tokens"
		})
		l = cut.ReplaceAllString(l, "…")
		l = strings.TrimSpace(spaces.ReplaceAllString(l, " "))
		out = append(out, l)
	}
	return out
}
