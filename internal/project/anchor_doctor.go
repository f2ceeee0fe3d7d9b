package project

import (
	"context"
	"fmt"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/anchor"
)

// FindingAnchorBehind is the doctor finding of a project whose latest
// anchor (in the git notes under refs/notes/awr) is far behind its head:
// a rewrite of what came after it would not be caught.
const FindingAnchorBehind = "anchor_behind"

// doctorAnchors reports, for a project whose repository holds anchors of
// it, a latest anchor far behind the head (anchor.Behind).
// A project without a repository or without anchors has nothing to say;
// an anchor file the user keeps elsewhere is not known to doctor.
func (p *Project) doctorAnchors(ctx context.Context, add func(DoctorFinding)) {
	g, err := anchor.OpenRepo(ctx, p.dir, "doctor")
	if err != nil {
		return
	}
	anchors, _, err := g.ReadNotes(ctx)
	if err != nil || len(anchors) == 0 {
		return
	}
	st, err := p.EventLog(ctx)
	if err != nil {
		return
	}
	_ = st.Read(ctx, func(r *events.Reader) error {
		if r.Head == 0 {
			return nil
		}
		latest, err := anchor.Behind(r, anchors)
		if err != nil || latest == nil {
			return err
		}
		behind := r.Head - latest.Seq
		add(DoctorFinding{Code: FindingAnchorBehind, Severity: SeverityInfo, Subject: latest.Where,
			Message: fmt.Sprintf("the latest anchor of this project (%s, seq %d, taken %s) is %d event(s) behind the head (seq %d): a rewrite of what came after it would not be caught", latest.Where, latest.Seq, latest.At, behind, r.Head),
			Repair:  "awr anchor"})
		return nil
	})
}
