package project

import (
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fault"
	"github.com/awr-dev/awr/replay"
	"zombiezen.com/go/sqlite"
)

// AnchorCheck is what `awr verify --anchors` found.
type AnchorCheck struct {
	OK bool `json:"ok"`
	// Source is the anchor file, or git:REPOSITORY refs/notes/awr.
	Source string `json:"source"`
	// Checked counts the anchors of this project that were checked.
	Checked int `json:"checked"`
	// Latest is the anchor with the highest seq that holds.
	Latest *Anchor `json:"latest,omitempty"`
	// Ignored are anchors of other projects (another project id), of
	// another line of history (another fork, or the origin's events after
	// this copy was made).
	Ignored []Anchor `json:"ignored"`
	// Malformed names the lines (where) that open like an anchor but do
	// not parse.
	Malformed []string `json:"malformed,omitempty"`
	// Broken is the first anchor, in seq order, that the log no longer
	// holds.
	Broken *BrokenAnchor `json:"broken,omitempty"`
}

// BrokenAnchor is an anchor the log no longer holds: the event at its seq
// has another hash (FoundHash), or the log ends before its seq.
type BrokenAnchor struct {
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

func checkHashArg(flag, h string) error {
	if b, err := hex.DecodeString(h); err != nil || len(b) != events.HashSize || strings.ToLower(h) != h {
		return fault.New(fault.InvalidInput, "verify: %s %q is not an event hash (64 lowercase hex digits)", flag, h).With("flag", flag).
			WithHint("awr status --json")
	}
	return nil
}

// hashAt returns the hex hash of the event at seq on conn, "" when there
// is none.
func hashAt(conn *sqlite.Conn, seq int64) (string, error) {
	var h string
	err := events.ScanEvents(conn, seq, seq, func(e *events.Event) error {
		h = hex.EncodeToString(e.Hash)
		return nil
	})
	return h, err
}

// verifyWitnesses adds to res the checks of what lies outside the log:
// the replica's recorded origin, the anchors (req.Anchors) and the
// expected head (req.ExpectHead). A failure sets res.OK false and returns
// VerifyFailed.
func (p *Project) verifyWitnesses(ctx context.Context, st *events.Store, req VerifyRequest, res *VerifyResult) error {
	var anchors []Anchor
	var malformed []string
	source := ""
	if req.Anchors {
		var err error
		if req.AnchorsFile != "" {
			var path string
			if path, err = p.namedPath("verify", "--anchors", req.AnchorsFile, "awr verify --anchors"); err != nil {
				return err
			}
			source = path
			anchors, malformed, err = readAnchorFile(ctx, p.dir, path)
		} else {
			var g *anchorRepo
			if g, err = gitRepo(ctx, p.dir, "verify"); err == nil {
				source = "git:" + g.top + " " + AnchorNotesRef
				anchors, malformed, err = g.readNotes(ctx)
			}
		}
		if err != nil {
			return err
		}
	}
	var failure *fault.Error
	fail := func(e *fault.Error) {
		res.OK = false
		if failure == nil {
			failure = e
		}
	}
	err := st.Read(ctx, func(r *events.Reader) error {
		head, err := headEvent(r)
		if err != nil {
			return err
		}
		if o, err := events.ReadOrigin(r.Conn); err != nil {
			return err
		} else if o != nil {
			found, err := hashAt(r.Conn, o.HeadSeq)
			if err != nil {
				return err
			}
			c := replay.Check{Name: "replica_origin", OK: found == o.HeadHash,
				Detail: fmt.Sprintf("replica of %s: seq %d has the hash recorded at import (%.12s)", o.ProjectID, o.HeadSeq, o.HeadHash)}
			if !c.OK {
				c.Detail = fmt.Sprintf("replica of %s: seq %d was imported with hash %.12s, the log now has %s", o.ProjectID, o.HeadSeq, o.HeadHash, orNone(found))
				fail(fault.New(fault.VerifyFailed, "verify: seq %d: the origin's head recorded at import has hash %s, the log now has %s: the copy was rewritten after its import", o.HeadSeq, o.HeadHash, orNone(found)).
					With("seq", o.HeadSeq).With("anchored_hash", o.HeadHash).With("found_hash", found).WithHint("re-import the origin's export: awr import EXPORT.jsonl --project NEW_DIR"))
			}
			res.Checks = append(res.Checks, c)
		}
		if req.Anchors {
			ac := &AnchorCheck{OK: true, Source: source, Ignored: []Anchor{}, Malformed: malformed}
			fork, origin, err := forkLine(r)
			if err != nil {
				return err
			}
			var mine []Anchor
			for _, a := range anchors {
				switch {
				case a.ProjectID != head.projectID,
					// another fork's, or a fork's seen from its origin
					a.Fork != fork && a.Fork != "",
					// the origin's own history after this copy was made
					a.Fork == "" && origin != nil && a.Seq > origin.HeadSeq:
					ac.Ignored = append(ac.Ignored, a)
					continue
				}
				mine = append(mine, a)
			}
			sort.SliceStable(mine, func(i, j int) bool { return mine[i].Seq < mine[j].Seq })
			for _, a := range mine {
				ac.Checked++
				found := ""
				if a.Seq <= r.Head {
					if found, err = hashAt(r.Conn, a.Seq); err != nil {
						return err
					}
				}
				switch {
				case a.Seq > r.Head:
					ac.Broken = &BrokenAnchor{Seq: a.Seq, AnchoredHash: a.Hash, At: a.At, Where: a.Where,
						Problem: fmt.Sprintf("the anchor names seq %d but the log ends at seq %d: events were removed", a.Seq, r.Head)}
				case found != a.Hash:
					ac.Broken = &BrokenAnchor{Seq: a.Seq, AnchoredHash: a.Hash, FoundHash: found, At: a.At, Where: a.Where,
						Problem: fmt.Sprintf("seq %d was anchored with hash %s, the log now has %s: the history was rewritten after the anchor", a.Seq, a.Hash, found)}
				default:
					latest := a
					ac.Latest = &latest
					continue
				}
				break
			}
			c := replay.Check{Name: "anchors", OK: true}
			switch {
			case ac.Broken != nil:
				b := ac.Broken
				c.OK, c.Detail = false, fmt.Sprintf("anchor %s: %s", b.Where, b.Problem)
				fail(fault.New(fault.VerifyFailed, "verify: anchor %s (at %s): %s", b.Where, b.At, b.Problem).
					With("seq", b.Seq).With("anchored_hash", b.AnchoredHash).With("found_hash", b.FoundHash).With("where", b.Where).
					WithHint("the log was altered after the anchor; restore .awr/awr.db from a backup or re-import an export taken before the rewrite"))
			case len(malformed) > 0:
				c.OK, c.Detail = false, fmt.Sprintf("%s: %d line(s) open like an anchor but do not parse (first %s)", source, len(malformed), malformed[0])
				fail(fault.New(fault.VerifyFailed, "verify: anchor %s is not an anchor line (%s project=ID seq=N hash=HEX at=TIME)", malformed[0], anchorTag).
					With("where", malformed[0]).WithHint("awr anchor"))
			case ac.Checked == 0:
				c.OK, c.Detail = false, fmt.Sprintf("%s: no anchor of project %s (%d of other projects or lines of history)", source, head.projectID, len(ac.Ignored))
				hint := "awr anchor"
				if req.AnchorsFile != "" {
					hint = "awr anchor --to " + p.shown(req.AnchorsFile, "anchors.txt")
				}
				fail(fault.New(fault.VerifyFailed, "verify: %s holds no anchor of project %s", source, head.projectID).
					With("source", source).WithHint("%s", hint))
			default:
				c.Detail = fmt.Sprintf("%d anchor(s) of this project hold, the latest at seq %d (%s)", ac.Checked, ac.Latest.Seq, ac.Latest.Where)
				if len(ac.Ignored) > 0 {
					c.Detail += fmt.Sprintf("; %d of other projects or lines of history ignored", len(ac.Ignored))
				}
			}
			ac.OK = c.OK
			res.Anchors = ac
			res.Checks = append(res.Checks, c)
		}
		if req.ExpectHead != "" {
			hc := &HeadCheck{Expected: req.ExpectHead, HeadSeq: r.Head, HeadHash: head.hash, OK: head.hash == req.ExpectHead}
			c := replay.Check{Name: "expect_head", OK: hc.OK, Detail: fmt.Sprintf("the head (seq %d) has hash %.12s", r.Head, head.hash)}
			if !hc.OK {
				if err := events.ScanEvents(r.Conn, 1, math.MaxInt64, func(e *events.Event) error {
					if hex.EncodeToString(e.Hash) == req.ExpectHead {
						hc.FoundAt = e.Seq
					}
					return nil
				}); err != nil {
					return err
				}
				where := "no event of the log has it"
				if hc.FoundAt > 0 {
					where = fmt.Sprintf("it is the hash of seq %d: %d event(s) were appended after it", hc.FoundAt, r.Head-hc.FoundAt)
				}
				c.Detail = fmt.Sprintf("the head (seq %d) has hash %.12s, not %.12s; %s", r.Head, head.hash, req.ExpectHead, where)
				e := fault.New(fault.VerifyFailed, "verify: --expect-head %s: the head (seq %d) has hash %s; %s", req.ExpectHead, r.Head, head.hash, where).
					With("expected", req.ExpectHead).With("head_seq", r.Head).With("head_hash", head.hash).With("found_at", hc.FoundAt)
				if hc.FoundAt > 0 {
					e.WithHint("awr log --since %d", hc.FoundAt)
				} else {
					e.WithHint("the log was rewritten or is another; compare with the head you were given: awr status --full")
				}
				fail(e)
			}
			res.ExpectHead = hc
			res.Checks = append(res.Checks, c)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if failure != nil {
		return failure.With("project_revision", res.ProjectRevision)
	}
	return nil
}

func orNone(h string) string {
	if h == "" {
		return "no event there"
	}
	return h
}
