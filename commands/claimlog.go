package commands

import (
	"strconv"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
)

// logClaim is a work item's latest claim as the log itself says it: the
// claim decisions are checked against it, so a projection that disagrees
// with the log (rows deleted or edited behind awr's back) can never decide
// a write.
type logClaim struct {
	id       string
	session  string
	token    int64
	expires  int64
	released bool
}

// latestClaimInLog folds work's stream for its latest claim: the last
// claim_acquired, and whether a claim_released or claim_renewed of that
// same claim followed it. A release after it may name an older claim
// (a session that ends releases its lapsed claim after another session
// took the item), so each is matched by claim id. The invariants verify
// checks (increasing tokens, one live claim) make that claim the only one
// that can be live. nil when the item was never claimed.
func latestClaimInLog(tx *events.Tx, work string) (*logClaim, error) {
	stream := "work/" + work
	last, err := events.LastOfKinds(tx.Conn, stream, [3]events.Kind{events.KindClaimAcquired, events.KindClaimReleased, events.KindClaimRenewed})
	if err != nil || last[0] == nil {
		return nil, err
	}
	e := last[0]
	v, err := events.Decode(e)
	if err != nil {
		return nil, err
	}
	a := v.(*events.ClaimAcquired)
	c := &logClaim{id: a.ClaimID, session: a.SessionID, token: a.FencingToken, expires: a.ExpiresAt}
	rel, err := lastOfClaim(tx, stream, last[1], events.KindClaimReleased, e.Seq, a.ClaimID)
	if err != nil {
		return nil, err
	}
	c.released = rel != nil
	ren, err := lastOfClaim(tx, stream, last[2], events.KindClaimRenewed, e.Seq, a.ClaimID)
	if err != nil {
		return nil, err
	}
	if ren != nil {
		c.expires = ren.(*events.ClaimRenewed).ExpiresAt
	}
	return c, nil
}

// lastOfClaim is the payload of the latest event of kind on stream after
// seq that names claim id, or nil. latest is the latest event of kind on
// the stream (nil when none): when it names id, or comes before seq, it
// answers without a walk of the stream's events of kind.
func lastOfClaim(tx *events.Tx, stream string, latest *events.Event, kind events.Kind, after int64, id string) (events.Payload, error) {
	if latest == nil || latest.Seq <= after {
		return nil, nil
	}
	v, err := events.Decode(latest)
	if err != nil {
		return nil, err
	}
	if claimOf(v) == id {
		return v, nil
	}
	// The latest names an older claim: walk back for this one's.
	var found events.Payload
	var derr error
	err = events.LatestOfKind(tx.Conn, stream, kind, -1, func(e *events.Event) bool {
		if e.Seq <= after {
			return false
		}
		v, err := events.Decode(e)
		if err != nil {
			derr = err
			return false
		}
		if claimOf(v) == id {
			found = v
			return false
		}
		return true
	})
	if err == nil {
		err = derr
	}
	return found, err
}

// claimOf is the claim a claim_released or claim_renewed names, "" for
// any other payload.
func claimOf(v events.Payload) string {
	switch p := v.(type) {
	case *events.ClaimReleased:
		return p.ClaimID
	case *events.ClaimRenewed:
		return p.ClaimID
	}
	return ""
}

// live reports whether the claim holds its work at now.
func (c *logClaim) live(now int64) bool {
	return c != nil && !c.released && (c.expires == 0 || now < c.expires)
}

// projectionDisagrees is the Storage error of a claims projection that
// does not say what the log says about work.
func projectionDisagrees(work, what string) error {
	return fault.New(fault.Storage, "claim %s: the claims projection disagrees with the log (%s); no claim is decided on it", work, what).
		With("work", work).WithHint("awr verify")
}

// checkClaimsAgree compares the projection's live claim on work (nil:
// free) and its highest fencing token with the log's.
func checkClaimsAgree(tx *events.Tx, work string, live *projections.Claim, token int64) (*logClaim, error) {
	lc, err := latestClaimInLog(tx, work)
	if err != nil {
		return nil, err
	}
	if err := tokensAgree(work, lc, token); err != nil {
		return nil, err
	}
	now := tx.Now().UnixMilli()
	switch {
	case lc.live(now) && (live == nil || live.ID != lc.id):
		return nil, projectionDisagrees(work, "claim "+lc.id+" of session "+lc.session+" holds it in the log")
	case !lc.live(now) && live != nil:
		return nil, projectionDisagrees(work, "claim "+live.ID+" holds it in the projection only")
	}
	return lc, nil
}

// tokensAgree compares the highest fencing token the projection gives
// for work with the log's latest claim (nil: never claimed).
func tokensAgree(work string, lc *logClaim, token int64) error {
	var logToken int64
	if lc != nil {
		logToken = lc.token
	}
	if logToken != token {
		return projectionDisagrees(work, "the highest fencing token is "+strconv.FormatInt(logToken, 10)+" in the log, "+strconv.FormatInt(token, 10)+" in the projection")
	}
	return nil
}

// sessionAgrees compares what the sessions projection says of session id
// (s, nil when it knows none) with the log's session stream: the session
// exists when the stream holds its session_started, and runs until a
// session_ended.
func sessionAgrees(tx *events.Tx, op, id string, s *projections.Session) error {
	started, ended, err := events.LastSeqsOfKinds(tx.Conn, "session/"+id, events.KindSessionStarted, events.KindSessionEnded)
	if err != nil {
		return err
	}
	disagrees := func(what string) error {
		return fault.New(fault.Storage, "%s: the sessions projection disagrees with the log (%s); nothing is decided on it", op, what).
			With("session_id", id).WithHint("awr verify")
	}
	switch {
	case s == nil && started != 0:
		return disagrees("session " + id + " started at seq " + strconv.FormatInt(started, 10) + " in the log")
	case s != nil && started == 0:
		return disagrees("session " + id + " exists in the projection only")
	case s != nil && s.Status == projections.SessionActive && ended != 0:
		return disagrees("session " + id + " ended at seq " + strconv.FormatInt(ended, 10) + " in the log")
	case s != nil && s.Status != projections.SessionActive && started != 0 && ended == 0:
		return disagrees("session " + id + " is still running in the log")
	}
	return nil
}
