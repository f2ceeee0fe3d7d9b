package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/awr-dev/awr/internal/lazyre"
	"golang.org/x/term"
)

// terminal is how a text answer is shown: for a person on a terminal
// (tty), tables fit width unless wide, times read relative to now and
// states are coloured (color); anywhere else (a pipe, a file, a script)
// the answer is plain and stable, exactly as it always was.
type terminal struct {
	tty   bool
	wide  bool
	color bool
	width int
	now   time.Time
}

// terminalFor decides how stdout shows a text answer: colorFlag is
// --color (auto, always, never); NO_COLOR set to anything turns auto off,
// as does TERM=dumb; the width is $COLUMNS, else the terminal's, else 80.
func terminalFor(stdout io.Writer, colorFlag string, wide bool, now time.Time) terminal {
	t := terminal{wide: wide, now: now, width: 80}
	if f, ok := stdout.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		t.tty = true
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			t.width = w
		}
	}
	if c, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && c > 0 {
		t.width = c
	}
	switch colorFlag {
	case "always":
		t.color = true
	case "never":
	default:
		t.color = t.tty && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	}
	return t
}

// termBuffer is the buffer a text answer is written into: it carries the
// terminal, so that the tables written to it (newTable) can fit it.
type termBuffer struct {
	bytes.Buffer
	term terminal
}

// table is a tabwriter (cells end with \t, padding 2) that, for a
// terminal, makes the table fit: times relative, the widest column cut
// with … until every line fits the width (unless --wide), states
// coloured. Elsewhere it is tabwriter exactly.
type table struct {
	out  io.Writer
	term terminal
	buf  bytes.Buffer
}

// newTable returns the table writer for w (a *termBuffer or anything).
func newTable(w io.Writer) *table {
	t := &table{out: w}
	if tb, ok := w.(*termBuffer); ok {
		t.term = tb.term
	}
	return t
}

func (t *table) Write(p []byte) (int, error) { return t.buf.Write(p) }

// Flush lays the table out and writes it.
func (t *table) Flush() error {
	if !t.term.tty {
		tw := tabwriter.NewWriter(t.out, 0, 0, 2, ' ', 0)
		if _, err := tw.Write(t.buf.Bytes()); err != nil {
			return err
		}
		return tw.Flush()
	}
	lines := strings.Split(strings.TrimSuffix(t.buf.String(), "\n"), "\n")
	cells := make([][]string, len(lines))
	for i, l := range lines {
		cells[i] = strings.Split(t.term.relative(l), "\t")
	}
	out := layout(cells)
	for round := 0; !t.term.wide && round < 8; round++ {
		over := 0
		for _, l := range strings.Split(out, "\n") {
			over = max(over, utf8.RuneCountInString(l)-t.term.width)
		}
		if over <= 0 {
			break
		}
		col, w := widestColumn(cells)
		if col < 0 || w <= 4 {
			break
		}
		limit := max(4, w-over)
		for _, row := range cells {
			if col < len(row) && utf8.RuneCountInString(row[col]) > limit {
				row[col] = strings.TrimRight(string([]rune(row[col])[:limit-1]), " ") + "…"
			}
		}
		out = layout(cells)
	}
	_, err := io.WriteString(t.out, out)
	return err
}

// layout is tabwriter's layout of cells.
func layout(cells [][]string) string {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, row := range cells {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	return b.String()
}

// widestColumn returns the column whose longest cell is longest (the
// text after a line's last tab counts as a column), and that length.
func widestColumn(cells [][]string) (int, int) {
	col, width := -1, 0
	for _, row := range cells {
		for i, c := range row {
			if n := utf8.RuneCountInString(c); n > width {
				col, width = i, n
			}
		}
	}
	return col, width
}

// isoTime matches the UTC timestamps awr's text answers print.
var isoTime = lazyre.New(`\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z\b`)

// relative rewrites, for a terminal, every UTC timestamp of s relative to
// now ("3 min ago", "in 25 min"); elsewhere s is unchanged.
func (t terminal) relative(s string) string {
	if !t.tty || !strings.Contains(s, "Z") {
		return s
	}
	return isoTime.ReplaceAllStringFunc(s, func(ts string) string {
		at, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			return ts
		}
		return ago(t.now.Sub(at))
	})
}

// ago says a duration before now (negative: after) in words.
func ago(d time.Duration) string {
	future := d < 0
	if future {
		d = -d
	}
	var s string
	switch {
	case d < 5*time.Second:
		return "just now"
	case d < time.Minute:
		s = fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		s = fmt.Sprintf("%d min", int(d.Minutes()))
	case d < 48*time.Hour:
		s = fmt.Sprintf("%d h", int(d.Hours()))
	default:
		s = fmt.Sprintf("%d days", int(d.Hours()/24))
	}
	if future {
		return "in " + s
	}
	return s + " ago"
}

// fit cuts, for a terminal and without --wide, every line of s longer
// than the width to it, ending it with … (the last column of a line,
// where awr puts the longest text, is what is cut); a line that gives a
// command to run (next:, to accept:, run:) is never cut.
func (t terminal) fit(s string) string {
	if !t.tty || t.wide {
		return s
	}
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		nl := strings.HasSuffix(l, "\n")
		l = strings.TrimSuffix(l, "\n")
		if r := []rune(l); len(r) > t.width && !hintLine.MatchString(l) {
			l = strings.TrimRight(string(r[:t.width-1]), " ") + "…"
		}
		if nl {
			l += "\n"
		}
		lines[i] = l
	}
	return strings.Join(lines, "")
}

// stateWord matches the words that name a state in awr's text answers.
var stateWord = lazyre.New(`\b(fresh|running|held|active|verified|passed|yes|ok|stale|expired|lapsed|stopped|interrupted|recoverable|awaiting-decision|not_indexed|missing|failed|attention_required|blocked|FAILED)\b`)

// colors are the ANSI colours of the states: green for what is well,
// yellow for what needs a look, red for what is wrong.
var colors = map[string]string{
	"fresh": "32", "running": "32", "held": "32", "active": "32", "verified": "32", "passed": "32", "yes": "32", "ok": "32",
	"stale": "33", "expired": "33", "lapsed": "33", "stopped": "33", "interrupted": "33", "recoverable": "33", "awaiting-decision": "33", "not_indexed": "33",
	"missing": "31", "failed": "31", "attention_required": "31", "blocked": "31", "FAILED": "31",
}

// paint colours the state words of s when colour is on.
func (t terminal) paint(s string) string {
	if !t.color {
		return s
	}
	return stateWord.ReplaceAllStringFunc(s, func(w string) string {
		return "\x1b[" + colors[w] + "m" + w + "\x1b[0m"
	})
}
