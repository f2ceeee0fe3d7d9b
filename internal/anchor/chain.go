package anchor

import (
	"context"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/replay"
	"zombiezen.com/go/sqlite"
)

// VerifyResult is `awr verify`: the log's own checks, and with the
// request's options the anchors and the expected head.
type VerifyResult struct {
	replay.VerifyResult
	// Anchors is the anchor check (--anchors).
	Anchors *Check `json:"anchors,omitempty"`
	// ExpectHead is the head check (--expect-head).
	ExpectHead *HeadCheck `json:"expect_head,omitempty"`
	// Anchored counts the anchors of this project (and of the project it
	// was forked from, up to the fork) the chain was checked against and
	// that hold: 0 without --anchors. A chain checked against no anchor
	// proves only that it is self-consistent: a history rewritten and
	// re-hashed from its first changed event would pass as well.
	Anchored int `json:"anchored"`
	// Verdict is the one sentence that says what passed, and what a pass
	// proves (VerdictOf); empty when the verification failed.
	Verdict string `json:"verdict,omitempty"`
}

// VerifyLog checks st's log (replay.Verify, reporting to progress, which
// may be nil) and holds it to the witnesses w (Witnesses.Verify); load,
// called only when w.Anchors, fills in the anchors (Source, List,
// Malformed, SourceArg). A log that fails its own checks is still held to
// its anchors: a broken anchor is the error even then. A failed check
// returns the result together with a VerifyFailed error.
// Errors: also those of load, when the log's own checks passed (nothing
// was checked against the anchors, and no result says the log verified).
func VerifyLog(ctx context.Context, st *events.Store, w Witnesses, load func(*Witnesses) error, progress func(done, total int64)) (*VerifyResult, error) {
	base, err := replay.Verify(ctx, st, progress)
	if base == nil {
		return nil, err
	}
	res := &VerifyResult{VerifyResult: *base}
	if err != nil && !w.Anchors {
		return res, err
	}
	// A log that fails its own checks is still held to its anchors: a
	// forger's edit breaks a domain rule and, re-hashed, the anchors after
	// it, and the broken anchor is the refusal that names the rewrite.
	werr := res.hold(ctx, st, w, load)
	if err == nil && werr != nil && !fault.Is(werr, fault.VerifyFailed) {
		// The anchors could not be read (a FIFO, a directory, a file too
		// large): nothing was checked against them, and no report says
		// the log verified.
		return nil, werr
	}
	if err != nil && (res.Anchors == nil || res.Anchors.Broken == nil) {
		return res, err
	}
	if err == nil && werr == nil && res.OK {
		if res.Anchors != nil && res.Anchors.OK {
			res.Anchored = res.Anchors.Checked
		}
		res.Verdict = VerdictOf(res.Anchored)
	}
	return res, werr
}

// hold adds to res the checks of what lies outside the log (Witnesses):
// the replica's recorded origin, the anchors (w.Anchors, read by load)
// and the expected head (w.ExpectHead). A failure sets res.OK false and
// returns VerifyFailed.
func (res *VerifyResult) hold(ctx context.Context, st *events.Store, w Witnesses, load func(*Witnesses) error) error {
	if w.Anchors {
		if err := load(&w); err != nil {
			return err
		}
	}
	var v *Verdict
	err := st.Read(ctx, func(r *events.Reader) error {
		var err error
		v, err = w.Verify(r)
		return err
	})
	if err != nil {
		return err
	}
	res.Checks = append(res.Checks, v.Checks...)
	res.Anchors, res.ExpectHead = v.Anchors, v.ExpectHead
	if v.Failure != nil {
		res.OK = false
		return v.Failure.With("project_revision", res.ProjectRevision)
	}
	return nil
}

// OnImport is the check of an imported log against the anchors w read
// (Source, List, Malformed, SourceArg), run inside the import's
// transaction (replay.Witness): it records their judgement (Judge) in
// *judged and refuses with the check's Failure, naming file (the import's
// source) as its path.
func (w Witnesses) OnImport(file string, judged **Check) replay.Witness {
	return func(conn *sqlite.Conn, head int64) error {
		ac, err := Judge(conn, head, w.Source, w.List, w.Malformed)
		if err != nil {
			return err
		}
		*judged = ac
		if e := ac.Failure("import", w.SourceArg); e != nil {
			return e.With("path", file)
		}
		return nil
	}
}
