package project

import (
	"context"
	"strings"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/cursor"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/recovery"
	"github.com/awr-dev/awr/projections"
)

// The answer of `awr recovery inspect` (package recovery).
type (
	// ClaimState is a session's claim as a reader sees it.
	ClaimState = recovery.ClaimState
	// RecoveryReport is `awr recovery inspect`.
	RecoveryReport = recovery.Report
	// KnowledgeItem is one loop, decision, fact or hypothesis of a work
	// item, as a report lists it (those closed since a checkpoint).
	KnowledgeItem = projections.Knowledge
)

// DefaultRecoveryLimit is the page of each list `awr recovery inspect`
// holds (the events changed since the checkpoint, the items closed
// since) when --limit is not given, and MaxRecoveryLimit the largest: a
// longer list is paged (changed_next_since, closed_next_since), or
// streamed by the CLI's `awr recovery inspect --all`
// (RecoveryInspectEach), never held whole.
const (
	DefaultRecoveryLimit = recovery.DefaultLimit
	MaxRecoveryLimit     = recovery.MaxLimit
)

// RecoveryInspectRequest is `awr recovery inspect` and awr_recovery_inspect.
type RecoveryInspectRequest struct {
	Session string `name:"session" required:"" json:"session" help:"Session id." placeholder:"ID"`
	Read
	ChangedSince *int64 `name:"changed-since" json:"changed_since,omitempty" help:"List the events changed on the work after this seq (a page's changed_next_since; default: the checkpoint's seq)." placeholder:"SEQ"`
	ClosedSince  *int64 `name:"closed-since" json:"closed_since,omitempty" help:"List the items closed after this seq (a page's closed_next_since; default: knowledge.closed_since_seq, the seq before the checkpoint's)." placeholder:"SEQ"`
	// KnowledgeCursor is the place after which the page of the items in
	// force starts (a report's knowledge_next_cursor).
	KnowledgeCursor string `name:"knowledge-cursor" json:"knowledge_cursor,omitempty" help:"List the items in force (open loops, decisions, facts, hypotheses) after this place (a page's knowledge_next_cursor; default: from the first)." placeholder:"CURSOR"`
	// BindingsCursor is the place after which the page of the bound
	// conversations starts (a report's bindings_next_cursor).
	BindingsCursor string `name:"bindings-cursor" json:"bindings_cursor,omitempty" help:"List the bound conversations after those of the page before (its bindings_next_cursor; default: from the first)." placeholder:"CURSOR"`
	Limit          *int   `name:"limit" json:"limit,omitempty" help:"At most N changed events, N closed items, N items in force and N bindings, 1 to 1000 (default 50); --all for every one." placeholder:"N"`
}

// RecoveryInspect answers, for a session at a revision, where
// it stands: status, claim, last checkpoint (its own or inherited), the
// host bindings, its predecessor and successor, what changed on its work
// since that checkpoint, and the exact command to run next. The events
// changed and the items closed since the checkpoint are a page each,
// from the request's cursors, with the count of what follows and the
// cursor of the next page; so are the items in force (open loops,
// decisions, facts, hypotheses), with knowledge_total and
// knowledge_next_cursor, and the bound conversations, with
// bindings_total and bindings_next_cursor. It never writes.
// Errors: NotFound for an unknown session; InvalidInput for a limit
// outside 1 to MaxRecoveryLimit, a negative cursor or one outside its
// list (recovery.At), or a --knowledge-cursor or --bindings-cursor awr
// did not give.
func (p *Project) RecoveryInspect(ctx context.Context, req RecoveryInspectRequest) (*RecoveryReport, error) {
	limit := DefaultRecoveryLimit
	if req.Limit != nil {
		if n := *req.Limit; n < 1 || n > MaxRecoveryLimit {
			return nil, fault.New(fault.InvalidInput, "recovery inspect: --limit %d is not a page size: a page holds 1 to %d events and as many closed items; the CLI streams every one with --all", n, MaxRecoveryLimit).
				With("flag", "--limit").With("min", 1).With("max", MaxRecoveryLimit).WithHint("awr recovery inspect --session %s --all", req.Session)
		}
		limit = *req.Limit
	}
	return p.recoveryInspect(ctx, req, limit)
}

// RecoveryInspectEach is RecoveryInspect with its lists whole, in
// bounded memory (`awr recovery inspect --all`): start gets the report
// with every item in force after the request's knowledge cursor (what
// the report reads whole to say the next action, as a packet does) and
// the other two lists empty (their counts and next cursors zero), then changed
// every event changed after the request's cursor, oldest first, then
// closed every item closed after its cursor, in the order they closed
// (none without a checkpoint), read at the report's revision.
// req.Limit is ignored.
// Errors: those of RecoveryInspect, and those start, changed or closed
// return.
func (p *Project) RecoveryInspectEach(ctx context.Context, req RecoveryInspectRequest, start func(*RecoveryReport) error, changed func(LogEvent) error, closed func(*KnowledgeItem) error) error {
	ctx = events.CatchUpOnce(ctx)
	rep, err := p.recoveryInspect(ctx, req, -1)
	if err != nil {
		return err
	}
	if err := start(rep); err != nil {
		return err
	}
	return p.read(ctx, commands.AtRevision(rep.ProjectRevision), func(r *events.Reader, _, _ int64) error {
		return recovery.Each(r.Conn, rep, func(e *events.Event) error {
			return changed(LogEvent{e.ToEnvelope()})
		}, closed)
	})
}

// recoveryInspect is RecoveryInspect with pages of limit (negative: no
// list, for RecoveryInspectEach). Its reads catch a shared log's cache up
// once (events.CatchUpOnce).
func (p *Project) recoveryInspect(ctx context.Context, req RecoveryInspectRequest, limit int) (*RecoveryReport, error) {
	ctx = events.CatchUpOnce(ctx)
	for _, c := range []struct {
		flag string
		seq  *int64
	}{{"--changed-since", req.ChangedSince}, {"--closed-since", req.ClosedSince}} {
		if c.seq != nil {
			if err := commands.RevisionOf("recovery inspect", c.flag, *c.seq); err != nil {
				return nil, err
			}
		}
	}
	session := req.Session
	first := "awr recovery inspect --session " + req.Session + atHint(req.Read)
	after, err := cursor.DecodeKnowledge("recovery inspect", req.KnowledgeCursor, first)
	if err != nil {
		return nil, err
	}
	bindingsAfter, err := cursor.DecodeBinding("recovery inspect", req.BindingsCursor, first)
	if err != nil {
		return nil, err
	}
	page := recovery.Page{ChangedAfter: req.ChangedSince, ClosedAfter: req.ClosedSince, KnowledgeAfter: after, BindingsAfter: bindingsAfter, Limit: limit}
	rep, err := readResult(ctx, p, req.Read, func(r *events.Reader, rev, now int64) (*RecoveryReport, error) {
		return recovery.At(r.Conn, session, rev, r.Head, now, page)
	})
	if err != nil {
		return nil, err
	}
	if !req.Past() {
		// A compile refuses while sources are not as indexed: the next
		// step is what makes it work again, not the compile itself.
		if rep.StaleSources, rep.MissingSources, err = p.sourceFreshness(ctx, false); err != nil {
			return nil, err
		}
		if compile := "awr context compile "; strings.HasPrefix(rep.NextStep, compile) {
			switch {
			case len(rep.MissingSources) > 0:
				rep.NextStep = "awr source list"
			case len(rep.StaleSources) > 0:
				rep.NextStep = "awr source reindex"
			}
		}
	}
	if !req.Past() && rep.Checkpoint != nil {
		sr, err := p.sessionRepoOf(ctx, session)
		if err != nil {
			return nil, err
		}
		if sr != nil {
			rep.Repository = compareRepo(ctx, sr.dir, rep.Checkpoint)
		}
	}
	return rep, nil
}
