package anchor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/awr-dev/awr/internal/lazyre"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/pathcheck"
)

// An anchor is the head of a project's log (project id, seq, hash, time)
// recorded outside the database, where a rewrite of the database cannot
// reach it: a git note on the project's repository or a line in a file
// the user keeps elsewhere. Every anchor is one line of text:
//
//	awr-anchor v1 project=ID seq=N hash=HEX at=RFC3339
//
// `awr verify --anchors` reads them back and checks that the event at each
// anchored seq still has the anchored hash.

// NotesRef is the git notes ref anchors are recorded under.
const NotesRef = "refs/notes/awr"

// tag opens every anchor line; it versions the format.
const tag = "awr-anchor v1"

var anchorLine = lazyre.New(`^awr-anchor v1 project=(\S+) seq=([0-9]+) hash=([0-9a-f]{64}) at=(\S+)(?: fork=([0-9a-f]{64}))?$`)

// Anchor is one recorded anchor.
type Anchor struct {
	ProjectID string `json:"project_id"`
	Seq       int64  `json:"seq"`
	Hash      string `json:"hash"`
	At        string `json:"at"`
	// Fork is, on a line an older awr wrote, the hash of the
	// project_forked event of a fork that kept its origin's project id. A
	// fork now has an id of its own, and awr writes no fork field: such a
	// line is read, and set aside.
	Fork string `json:"fork,omitempty"`
	// Where is where the anchor was read from: FILE:LINE, or
	// git:COMMIT:LINE for a line of the note on COMMIT.
	Where string `json:"where,omitempty"`
}

// Line returns a's line in the anchor format.
func (a Anchor) Line() string {
	line := fmt.Sprintf("%s project=%s seq=%d hash=%s at=%s", tag, a.ProjectID, a.Seq, a.Hash, a.At)
	if a.Fork != "" {
		line += " fork=" + a.Fork
	}
	return line
}

// Parse reads the anchor lines of text, where names the source
// (a line's where is where:N). Blank lines and lines that are not anchors
// (not opening with "awr-anchor ") are skipped; a line that opens like an
// anchor but does not parse is returned in bad.
func Parse(text []byte, where string) (out []Anchor, bad []string) {
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "awr-anchor ") {
			continue
		}
		m := anchorLine.FindStringSubmatch(line)
		seq, err := strconv.ParseInt(valueOr(m, 2), 10, 64)
		if m == nil || err != nil || seq < 1 {
			bad = append(bad, fmt.Sprintf("%s:%d", where, n))
			continue
		}
		out = append(out, Anchor{ProjectID: m[1], Seq: seq, Hash: m[3], At: m[4], Fork: m[5], Where: fmt.Sprintf("%s:%d", where, n)})
	}
	return out, bad
}

func valueOr(m []string, i int) string {
	if i < len(m) {
		return m[i]
	}
	return ""
}

// HeadInfo is the head of a log: the project id of its seq 1 and the
// hash of its last event.
type HeadInfo struct {
	ProjectID string
	Hash      string
}

// Head returns the project id (from project_initialized) and the
// head's hash of the snapshot r.
func Head(r *events.Reader) (HeadInfo, error) {
	var h HeadInfo
	err := events.ScanEvents(r.Conn, 1, 1, func(e *events.Event) error {
		if pi, ok := decoded(e).(*events.ProjectInitialized); ok {
			h.ProjectID = pi.ProjectID
		}
		return nil
	})
	if err != nil {
		return h, err
	}
	err = events.ScanEvents(r.Conn, r.Head, r.Head, func(e *events.Event) error {
		h.Hash = hex.EncodeToString(e.Hash)
		return nil
	})
	return h, err
}

// MaxFile bounds an anchors file: awr reads no more of one, and
// appends to none larger (at about 150 bytes a line, 100 000 anchors).
const MaxFile = 16 << 20

// Of returns the anchor of the head of the snapshot r, without its
// time: the project the log is at its head (a fork anchors under its own
// id), the head's seq and its hash.
// Errors: InvalidTransition (hint `awr init`) for a log with no event.
func Of(r *events.Reader) (Anchor, error) {
	if r.Head == 0 {
		return Anchor{}, fault.New(fault.InvalidTransition, "anchor: the log has no event to anchor").WithHint("awr init")
	}
	h, err := Head(r)
	if err != nil {
		return Anchor{}, err
	}
	l, err := events.ReadLineage(r.Conn)
	if err != nil {
		return Anchor{}, err
	}
	return Anchor{ProjectID: l.Current(), Seq: r.Head, Hash: h.Hash}, nil
}

// AppendFile appends line to the file at path (created 0644 when
// missing) with O_APPEND, syncs it, and returns the line's number. The
// file is opened by pathcheck.Append: never through a symbolic link,
// never in .awr/, never a FIFO, a device or a file of several names.
func AppendFile(ctx context.Context, path, line string) (int, error) {
	f, err := pathcheck.Append(path, 0o644, false)
	if err != nil {
		if pathcheck.RuleOf(err) != "" {
			return 0, refused("anchor", "--to", err, "awr anchor --to anchors.txt")
		}
		return 0, fault.Wrap(fault.Storage, err, "anchor: open %s", path).With("path", path)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fault.Wrap(fault.Storage, err, "anchor: open %s", path).With("path", path)
	}
	if fi.Size() > MaxFile-int64(len(line))-2 {
		return 0, fault.New(fault.InvalidInput, "anchor: --to %s: holds %d bytes, the most an anchors file may hold is %d", path, fi.Size(), MaxFile).
			With("flag", "--to").With("path", path).With("rule", string(pathcheck.RuleTooLarge)).WithHint("awr anchor --to anchors-2.txt")
	}
	// A file whose last line has no newline (edited by hand) gets one
	// first, so the anchor is a line of its own.
	if fi.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, fi.Size()-1); err == nil && last[0] != '\n' {
			line = "\n" + line
		}
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		return 0, fault.Wrap(fault.Storage, err, "anchor: write %s", path).With("path", path)
	}
	if err := f.Sync(); err != nil {
		return 0, fault.Wrap(fault.Storage, err, "anchor: sync %s", path).With("path", path)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, fault.Wrap(fault.Storage, err, "anchor: read %s", path).With("path", path)
	}
	b, err := pathcheck.ReadAll(ctx, f, MaxFile, path)
	if err != nil {
		return 0, fault.Wrap(fault.Storage, err, "anchor: read %s", path).With("path", path)
	}
	if err := f.Close(); err != nil {
		return 0, fault.Wrap(fault.Storage, err, "anchor: write %s", path).With("path", path)
	}
	// The line just written is the last one holding it.
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i] == strings.TrimPrefix(line, "\n") {
			return i + 1, nil
		}
	}
	return len(lines), nil
}

// ReadFile reads the anchors of the file at path for op: a regular
// file of at most MaxFile bytes (pathcheck.ReadFile); the hint
// names path only when it lies in the project (root).
func ReadFile(ctx context.Context, op, root, path string) ([]Anchor, []string, error) {
	b, err := pathcheck.ReadFile(ctx, path, MaxFile)
	if err != nil {
		hint := "awr anchor --to " + pathcheck.Shown(root, path, "anchors.txt")
		if pathcheck.RuleOf(err) != "" {
			return nil, nil, refused(op, "--anchors", err, "awr anchor --to anchors.txt")
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, fault.New(fault.InvalidInput, "%s: --anchors %s cannot be read: %v", op, path, errors.Unwrap(err)).With("path", path).
			WithHint("%s", hint)
	}
	a, bad := Parse(b, path)
	return a, bad, nil
}

// refused is err from pathcheck as the error shown, with hint.
func refused(op, flag string, err error, hint string) *fault.Error {
	return pathcheck.Fault(op, flag, err).WithHint("%s", hint)
}

// decoded is e's payload, nil when it does not decode.
func decoded(e *events.Event) any {
	v, _ := events.Decode(e)
	return v
}
