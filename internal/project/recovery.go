package project

import (
	"context"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/recovery"
)

// The answer of `awr recovery inspect` (package recovery).
type (
	// ClaimState is a session's claim as a reader sees it.
	ClaimState = recovery.ClaimState
	// RecoveryReport is `awr recovery inspect`.
	RecoveryReport = recovery.Report
)

// RecoveryChangedLimit bounds the events a recovery report lists as changed
// since the checkpoint (the first ones after it).
const RecoveryChangedLimit = recovery.ChangedLimit

// RecoveryInspectRequest is `awr recovery inspect` and awr_recovery_inspect.
type RecoveryInspectRequest struct {
	Session string `name:"session" required:"" json:"session" help:"Session id." placeholder:"ID"`
	Read
}

// RecoveryInspect answers, for a session at a revision, where
// it stands: status, claim, last checkpoint (its own or inherited), the
// host bindings, its predecessor and successor, what changed on its work
// since that checkpoint, and the exact command to run next. It never
// writes.
func (p *Project) RecoveryInspect(ctx context.Context, req RecoveryInspectRequest) (*RecoveryReport, error) {
	session := req.Session
	var rep *RecoveryReport
	err := p.read(ctx, req.Read, func(r *events.Reader, rev, now int64) error {
		var err error
		rep, err = recovery.At(r.Conn, session, rev, r.Head, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	if !req.Past() {
		// A compile refuses while sources are not as indexed: the next
		// step is what makes it work again, not the compile itself.
		if rep.StaleSources, rep.MissingSources, err = p.sourceFreshness(ctx); err != nil {
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
