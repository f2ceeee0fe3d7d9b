package replay

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// Check is one verification step's outcome.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// EvidenceHint is the hint of a verification that failed where the
// usual repair (awr replay, a rebuild of the projections) would destroy
// what the failure found: a copy of the log first. The message names the
// repair to run after it.
const EvidenceHint = "awr export --output FILE"

// VerifyResult reports `awr verify`.
type VerifyResult struct {
	OK              bool                 `json:"ok"`
	ProjectRevision int64                `json:"project_revision"`
	EventsChecked   int64                `json:"events_checked"`
	HeadHash        string               `json:"head_hash"`
	FirstBadSeq     int64                `json:"first_bad_seq,omitempty"`
	Problem         string               `json:"problem,omitempty"`
	Checks          []Check              `json:"checks"`
	Projections     []ProjectionChecksum `json:"projections"`
	Mismatches      []Mismatch           `json:"mismatches,omitempty"`
}

// ChainFault is the first broken link found in a log.
type ChainFault struct {
	Seq     int64
	Problem string
}

// VerifyChain walks the log on conn in seq order and returns the first
// fault: a gap or repeat in seq, a prev_hash that is not the previous
// event's hash, a hash that does not recompute (an edited row), a
// unknown kind, an undecodable payload, or a broken rule of the log
// (events.Invariants: time that runs backwards or lies in the future, a
// stream version out of sequence, an event off its payload's stream, a
// session or claim on a work item no source declares, fencing tokens that
// do not increase, two live claims on one work item), which a forger who
// re-hashes the whole log cannot hide. It reads every row in seq (rowid) order, whatever its seq, so
// rows inserted, deleted or reordered behind the triggers' back are caught
// too. nil means sound.
func VerifyChain(conn *sqlite.Conn) (checked int64, head []byte, bad *ChainFault, err error) {
	var chain events.ChainCheck
	rules := events.NewInvariants(time.Now())
	stop := errors.New("stop")
	err = events.ScanEvents(conn, math.MinInt64, math.MaxInt64, func(e *events.Event) error {
		fail := func(format string, args ...any) error {
			bad = &ChainFault{Seq: e.Seq, Problem: fmt.Sprintf(format, args...)}
			return stop
		}
		want := chain.Expected()
		if problem := chain.Check(e); problem != "" {
			if e.Seq > want {
				bad = &ChainFault{Seq: want, Problem: problem}
				return stop
			}
			return fail("%s", problem)
		}
		if !events.Known(e.Kind) {
			return fail("unknown event kind %q", e.Kind)
		}
		v, err := events.Decode(e)
		if err != nil {
			return fail("payload does not decode: %v", err)
		}
		if problem := rules.Check(e, v); problem != "" {
			return fail("%s", problem)
		}
		checked++
		return nil
	})
	if err == stop {
		err = nil
	}
	return checked, chain.Head(), bad, err
}

// verifyAndRebuild walks the log on src as VerifyChain does and, in the
// same pass, folds it into a scratch database; for a sound log it returns
// the checksums of that rebuild.
func verifyAndRebuild(src *sqlite.Conn, progress func(done, total int64)) (checked int64, head []byte, bad *ChainFault, sums []ProjectionChecksum, err error) {
	err = withScratch(func(dst *sqlite.Conn) error {
		endFn, err := sqlitex.ImmediateTransaction(dst)
		if err != nil {
			return fault.Wrap(fault.Storage, err, "prepare scratch database")
		}
		var lf *events.LogFault
		checked, head, lf, err = events.VerifyFold(src, dst, projections.Projectors(), time.Now(), progress)
		endFn(&err)
		if err != nil {
			return fault.Wrap(fault.Storage, err, "rebuild into scratch database")
		}
		if lf != nil {
			bad = &ChainFault{Seq: lf.Seq, Problem: lf.Problem}
			return nil
		}
		sums, err = Checksums(dst)
		return err
	})
	return checked, head, bad, sums, err
}

// Verify checks the whole project: seq continuity and the hash chain, the
// append-only triggers, each projection's bookkeeping (version and last
// seq), and each projection's checksum against a scratch rebuild from the
// log. Errors: VerifyFailed naming the first bad seq (or the projection)
// and what is wrong; the result is returned alongside.
func Verify(ctx context.Context, store *events.Store, progress func(done, total int64)) (*VerifyResult, error) {
	res := &VerifyResult{OK: true, Projections: []ProjectionChecksum{}, Checks: []Check{}}
	err := store.ReadBulk(ctx, func(r *events.Reader) error {
		res.ProjectRevision = r.Head
		// One pass walks the chain and rebuilds every projection into a
		// scratch database, for the comparison below.
		checked, head, bad, rebuilt, err := verifyAndRebuild(r.Conn, progress)
		if err != nil {
			return err
		}
		res.EventsChecked, res.HeadHash = checked, hex.EncodeToString(head)
		if bad != nil {
			res.OK, res.FirstBadSeq, res.Problem = false, bad.Seq, bad.Problem
			res.Checks = append(res.Checks, Check{Name: "hash_chain", OK: false, Detail: fmt.Sprintf("seq %d: %s", bad.Seq, bad.Problem)})
			return nil
		}
		res.Checks = append(res.Checks, Check{Name: "hash_chain", OK: true, Detail: fmt.Sprintf("%s, seq 1..%d contiguous, every hash recomputes", plural(int(checked), "event"), checked)})
		states, err := events.ProjectionStates(r.Conn)
		if err != nil {
			return err
		}
		byName := map[string]events.ProjectionState{}
		for _, s := range states {
			byName[s.Name] = s
		}
		for _, p := range projections.All() {
			s, ok := byName[p.Name()]
			c := Check{Name: "projection_state/" + p.Name(), OK: ok && s.Version == p.Version() && s.LastSeq == r.Head}
			switch {
			case !ok:
				c.Detail = "never built"
			default:
				c.Detail = fmt.Sprintf("version %d (code %d), last seq %d of %d", s.Version, p.Version(), s.LastSeq, r.Head)
			}
			if ok && s.LastSeq > r.Head && res.FirstBadSeq == 0 {
				// Projections are written in the same transaction as the
				// events they fold: having seen more means events were cut.
				res.OK, res.FirstBadSeq = false, r.Head+1
				res.Problem = fmt.Sprintf("the log ends at seq %d but projection %s was built through seq %d: events after %d were removed", r.Head, p.Name(), s.LastSeq, r.Head)
			}
			if !c.OK && res.Problem == "" {
				res.OK, res.Problem = false, "projection "+p.Name()+" is stale: "+c.Detail
			}
			res.Checks = append(res.Checks, c)
		}
		n, err := events.TriggersInstalled(r.Conn)
		if err != nil {
			return err
		}
		res.Checks = append(res.Checks, Check{Name: "append_only_triggers", OK: n == 3, Detail: fmt.Sprintf("%d of 3 triggers installed", n)})
		if n != 3 && res.Problem == "" {
			res.OK, res.Problem = false, "the append-only triggers were removed"
		}
		if res.FirstBadSeq > 0 {
			return nil
		}
		// The live checksums read the same snapshot as the chain walk.
		live, err := Checksums(r.Conn)
		if err != nil {
			return err
		}
		var mismatches []Mismatch
		for i := range live {
			if live[i].Checksum != rebuilt[i].Checksum {
				mismatches = append(mismatches, Mismatch{Name: live[i].Name, Live: live[i].Checksum, Rebuilt: rebuilt[i].Checksum})
			}
		}
		res.Projections, res.Mismatches = live, mismatches
		c := Check{Name: "projection_checksums", OK: len(mismatches) == 0, Detail: fmt.Sprintf("%d projections equal a rebuild from the log", len(live)-len(mismatches))}
		if len(mismatches) > 0 {
			c.Detail = fmt.Sprintf("%d of %d projections differ from a rebuild from the log", len(mismatches), len(live))
			if res.Problem == "" {
				res.Problem = "projection " + mismatches[0].Name + " differs from a rebuild of the log"
			}
			res.OK = false
		}
		res.Checks = append(res.Checks, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !res.OK {
		e := fault.New(fault.VerifyFailed, "verify: %s", res.Problem).With("project_revision", res.ProjectRevision)
		if res.FirstBadSeq > 0 {
			e = fault.New(fault.VerifyFailed, "verify: seq %d: %s", res.FirstBadSeq, res.Problem).With("first_bad_seq", res.FirstBadSeq).With("project_revision", res.ProjectRevision)
			e.Hint = events.RestoreHint
		} else if res.Problem == "the append-only triggers were removed" {
			e.Hint = "awr export --output FILE"
		} else {
			// A rebuild (awr replay) would erase the projections that
			// disagree with the log, the trace of what happened: the
			// evidence is kept first, and the repair named after it.
			e.Message += "; keep the evidence before any repair (awr export --output FILE, or a copy of .awr/), then rebuild the projections with awr replay"
			e.Hint = EvidenceHint
		}
		return res, e
	}
	return res, nil
}
