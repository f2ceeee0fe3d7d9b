package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
	"unicode/utf8"

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

// TestTerminal_RealTTY runs awr ready --all on a real terminal (script(1)
// gives it a pseudo-terminal) 60 columns wide: every line fits, a hint is
// whole, states are coloured unless NO_COLOR or --color never; piped, the
// same command prints what it always did.
func TestTerminal_RealTTY(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script(1) not installed")
	}
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
}

// TestProgress_Generate: on a terminal, bench generate --events N draws
// its bar on stderr scaled to N (never to a fixed 50,000) and appends
// exactly N events.
func TestProgress_Generate(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script(1) not installed")
	}
	t.Parallel()
	awr := testkit.Program(t, testkit.AWR)
	dir := t.TempDir() + "/bp"
	out, err := exec.Command(awr, "bench", "project", dir, "--tasks", "30").CombinedOutput()
	require.NoError(t, err, string(out))
	cmd := exec.Command("script", "-qec", awr+" --project "+dir+" bench generate --events 5001", "/dev/null")
	cmd.Env = append(os.Environ(), "COLUMNS=120", "NO_COLOR=1")
	b, err := cmd.Output()
	require.NoError(t, err, string(b))
	got := string(b)
	require.Contains(t, got, "appended 5001 events")
	require.NotContains(t, got, "50000")
	if strings.Contains(got, "generating ") {
		require.Regexp(t, `generating [0-9,]+ events/s, \d+s left +\d+% .*\(\d+/5001\)`, got)
	}
}
