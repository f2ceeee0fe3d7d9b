package commands

import (
	"context"
	"strings"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
)

// ClaimView is a claim as commands report it.
type ClaimView struct {
	ID        string `json:"id"`
	Work      string `json:"work"`
	SessionID string `json:"session_id"`
	Agent     string `json:"agent"`
	// ExpiresAt is UTC milliseconds; 0 for a claim without a lease.
	ExpiresAt int64 `json:"expires_at"`
	// TTLms is the lease length a renewal by the holder extends it by;
	// 0 when not recorded or without a lease.
	TTLms        int64 `json:"ttl_ms,omitempty"`
	FencingToken int64 `json:"fencing_token"`
}

// StartRequest opens a session on a work item, optionally claiming it.
type StartRequest struct {
	Work     string `name:"work" required:"" json:"work" help:"Work item key." placeholder:"KEY"`
	Agent    string `name:"agent" required:"" json:"agent" help:"Who works (a label)." placeholder:"LABEL"`
	Provider string `name:"provider" json:"provider,omitempty" help:"The agent's provider (a label)." placeholder:"NAME"`
	Model    string `name:"model" json:"model,omitempty" help:"The model (a label; awr never calls a model)." placeholder:"LABEL"`
	Claim    bool   `name:"claim" json:"claim,omitempty" help:"Reserve the work item for this session (requires fresh sources)."`
	// TTLms is the lease of the claim; nil is the project's lease
	// (Policy.ClaimTTLms), 0 no expiry (only when the policy is 0 too).
	// TTL is the lease as a duration (--ttl 30m); leaseMs folds it into
	// TTLms, the form MCP and the log use.
	TTL     *time.Duration `name:"ttl" json:"-" help:"Lease of the claim (30m, 2h; default: the manifest's continuity.claim_ttl_ms, 1h when unset; 0, no expiry, only when that setting is 0)." placeholder:"DURATION"`
	TTLms   *int64         `name:"ttl-ms" hidden:"" json:"ttl_ms,omitempty" help:"Lease of the claim in milliseconds (default: the manifest's continuity.claim_ttl_ms, 3600000 when unset; 0, no expiry, only when that setting is 0)." placeholder:"N"`
	Workdir string         `name:"workdir" json:"workdir,omitempty" help:"The session's working directory, whose git repository its checkpoints record (default: the project root)." placeholder:"DIR"`
	// Stale lists the sources the door found changed since they were
	// indexed; a claim is refused on them (after a retried request id has
	// had its first answer). No front end sets it.
	Stale []string `kong:"-" json:"-"`
	// Repo is the repository the door captured in the working directory,
	// whose path, relative to the project root, is RepoDir. No front end
	// sets them.
	Repo    *events.RepoRecord `kong:"-" json:"-"`
	RepoDir string             `kong:"-" json:"-"`
	WriteMeta
}

// StartResult is the new session and its claim (nil without --claim).
type StartResult struct {
	Replay
	Session         projections.Session `json:"session"`
	Claim           *ClaimView          `json:"claim"`
	ProjectRevision int64               `json:"project_revision"`
}

// StartSession opens a session. With Claim it reserves the work item for
// TTLms (the policy's lease when nil).
// Errors: InvalidInput for missing fields and a refused --ttl-ms (negative,
// or 0 unless the policy is 0); NotFound for an unknown work item;
// InvalidTransition when the item's status or blocker forbid work;
// DependencyBlocked when a required dependency is open; ClaimConflict when
// another session holds a live claim; RevisionConflict when the work item's
// stream moved past the expected revision.
func StartSession(ctx context.Context, env *Env, req StartRequest) (*StartResult, error) {
	for _, f := range [][2]string{{"work", req.Work}, {"agent", req.Agent}} {
		if err := required(f[0], f[1]); err != nil {
			return nil, err
		}
	}
	if err := leaseMs("start session", &req.TTL, &req.TTLms); err != nil {
		return nil, err
	}
	if req.Claim || req.TTLms != nil {
		ttl, err := leaseTTL("start session", env.policy(), req.TTLms)
		if err != nil {
			return nil, err
		}
		if req.Claim {
			req.TTLms = &ttl // the same request whether the default is said or not
		}
	}
	if err := refuseSecrets("start session", [2]string{"agent", req.Agent}, [2]string{"provider", req.Provider}, [2]string{"model", req.Model}); err != nil {
		return nil, err
	}
	return write(ctx, env, req.Agent, req.WriteMeta, []string{"work/" + req.Work}, req, func(tx *events.Tx) (*StartResult, error) {
		if req.Claim && len(req.Stale) > 0 {
			return nil, StaleError("start session", req.Stale)
		}
		item, err := findWork(tx, req.Work)
		if err != nil {
			return nil, err
		}
		var checked *claimable
		if req.Claim {
			if checked, err = checkClaimableItems(tx, req.Work, []projections.WorkItem{*item}, ""); err != nil {
				return nil, err
			}
		}
		id := tx.NewID()
		if _, err := tx.Append(events.NewEvent{Stream: "session/" + id, Payload: events.SessionStarted{
			SessionID: id, Work: req.Work, Agent: req.Agent, Provider: req.Provider, Model: req.Model,
			Workdir: req.RepoDir, Repo: req.Repo,
		}}); err != nil {
			return nil, err
		}
		res := &StartResult{}
		if req.Claim {
			c, err := acquire(tx, req.Work, id, req.Agent, *req.TTLms, "", checked)
			if err != nil {
				return nil, err
			}
			res.Claim = c
		}
		// A session started in this write has recorded no checkpoint and no
		// context: its row is all SessionAt would give.
		s, err := projections.SessionRowAt(tx.Conn, id, tx.Head())
		if err != nil {
			return nil, err
		}
		res.Session = *s
		res.ProjectRevision = tx.Head()
		return res, nil
	})
}

// findWork returns the unique work item key at the transaction's head.
func findWork(tx *events.Tx, key string) (*projections.WorkItem, error) {
	items, err := projections.WorkItemAt(tx.Conn, key, tx.Head())
	if err != nil {
		return nil, err
	}
	switch len(items) {
	case 0:
		return nil, fault.New(fault.NotFound, "work item %q not found", key).With("work", key).WithHint("awr ready --all")
	case 1:
		return &items[0], nil
	}
	var paths []string
	for _, it := range items {
		paths = append(paths, it.SourcePath)
	}
	return nil, fault.New(fault.SourceConflict, "work item %q is declared by %d sources: %s; give the item one home, then reindex", key, len(items), strings.Join(paths, ", ")).
		With("work", key).With("sources", paths).WithHint("awr source reindex")
}

// checkClaimable verifies that work can be claimed now by a session other
// than except (the predecessor whose claim is being moved).
// It returns what it read of work's claims (claimable), which an acquire
// that follows takes as its own read while nothing has been appended to
// work's stream since.
func checkClaimable(tx *events.Tx, work, except string) (*claimable, error) {
	return checkClaimableItems(tx, work, nil, except)
}

// checkClaimableItems is checkClaimable for a caller that has read the
// items of work at the transaction's head (findWork), nil when it has
// not.
func checkClaimableItems(tx *events.Tx, work string, items []projections.WorkItem, except string) (*claimable, error) {
	r, live, ok, err := projections.ClaimReadinessOf(tx.Conn, work, items, tx.Head(), tx.Now().UnixMilli(), true)
	if err != nil {
		return nil, err
	}
	if !ok { // no item: ClaimReadinessOf read no claim
		if live, err = projections.LiveClaimAt(tx.Conn, work, tx.Head(), tx.Now().UnixMilli(), true); err != nil {
			return nil, err
		}
	}
	tok, err := projections.MaxFencingToken(tx.Conn, work, tx.Head())
	if err != nil {
		return nil, err
	}
	if _, err := checkClaimsAgree(tx, work, live, tok); err != nil {
		return nil, err
	}
	if !ok {
		return nil, fault.New(fault.NotFound, "work item %q not found", work).With("work", work).WithHint("awr ready --all")
	}
	for _, reason := range r.Reasons {
		switch reason.Code {
		case projections.ReasonClaimed:
			if r.Claim != nil && r.Claim.SessionID == except {
				continue
			}
			c := r.Claim
			return nil, fault.New(fault.ClaimConflict, "claim %s: held by %s (session %s)", work, c.Agent, c.SessionID).
				With("work", work).With("holder_session", c.SessionID).With("holder_agent", c.Agent).
				With("expires_at", c.ExpiresAt).With("fencing_token", c.FencingToken).
				WithHint("awr session list --active --work %s", work)
		case projections.ReasonDependencyOpen, projections.ReasonDependencyMissing, projections.ReasonDependencyCycle:
			return nil, fault.New(fault.DependencyBlocked, "claim %s: %s", work, reason.Message).
				With("work", work).With("dependency", reason.Key).WithHint("awr ready")
		case projections.ReasonDuplicateKey:
			return nil, fault.New(fault.SourceConflict, "claim %s: %s", work, reason.Message).With("work", work)
		default:
			return nil, fault.New(fault.InvalidTransition, "claim %s: not ready: %s", work, reason.Message).
				With("work", work).With("reason", reason.Code).WithHint("awr ready")
		}
	}
	return &claimable{work: work, token: tok, head: tx.Head()}, nil
}

// claimable is what checkClaimable read of a work item's claims before
// it let a claim be taken: the highest fencing token issued on it, which
// the log's latest claim agrees with, as of head.
type claimable struct {
	work  string
	token int64
	head  int64
}

// tokenOf returns the fencing token c read for work when it still holds:
// c is of work and nothing has been appended to work's stream since c's
// head (every claim event is on it). ok is false otherwise, and for a nil
// c: the caller reads the token again.
func (c *claimable) tokenOf(tx *events.Tx, work string) (token int64, ok bool) {
	if c == nil || c.work != work {
		return 0, false
	}
	stream := "work/" + work
	for _, e := range tx.Appended() {
		if e.Seq > c.head && e.Stream == stream {
			return 0, false
		}
	}
	return c.token, true
}

// acquire appends claim_acquired for session on work with the next fencing
// token and a lease of ttl ms from now (none when 0).
// checked is what checkClaimable read before, nil when it did not run.
func acquire(tx *events.Tx, work, session, agent string, ttl int64, movedFrom string, checked *claimable) (*ClaimView, error) {
	var expires int64
	if ttl > 0 {
		expires = tx.Now().UnixMilli() + ttl
	}
	return acquireUntil(tx, work, session, agent, expires, ttl, movedFrom, checked)
}

// acquireUntil appends claim_acquired with an absolute expiry (0: none)
// and the lease length renewals extend it by (recorded only with an
// expiry).
// When checked still holds (claimable.tokenOf), its token is the one
// read and checked against the log, and nothing is read again.
func acquireUntil(tx *events.Tx, work, session, agent string, expiresAt, ttl int64, movedFrom string, checked *claimable) (*ClaimView, error) {
	tok, ok := checked.tokenOf(tx, work)
	if !ok {
		var err error
		if tok, err = projections.MaxFencingToken(tx.Conn, work, tx.Head()); err != nil {
			return nil, err
		}
		// The token comes from the log as well: a projection that lost a
		// claim would hand out a token already issued.
		lc, err := latestClaimInLog(tx, work)
		if err != nil {
			return nil, err
		}
		if err := tokensAgree(work, lc, tok); err != nil {
			return nil, err
		}
	}
	if expiresAt == 0 {
		ttl = 0
	}
	c := events.ClaimAcquired{ClaimID: tx.NewID(), Work: work, SessionID: session, Agent: agent, FencingToken: tok + 1, MovedFrom: movedFrom, ExpiresAt: expiresAt, TTLms: ttl}
	if _, err := tx.Append(events.NewEvent{Stream: "work/" + work, Payload: c}); err != nil {
		return nil, err
	}
	return &ClaimView{ID: c.ClaimID, Work: work, SessionID: session, Agent: agent, ExpiresAt: c.ExpiresAt, TTLms: c.TTLms, FencingToken: c.FencingToken}, nil
}

// activeSession returns session id, requiring it to exist and be active.
// Whether it exists and runs is read from the log's session stream as
// well, so a sessions projection edited behind awr's back never lets an
// ended session write (or hides a running one). It reads the session's
// row alone (SessionRowAt): its latest checkpoint and context are not
// filled in.
func activeSession(tx *events.Tx, op, id string) (*projections.Session, error) {
	s, err := projections.SessionRowAt(tx.Conn, id, tx.Head())
	if err != nil {
		return nil, err
	}
	if err := sessionAgrees(tx, op, id, s); err != nil {
		return nil, err
	}
	if s == nil {
		return nil, fault.New(fault.NotFound, "%s: session %s not found", op, id).With("session_id", id).WithHint("awr session list")
	}
	if s.Status != projections.SessionActive {
		return nil, notActive(op, s)
	}
	return s, nil
}

// notActive is the InvalidTransition of a write to session s, which has
// ended.
func notActive(op string, s *projections.Session) error {
	hint := "awr session resume --from-session " + s.ID + " --agent \"$USER\""
	if s.SuccessorID != "" {
		hint = "awr session show " + s.SuccessorID // continue there
	}
	return fault.New(fault.InvalidTransition, "%s: session %s is %s (%s)", op, s.ID, s.Status, s.Outcome).
		With("session_id", s.ID).With("status", s.Status).WithHint("%s", hint)
}

// sessionWrite is write for a command that writes to an active session
// (op names it as activeSession does). The session's state answers
// before the revision: a write the state refuses whatever revision it
// names (the session has ended, which is for good) is InvalidTransition,
// never the RevisionConflict whose suggested retry would fail with it.
// A repeated request id still gets its first answer.
func sessionWrite[T any](ctx context.Context, env *Env, actor, op, session string, meta WriteMeta, request any, fn func(tx *events.Tx) (*T, error)) (*T, error) {
	res, err := write(ctx, env, actor, meta, []string{"session/" + session}, request, fn)
	if !fault.Is(err, fault.RevisionConflict) {
		return res, err
	}
	var ended error
	if rerr := env.Store.Read(ctx, func(r *events.Reader) error {
		s, err := projections.SessionAt(r.Conn, session, r.Head)
		if err == nil && s != nil && s.Status != projections.SessionActive {
			ended = notActive(op, s)
		}
		return err
	}); rerr != nil {
		return nil, rerr
	}
	if ended != nil {
		return nil, ended
	}
	return nil, err
}

// heldClaim returns the session's claim still in state held (live or
// expired), or nil.
func heldClaim(tx *events.Tx, session string) (*projections.Claim, error) {
	cs, err := projections.SessionClaimsAt(tx.Conn, session, tx.Head())
	if err != nil {
		return nil, err
	}
	for i := range cs {
		if cs[i].State == projections.ClaimHeld {
			return &cs[i], nil
		}
	}
	return nil, nil
}

// holdsLive reports whether session holds a live claim at the
// transaction's clock.
func holdsLive(tx *events.Tx, session string) (bool, error) {
	c, err := heldClaim(tx, session)
	return c != nil && c.LiveAt(tx.Now().UnixMilli()), err
}

// fence refuses a write from a session whose claim was superseded: a later
// claim on the work carries a higher fencing token, whether or not that
// claim is still live. A fenced session must resume to continue.
func fence(tx *events.Tx, op string, s *projections.Session) error {
	_, _, err := fenced(tx, op, s)
	return err
}

// fenced is fence returning what it read: the claim s holds (nil when
// none) and the highest fencing token issued on its work (0 when s holds
// no claim), so that a command that goes on to renew that claim
// (renewFenced) does not read them again.
func fenced(tx *events.Tx, op string, s *projections.Session) (mine *projections.Claim, top int64, err error) {
	mine, err = heldClaim(tx, s.ID)
	if err != nil || mine == nil {
		return nil, 0, err
	}
	top, err = projections.MaxFencingToken(tx.Conn, s.Work, tx.Head())
	if err != nil {
		return nil, 0, err
	}
	if top > mine.FencingToken {
		e := fault.New(fault.ClaimConflict, "%s: session %s holds fencing token %d, but token %d was issued on %s since", op, s.ID, mine.FencingToken, top, s.Work).
			With("session_id", s.ID).With("fencing_token", mine.FencingToken).With("latest_fencing_token", top).
			WithHint("awr session resume --from-session %s --agent %s", s.ID, s.Agent)
		if live, err := projections.LiveClaimAt(tx.Conn, s.Work, tx.Head(), tx.Now().UnixMilli(), true); err == nil && live != nil {
			e.With("holder_session", live.SessionID).With("holder_agent", live.Agent).With("expires_at", live.ExpiresAt).With("holder_fencing_token", live.FencingToken)
		}
		return nil, 0, e
	}
	return mine, top, nil
}

// EndRequest closes a session.
type EndRequest struct {
	SessionID string `name:"session" required:"" json:"session" help:"Session id." placeholder:"ID"`
	Outcome   string `name:"outcome" required:"" enum:"completed,incomplete,interrupted,abandoned" json:"outcome" help:"completed, incomplete, interrupted or abandoned (the work item's status in its source is never changed)."`
	// Reason says why, for ends awr decides itself (a rig down); no front
	// end sets it.
	Reason string `kong:"-" json:"-"`
	// Agent labels who ends the session; "awr" when empty.
	Agent string `name:"agent" json:"agent,omitempty" help:"Who ends it (a label)." placeholder:"LABEL"`
	WriteMeta
}

// EndResult is the ended session.
type EndResult struct {
	Replay
	Session         projections.Session `json:"session"`
	ReleasedClaim   *ClaimView          `json:"released_claim"`
	ProjectRevision int64               `json:"project_revision"`
}

// EndSession ends an active session and releases its claim. It never
// changes the work item's status in its source.
func EndSession(ctx context.Context, env *Env, req EndRequest) (*EndResult, error) {
	if err := required("session", req.SessionID); err != nil {
		return nil, err
	}
	if err := refuseSecrets("end session", [2]string{"agent", req.Agent}, [2]string{"reason", req.Reason}); err != nil {
		return nil, err
	}
	switch req.Outcome {
	case events.OutcomeCompleted, events.OutcomeIncomplete, events.OutcomeInterrupted, events.OutcomeAbandoned:
	default:
		return nil, fault.New(fault.InvalidInput, "end session: --outcome %q is not completed, incomplete, interrupted or abandoned", req.Outcome).With("field", "outcome")
	}
	return sessionWrite(ctx, env, orDefault(req.Agent, "awr"), "end session", req.SessionID, req.WriteMeta, req, func(tx *events.Tx) (*EndResult, error) {
		s, err := activeSession(tx, "end session", req.SessionID)
		if err != nil {
			return nil, err
		}
		res := &EndResult{}
		released, err := endSession(tx, s, req.Outcome, req.Reason)
		if err != nil {
			return nil, err
		}
		res.ReleasedClaim = released
		cur, err := projections.SessionAt(tx.Conn, s.ID, tx.Head())
		if err != nil {
			return nil, err
		}
		res.Session = *cur
		res.ProjectRevision = tx.Head()
		return res, nil
	})
}

func endSession(tx *events.Tx, s *projections.Session, outcome, reason string) (*ClaimView, error) {
	var released *ClaimView
	c, err := heldClaim(tx, s.ID)
	if err != nil {
		return nil, err
	}
	if c != nil {
		if _, err := tx.Append(events.NewEvent{Stream: "work/" + c.Work, Payload: events.ClaimReleased{
			ClaimID: c.ID, Work: c.Work, SessionID: s.ID, Reason: events.ReleaseSessionEnd,
		}}); err != nil {
			return nil, err
		}
		released = &ClaimView{ID: c.ID, Work: c.Work, SessionID: s.ID, Agent: c.Agent, ExpiresAt: c.ExpiresAt, TTLms: c.TTLms, FencingToken: c.FencingToken}
	}
	if _, err := tx.Append(events.NewEvent{Stream: "session/" + s.ID, Payload: events.SessionEnded{
		SessionID: s.ID, Work: s.Work, Outcome: outcome, Reason: reason,
	}}); err != nil {
		return nil, err
	}
	return released, nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// KnownWork checks that key names a work item at rev: one a source
// declares there, or one the log has events about (a key whose source
// later dropped it keeps its history). Every command that takes a work
// key gives this one answer for a key that is neither.
// Errors: NotFound naming op, the key and rev (hint `awr ready --all`).
func KnownWork(conn *sqlite.Conn, op, key string, rev int64) error {
	items, err := projections.WorkItemAt(conn, key, rev)
	if err != nil || len(items) > 0 {
		return err
	}
	evs, err := projections.WorkEventsAt(conn, key, "", rev, 1)
	if err != nil || len(evs) > 0 {
		return err
	}
	return fault.New(fault.NotFound, "%s: work item %q not found at revision %d", op, key, rev).
		With("work", key).WithHint("awr ready --all")
}
