package anchor

import (
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/replay"
	"zombiezen.com/go/sqlite"
)

// NotAnchored is the verdict of a verification that passed without an
// anchor: what it proves, what it cannot, and the command that would make
// it prove more.
const NotAnchored = "chain intact, not anchored: a rewritten and re-hashed history would also pass; run `awr anchor`"

// VerdictOf is the verdict of a passed verification that checked n
// anchors: "verified against N anchor(s)" only when there were some.
func VerdictOf(n int) string {
	switch n {
	case 0:
		return NotAnchored
	case 1:
		return "chain intact, verified against 1 anchor"
	}
	return fmt.Sprintf("chain intact, verified against %d anchors", n)
}

// Check is what `awr verify --anchors` (and `awr import
// --anchors`) found.
type Check struct {
	OK bool `json:"ok"`
	// Source is the anchor file, or git:REPOSITORY refs/notes/awr.
	Source string `json:"source"`
	// ProjectID is the project the log is at its head (a fork's own id
	// after its project_forked).
	ProjectID string `json:"project_id"`
	// Checked counts the anchors that were checked: those of this
	// project, and those of the project it was forked from that lie before
	// the fork.
	Checked int `json:"checked"`
	// Own counts the anchors of ProjectID among them; a check needs one.
	Own int `json:"own"`
	// Latest is the anchor with the highest seq that holds.
	Latest *Anchor `json:"latest,omitempty"`
	// Ignored are the anchors set aside: of other projects, of the
	// origin's history after this log forked from it, of a fork's line in
	// the legacy format (fork=HASH).
	Ignored []Anchor `json:"ignored"`
	// Malformed names the lines (where) that open like an anchor but do
	// not parse.
	Malformed []string `json:"malformed,omitempty"`
	// Broken is the first anchor, in seq order, that the log no longer
	// holds.
	Broken *Broken `json:"broken,omitempty"`
	// PastFork is the first anchor, in seq order, of a project this log
	// was before a fork that lies after the fork (set aside), and ForkSeq
	// the seq of that fork: with no anchor of the project itself, the
	// fork is all that stands between the log and that anchor.
	PastFork *Anchor `json:"past_fork,omitempty"`
	ForkSeq  int64   `json:"fork_seq,omitempty"`
}

// Broken is an anchor the log no longer holds: the event at its seq
// has another hash (FoundHash), or the log ends before its seq.
type Broken struct {
	ProjectID    string `json:"project_id"`
	Seq          int64  `json:"seq"`
	AnchoredHash string `json:"anchored_hash"`
	FoundHash    string `json:"found_hash,omitempty"`
	At           string `json:"at"`
	Where        string `json:"where"`
	Problem      string `json:"problem"`
}

// HeadCheck is what `awr verify --expect-head` found.
type HeadCheck struct {
	OK       bool   `json:"ok"`
	Expected string `json:"expected"`
	HeadSeq  int64  `json:"head_seq"`
	HeadHash string `json:"head_hash"`
	// FoundAt is the seq whose event has the expected hash when it is
	// not the head (events were appended after it); 0 when none has.
	FoundAt int64 `json:"found_at,omitempty"`
}

func CheckHash(flag, h string) error {
	if b, err := hex.DecodeString(h); err != nil || len(b) != events.HashSize || strings.ToLower(h) != h {
		return fault.New(fault.InvalidInput, "verify: %s %q is not an event hash (64 lowercase hex digits)", flag, h).With("flag", flag).
			WithHint("awr status --json")
	}
	return nil
}

// HashAt returns the hex hash of the event at seq on conn, "" when there
// is none.
func HashAt(conn *sqlite.Conn, seq int64) (string, error) {
	var h string
	err := events.ScanEvents(conn, seq, seq, func(e *events.Event) error {
		h = hex.EncodeToString(e.Hash)
		return nil
	})
	return h, err
}

// Witnesses are the checks of what lies outside the log that `awr
// verify` asks for: the replica's recorded origin (always), the anchors
// read from Source when Anchors, and the expected head when ExpectHead is
// set. SourceArg is how a hint names the anchors (a file, or git).
type Witnesses struct {
	Anchors   bool
	Source    string
	List      []Anchor
	Malformed []string
	SourceArg string
	// ExpectHead is the hash the head must have ("" for no check).
	ExpectHead string
}

// Verdict is what the witnesses say: one check each, the anchors' and
// the expected head's findings, and the first refusal (VerifyFailed) when
// one does not hold.
type Verdict struct {
	Checks     []replay.Check
	Anchors    *Check
	ExpectHead *HeadCheck
	Failure    *fault.Error
}

// Verify checks the witnesses against the log snapshot r.
func (w Witnesses) Verify(r *events.Reader) (*Verdict, error) {
	v := &Verdict{}
	fail := func(e *fault.Error) {
		if v.Failure == nil {
			v.Failure = e
		}
	}
	head, err := Head(r)
	if err != nil {
		return nil, err
	}
	if o, err := events.ReadOrigin(r.Conn); err != nil {
		return nil, err
	} else if o != nil {
		found, err := HashAt(r.Conn, o.HeadSeq)
		if err != nil {
			return nil, err
		}
		c := replay.Check{Name: "replica_origin", OK: found == o.HeadHash,
			Detail: fmt.Sprintf("replica of %s: seq %d has the hash recorded at import (%.12s)", o.ProjectID, o.HeadSeq, o.HeadHash)}
		if !c.OK {
			c.Detail = fmt.Sprintf("replica of %s: seq %d was imported with hash %.12s, the log now has %s", o.ProjectID, o.HeadSeq, o.HeadHash, orNone(found))
			fail(fault.New(fault.VerifyFailed, "verify: seq %d: the origin's head recorded at import has hash %s, the log now has %s: the copy was rewritten after its import", o.HeadSeq, o.HeadHash, orNone(found)).
				With("seq", o.HeadSeq).With("anchored_hash", o.HeadHash).With("found_hash", found).WithHint("awr import EXPORT.jsonl --project NEW_DIR"))
		}
		v.Checks = append(v.Checks, c)
	}
	if w.Anchors {
		ac, err := Judge(r.Conn, r.Head, w.Source, w.List, w.Malformed)
		if err != nil {
			return nil, err
		}
		if e := ac.Failure("verify", w.SourceArg); e != nil {
			fail(e)
		}
		v.Anchors = ac
		v.Checks = append(v.Checks, replay.Check{Name: "anchors", OK: ac.OK, Detail: ac.Detail()})
	}
	if w.ExpectHead != "" {
		hc, c, e, err := expectHead(r, head.Hash, w.ExpectHead)
		if err != nil {
			return nil, err
		}
		if e != nil {
			fail(e)
		}
		v.ExpectHead = hc
		v.Checks = append(v.Checks, c)
	}
	return v, nil
}

// expectHead checks that the head of r has the hash want (the head's is
// hash); when it does not, it finds which seq has it, if any.
func expectHead(r *events.Reader, hash, want string) (*HeadCheck, replay.Check, *fault.Error, error) {
	hc := &HeadCheck{Expected: want, HeadSeq: r.Head, HeadHash: hash, OK: hash == want}
	c := replay.Check{Name: "expect_head", OK: hc.OK, Detail: fmt.Sprintf("the head (seq %d) has hash %.12s", r.Head, hash)}
	if hc.OK {
		return hc, c, nil, nil
	}
	if err := events.ScanEvents(r.Conn, 1, math.MaxInt64, func(e *events.Event) error {
		if hex.EncodeToString(e.Hash) == want {
			hc.FoundAt = e.Seq
		}
		return nil
	}); err != nil {
		return nil, c, nil, err
	}
	where := "no event of the log has it"
	if hc.FoundAt > 0 {
		where = fmt.Sprintf("it is the hash of seq %d: %d event(s) were appended after it", hc.FoundAt, r.Head-hc.FoundAt)
	}
	c.Detail = fmt.Sprintf("the head (seq %d) has hash %.12s, not %.12s; %s", r.Head, hash, want, where)
	e := fault.New(fault.VerifyFailed, "verify: --expect-head %s: the head (seq %d) has hash %s; %s", want, r.Head, hash, where).
		With("expected", want).With("head_seq", r.Head).With("head_hash", hash).With("found_at", hc.FoundAt)
	if hc.FoundAt > 0 {
		e.WithHint("awr log --since %d", hc.FoundAt)
	} else {
		e.WithHint("awr status --full")
	}
	return hc, c, e, nil
}

func orNone(h string) string {
	if h == "" {
		return "no event there"
	}
	return h
}

// Judge checks anchors against the log on conn (head its last seq)
// by the one rule of anchors: an anchor of a project the log is, or was
// before a fork, is checked against the log wherever its seq lies in that
// project's line of history, whatever the log or anything beside it says.
// The lines come from the events alone (events.Lineage): seq 1's
// project_initialized, then each valid project_forked under a new id; the
// origin recorded beside a replica (no hash covers it) decides nothing.
//
//   - An anchor of the project the log is at its head is always checked:
//     the event at its seq must have its hash, and a seq beyond the head
//     means the log lost anchored events (a replica is its origin's log
//     cut at the import: the origin's later anchors say so too).
//   - An anchor of a project the log was before a fork is checked up to
//     the fork, and set aside after it: those seqs are the origin's own
//     history after the copy was made.
//   - Anchors of any other project, and legacy lines of a fork that kept
//     its origin's id (fork=HASH), are set aside.
//
// The first anchor, in seq order, that the log does not hold is Broken.
func Judge(conn *sqlite.Conn, head int64, source string, anchors []Anchor, malformed []string) (*Check, error) {
	lineage, err := events.ReadLineage(conn)
	if err != nil {
		return nil, err
	}
	ac := &Check{OK: true, Source: source, ProjectID: lineage.Current(), Ignored: []Anchor{}, Malformed: malformed}
	var mine []Anchor
	for _, a := range anchors {
		_, to, ok := lineage.Span(a.ProjectID)
		switch {
		case !ok, a.Fork != "":
			ac.Ignored = append(ac.Ignored, a)
			continue
		case to > 0 && a.Seq > to:
			// The origin's own history after this log forked from it.
			ac.Ignored = append(ac.Ignored, a)
			if ac.PastFork == nil || a.Seq < ac.PastFork.Seq {
				past := a
				ac.PastFork, ac.ForkSeq = &past, to+1
			}
			continue
		}
		mine = append(mine, a)
	}
	sort.SliceStable(mine, func(i, j int) bool { return mine[i].Seq < mine[j].Seq })
	for _, a := range mine {
		ac.Checked++
		if a.ProjectID == ac.ProjectID {
			ac.Own++
		}
		if ac.Broken != nil {
			continue
		}
		found := ""
		if a.Seq <= head {
			if found, err = HashAt(conn, a.Seq); err != nil {
				return nil, err
			}
		}
		switch {
		case a.Seq > head:
			ac.Broken = &Broken{ProjectID: a.ProjectID, Seq: a.Seq, AnchoredHash: a.Hash, At: a.At, Where: a.Where,
				Problem: fmt.Sprintf("the anchor names seq %d but the log ends at seq %d: anchored events were removed", a.Seq, head)}
		case found != a.Hash:
			ac.Broken = &Broken{ProjectID: a.ProjectID, Seq: a.Seq, AnchoredHash: a.Hash, FoundHash: found, At: a.At, Where: a.Where,
				Problem: fmt.Sprintf("seq %d was anchored with hash %s, the log now has %s: the history was rewritten after the anchor", a.Seq, a.Hash, found)}
		default:
			latest := a
			ac.Latest = &latest
		}
	}
	ac.OK = ac.Broken == nil && len(malformed) == 0 && ac.Own > 0
	if ac.Broken != nil && ac.Broken.Seq > head {
		if o, err := events.ReadOrigin(conn); err == nil && o != nil {
			ac.Broken.Problem += fmt.Sprintf(" (this copy records an import at seq %d: a replica holds its origin's log only up to there; the record beside the log is not evidence)", o.HeadSeq)
		}
	}
	return ac, nil
}

// Detail is the anchors check's one-line account.
func (ac *Check) Detail() string {
	switch {
	case ac.Broken != nil:
		return fmt.Sprintf("anchor %s: %s", ac.Broken.Where, ac.Broken.Problem)
	case len(ac.Malformed) > 0:
		return fmt.Sprintf("%s: %d line(s) open like an anchor but do not parse (first %s)", ac.Source, len(ac.Malformed), ac.Malformed[0])
	case ac.Own == 0:
		return fmt.Sprintf("%s: no anchor of project %s%s", ac.Source, ac.ProjectID, ac.forkedNote())
	}
	d := fmt.Sprintf("%d anchor(s) of this project hold", ac.Checked)
	if ac.Own < ac.Checked {
		d = fmt.Sprintf("%d anchor(s) of this project and %d of the project it was forked from (up to the fork) hold", ac.Own, ac.Checked-ac.Own)
	}
	d += fmt.Sprintf(", the latest at seq %d (%s)", ac.Latest.Seq, ac.Latest.Where)
	if len(ac.Ignored) > 0 {
		d += fmt.Sprintf("; %d of other projects or lines of history ignored", len(ac.Ignored))
	}
	return d
}

// Failure is the VerifyFailed refusal of op for a check that does not
// hold (nil when it holds): the first broken anchor (its seq, both hashes,
// where it was read), a line that is not an anchor, or no anchor of this
// project. arg is how the command named the anchors (a file, or git); a
// rewrite's hint restores from an export checked against them.
func (ac *Check) Failure(op, arg string) *fault.Error {
	tail := ""
	if op == "import" {
		tail = "; nothing was imported"
	}
	switch {
	case ac.Broken != nil:
		b := ac.Broken
		return fault.New(fault.VerifyFailed, "%s: anchor %s (project %s, seq %d, at %s): %s%s", op, b.Where, b.ProjectID, b.Seq, b.At, b.Problem, tail).
			With("seq", b.Seq).With("first_bad_seq", b.Seq).With("anchored_hash", b.AnchoredHash).With("found_hash", b.FoundHash).
			With("where", b.Where).With("project_id", b.ProjectID).With("anchor", Anchor{ProjectID: b.ProjectID, Seq: b.Seq, Hash: b.AnchoredHash, At: b.At, Where: b.Where}.Line()).
			WithHint("awr import EXPORT.jsonl --project NEW_DIR --anchors %s", arg)
	case len(ac.Malformed) > 0:
		return fault.New(fault.VerifyFailed, "%s: anchor %s is not an anchor line (%s project=ID seq=N hash=HEX at=TIME)%s", op, ac.Malformed[0], tag, tail).
			With("where", ac.Malformed[0]).WithHint("awr anchor")
	case ac.Own == 0:
		hint := "awr anchor"
		if arg != "git" {
			hint = "awr anchor --to " + arg
		}
		e := fault.New(fault.VerifyFailed, "%s: %s holds no anchor of project %s%s%s", op, ac.Source, ac.ProjectID, ac.forkedNote(), tail).
			With("source", ac.Source).With("project_id", ac.ProjectID).WithHint("%s", hint)
		if a := ac.PastFork; a != nil {
			e = fault.New(fault.VerifyFailed, "%s: %s holds no anchor of project %s, and project %s's anchor %s at seq %d lies after the fork this log claims at seq %d: unless the log was forked there, it was rewritten%s", op, ac.Source, ac.ProjectID, a.ProjectID, a.Where, a.Seq, ac.ForkSeq, tail).
				With("source", ac.Source).With("project_id", ac.ProjectID).With("seq", ac.ForkSeq).With("where", a.Where).With("anchor", a.Line()).
				WithHint("%s", hint)
		}
		return e
	}
	return nil
}

// forkedNote says, for a check with no anchor of the project itself, what
// else was read: anchors of the project it was forked from (which hold,
// but vouch only for the history before the fork) and those set aside.
func (ac *Check) forkedNote() string {
	if ac.Checked > 0 {
		return fmt.Sprintf(" (%d anchor(s) of the project it was forked from hold, up to the fork; %d ignored)", ac.Checked, len(ac.Ignored))
	}
	return fmt.Sprintf(" (%d of other projects or lines of history ignored)", len(ac.Ignored))
}
