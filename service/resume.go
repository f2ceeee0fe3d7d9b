package service

import (
	"context"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/fault"
	"github.com/awr-dev/awr/projections"
	"github.com/awr-dev/awr/workcontext"
)

// ResumeResult is `awr session resume`.
type ResumeResult struct {
	// Replayed is true when a repeated request id answered: nothing new
	// was written, the context included.
	Replayed bool `json:"replayed,omitempty"`
	Resumed  struct {
		Session     projections.Session `json:"session"`
		FromSession string              `json:"from_session"`
		Claim       *commands.ClaimView `json:"claim"`
	} `json:"resumed"`
	Checkpoint *projections.Checkpoint `json:"checkpoint"`
	// ContextReady is true only when the compiled context is complete and
	// within budget.
	ContextReady    bool                      `json:"context_ready"`
	Context         *workcontext.Packet       `json:"context"`
	Completeness    *workcontext.Completeness `json:"completeness"`
	RecoveryGaps    []string                  `json:"recovery_gaps"`
	ProjectRevision int64                     `json:"project_revision"`
}

// Resume continues a session in a new one (see commands.ResumeSession),
// then compiles the successor's context, recorded for it, and lists what
// the successor could not recover. Taking or moving a claim requires fresh
// sources.
func (p *Project) Resume(ctx context.Context, req commands.ResumeRequest, budget int) (*ResumeResult, error) {
	if req.Claim == nil || *req.Claim {
		if err := p.requireFresh(ctx, "resume"); err != nil {
			return nil, err
		}
	}
	r, err := commands.ResumeSession(ctx, p.Env, req)
	if err != nil {
		return nil, err
	}
	out := &ResumeResult{Replayed: r.Replayed, Checkpoint: r.Checkpoint, RecoveryGaps: []string{}, ProjectRevision: r.ProjectRevision}
	out.Resumed.Session, out.Resumed.FromSession, out.Resumed.Claim = r.Session, r.FromSession, r.Claim
	if r.Checkpoint == nil {
		out.RecoveryGaps = append(out.RecoveryGaps, "the predecessor recorded no checkpoint: there is no digest, next action or open loops to inherit")
	}
	if r.Claim == nil {
		out.RecoveryGaps = append(out.RecoveryGaps, "the successor holds no claim on "+r.Session.Work)
	}
	opts := CompileOptions{Work: r.Session.Work, Session: r.Session.ID, Budget: budget, At: -1}
	if r.Replayed {
		opts.Session = "" // a retry reads; the first answer already recorded the compile
	}
	c, err := p.Compile(ctx, opts)
	switch {
	case err == nil:
		out.ContextReady = true
	case fault.Is(err, fault.ContextIncomplete):
		out.RecoveryGaps = append(out.RecoveryGaps, c.Completeness.Issues...)
	default:
		// The session exists; say why its context is not ready rather
		// than hide the resume.
		out.RecoveryGaps = append(out.RecoveryGaps, "context not compiled: "+fault.As(err).Message)
		return out, nil
	}
	out.Context, out.Completeness, out.ProjectRevision = c.WorkContext, c.Completeness, c.ProjectRevision
	return out, nil
}
