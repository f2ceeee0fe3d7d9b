package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/awr-dev/awr/events/pgstore/pgtest"
	"github.com/awr-dev/awr/fixtures"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/stretchr/testify/require"
)

// tableRows are a table's lines as renderers write them.
const tableRows = "KEY\tTITLE\tSTATE\tNEXT\nA-1\tPersist the cart server-side in a table of its own\tstale\tAdd a carts table\nB-22\tShort\tfresh\tx\n"

// TestTable_Piped: off a terminal a table is tabwriter's, byte for byte.
func TestTable_Piped(t *testing.T) {
	var want bytes.Buffer
	tw := tabwriter.NewWriter(&want, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, tableRows)
	tw.Flush()
	got := &termBuffer{}
	tb := newTable(got)
	fmt.Fprint(tb, tableRows)
	require.NoError(t, tb.Flush())
	require.Equal(t, want.String(), got.String())
}

// TestTable_Fits: on a terminal the widest column is cut with … until
// every line fits; --wide keeps it whole.
func TestTable_Fits(t *testing.T) {
	got := &termBuffer{term: terminal{tty: true, width: 50}}
	tb := newTable(got)
	fmt.Fprint(tb, tableRows)
	require.NoError(t, tb.Flush())
	for _, l := range strings.Split(strings.TrimSuffix(got.String(), "\n"), "\n") {
		require.LessOrEqual(t, utf8.RuneCountInString(l), 50, "%q", l)
	}
	require.Contains(t, got.String(), "Persist the cart…")
	require.Contains(t, got.String(), "Add a carts table", "only the widest column is cut")

	wide := &termBuffer{term: terminal{tty: true, wide: true, width: 50}}
	tb = newTable(wide)
	fmt.Fprint(tb, tableRows)
	require.NoError(t, tb.Flush())
	require.Contains(t, wide.String(), "Persist the cart server-side in a table of its own")
}

// TestTerminal_Lines: long lines are cut, a command to run never; times
// read relative; colour only when asked.
func TestTerminal_Lines(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	tt := terminal{tty: true, width: 20, now: now}
	require.Equal(t, "0123456789012345678…\nnext: awr session start --work A-1\n", tt.fit("0123456789012345678901234\nnext: awr session start --work A-1\n"))
	require.Equal(t, "expires in 30 min, last 3 min ago", tt.relative("expires 2026-12-01T12:30:00Z, last 2026-12-01T11:57:00Z"))
	require.Equal(t, "expires 2026-12-01T12:30:00Z", terminal{now: now}.relative("expires 2026-12-01T12:30:00Z"), "piped: ISO 8601 UTC")
	require.Equal(t, "state stale", tt.paint("state stale"))
	require.Equal(t, "state \x1b[33mstale\x1b[0m", terminal{color: true}.paint("state stale"))
	require.Equal(t, "2 days ago", ago(49*time.Hour))
	require.Equal(t, "just now", ago(time.Second))
}

// needTTY skips a test of awr on a pseudo-terminal where it cannot run:
// in a test form other than the plain one, or without script(1), which
// gives the terminal.
func needTTY(t *testing.T) {
	t.Helper()
	testkit.PlainOnly(t, "awr processes on a pseudo-terminal")
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script(1) not installed")
	}
}

// TestTerminal_RealTTY runs awr ready --all on a real terminal (script(1)
// gives it a pseudo-terminal) 60 columns wide: every line fits, a hint is
// whole, states are coloured unless NO_COLOR or --color never; piped, the
// same command prints what it always did.
func TestTerminal_RealTTY(t *testing.T) {
	needTTY(t)
	t.Parallel()
	awr := testkit.Program(t, testkit.AWR)
	dir, err := fixtures.CopyProject("checkout", t.TempDir())
	require.NoError(t, err)
	out, err := exec.Command(awr, "--project", dir, "init", "--accept").CombinedOutput()
	require.NoError(t, err, string(out))
	tty := func(env []string, args ...string) string {
		cmd := exec.Command("script", "-qec", awr+" --project "+dir+" "+strings.Join(args, " "), "/dev/null")
		cmd.Env = append(append(os.Environ(), "COLUMNS=60", "TERM=xterm"), env...)
		out, err := cmd.Output()
		require.NoError(t, err, string(out))
		return strings.ReplaceAll(string(out), "\r\n", "\n")
	}
	got := tty([]string{"NO_COLOR="}, "ready", "--all")
	for _, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		if strings.HasPrefix(l, "next: ") {
			continue
		}
		require.LessOrEqual(t, utf8.RuneCountInString(stripANSI(l)), 60, "%q", l)
	}
	require.Contains(t, got, "…")
	require.Contains(t, got, "next: awr session start --project "+dir+" --work CART-1 --agent \"$USER\" --claim\n", "a hint is never cut")
	require.Contains(t, tty([]string{"NO_COLOR="}, "source", "list"), "\x1b[32mfresh\x1b[0m")
	require.NotContains(t, tty([]string{"NO_COLOR=1"}, "source", "list"), "\x1b[")
	require.NotContains(t, tty([]string{"NO_COLOR="}, "source", "list", "--color", "never"), "\x1b[")
	wide := tty(nil, "ready", "--all", "--wide", "--color", "never")
	require.Contains(t, wide, "Add a carts table and write the cart on every change")

	piped, err := exec.Command(awr, "--project", dir, "ready", "--all").Output()
	require.NoError(t, err)
	require.NotContains(t, string(piped), "…")
	require.NotContains(t, string(piped), "\x1b[")
	require.Contains(t, string(piped), "Add a carts table and write the cart on every change")
}

func stripANSI(s string) string {
	for {
		i := strings.Index(s, "\x1b[")
		if i < 0 {
			return s
		}
		j := strings.IndexByte(s[i:], 'm')
		if j < 0 {
			return s
		}
		s = s[:i] + s[i+j+1:]
	}
}

// TestProgress_RateETA: the rate and the time left are the whole job's.
func TestProgress_RateETA(t *testing.T) {
	require.Equal(t, "1,000 events/s, 9s left", rateETA(1000, 10000, time.Second))
	require.Equal(t, "12,345,678 events/s, 0s left", rateETA(12345678, 12345678, time.Second))
	require.Equal(t, "", rateETA(0, 10, time.Second))
	require.Equal(t, "2.5 MB/s, 3s left", bytesRateETA(2_500_000, 10_000_000, time.Second))
}

// TestProgress_LongCommands: on a real terminal (script(1) gives awr a
// pseudo-terminal), every long command draws its bar on stderr, scaled to
// the real total (bench generate --events N to N, never to a fixed 50,000,
// and appends exactly N; export, import, replay, verify and migrate to
// the log's head, counted before the job starts; source reindex to the
// bytes of the sources), with its rate and the time left. Piped, the same commands write nothing on stderr and the
// same bytes on stdout; with --json on a terminal, no bar either. A job
// that fails half-way clears its bar before the error.
// AWR_TEST_PROGRESS_AFTER=0 (a test build's hook) draws the bar from the
// first report, so that a fast machine, which finishes within the 300 ms
// a bar waits for, still shows it.
func TestProgress_LongCommands(t *testing.T) {
	needTTY(t)
	t.Parallel()
	awr := testkit.Program(t, testkit.AWR)
	tmp := t.TempDir()
	dir := tmp + "/bp"
	out, err := exec.Command(awr, "bench", "project", dir, "--tasks", "30").CombinedOutput()
	require.NoError(t, err, string(out))
	env := append(os.Environ(), "COLUMNS=120", "NO_COLOR=1", "AWR_TEST_PROGRESS_AFTER=0")
	tty := func(args string) string {
		t.Helper()
		cmd := exec.Command("script", "-qec", awr+" "+args, "/dev/null")
		cmd.Env = env
		b, err := cmd.Output()
		require.NoError(t, err, "%s: %s", args, b)
		return string(b)
	}
	piped := func(args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(awr, args...)
		cmd.Env = env
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		require.NoError(t, cmd.Run(), "%v: %s", args, e.String())
		return o.String(), e.String()
	}
	bar := func(desc string, total int64) string {
		return desc + ` [0-9,]+ events/s, \d+s left +\d+% .*\(\d+/` + strconv.FormatInt(total, 10) + `\)`
	}

	got := tty("--project " + dir + " bench generate --events 5001")
	require.Contains(t, got, "appended 5001 events")
	require.NotContains(t, got, "50000")
	require.Regexp(t, bar("generating", 5001), got)
	var st struct {
		ProjectRevision int64 `json:"project_revision"`
	}
	o, _ := piped("--project", dir, "status", "--json")
	require.NoError(t, json.Unmarshal([]byte(o), &st))
	head := st.ProjectRevision
	require.Greater(t, head, int64(5001))

	file := tmp + "/log.jsonl"
	type job struct{ args, desc string }
	// readers are the jobs that read the export into a new project in
	// target (made here), then replay, verify it.
	readers := func(target string) []job {
		require.NoError(t, os.Mkdir(target, 0o755))
		return []job{
			{"import " + file + " --project " + target, "importing"},
			{"--project " + target + " replay", "replaying"},
			{"--project " + target + " replay --verify", "replaying"},
			{"--project " + target + " verify", "verifying"},
		}
	}
	for _, c := range append([]job{{"--project " + dir + " export --output " + file, "exporting"}}, readers(tmp+"/imported")...) {
		require.Regexp(t, bar(c.desc, head), tty(c.args), c.args)
	}
	// With --json on a terminal: no bar.
	for _, c := range append([]job{{"--project " + dir + " export --force --output " + file, "exporting"}}, readers(tmp+"/json")...) {
		got := tty(c.args + " --json")
		require.NotContains(t, got, c.desc+" ", "%s --json: no bar", c.args)
		require.Contains(t, got, `"project_revision":`, c.args)
	}

	// Piped: no bar, and the answer of old.
	exported, stderr := piped("--project", dir, "export")
	require.Empty(t, stderr, "export, piped")
	written, err := os.ReadFile(file)
	require.NoError(t, err)
	require.True(t, string(written) == exported, "export: the same bytes on a terminal and piped")
	for _, c := range readers(tmp + "/again") {
		args := strings.Fields(c.args)
		o, e := piped(args...)
		require.Empty(t, e, "%v, piped: no bar", args)
		require.NotContains(t, o, "events/s", "%v, piped", args)
	}

	// A job that fails half-way clears its bar: the error starts a line
	// of its own.
	lines := strings.Split(strings.TrimSuffix(string(written), "\n"), "\n")
	lines[len(lines)-1] = strings.Replace(lines[len(lines)-1], `"actor":"`, `"actor":"x`, 1)
	bad := tmp + "/bad.jsonl"
	require.NoError(t, os.WriteFile(bad, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	cmd := exec.Command("script", "-qec", awr+" import "+bad+" --project "+tmp+"/bad", "/dev/null")
	cmd.Env = env
	b, err := cmd.Output()
	require.Error(t, err, "%s", b)
	require.Regexp(t, bar("importing", head), string(b))
	require.Regexp(t, "\r +\rawr: import: "+regexp.QuoteMeta(bad)+":"+strconv.FormatInt(head, 10)+": ", string(b))
	require.NoDirExists(t, tmp+"/bad", "a failed import removes the directory it made")

	if os.Getenv(pgtest.EnvURL) != "" {
		db := pgtest.NewDatabase(t)
		got := tty("--project " + dir + " migrate --to '" + db + "'")
		require.Contains(t, got, "migrated from sqlite to postgres")
		require.Regexp(t, bar("copying", head), got)
		got = tty("--project " + dir + " migrate --to sqlite")
		require.Contains(t, got, "migrated from postgres to sqlite")
		require.Regexp(t, bar("checking the log", head), got)
	}

	// A reindex (last: it appends) counts the bytes of the sources, stated
	// before any is read; piped or with --json, no bar.
	require.Regexp(t, `reading sources .*\|.*\| \( *0 B/[0-9.]+ [kM]B\)`, tty("--project "+dir+" source reindex --force"))
	require.NotContains(t, tty("--project "+dir+" source reindex --force --json"), "reading sources")
	o, e := piped("--project", dir, "source", "reindex", "--force")
	require.Empty(t, e, "source reindex, piped")
	require.Contains(t, o, "indexed")
}
