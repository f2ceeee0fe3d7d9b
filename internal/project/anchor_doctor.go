package project

import (
	"context"
	"fmt"
	"time"

	"github.com/awr-dev/awr/events"
)

// FindingAnchorBehind is the doctor finding of a project whose latest
// anchor (in the git notes under refs/notes/awr) is far behind its head:
// a rewrite of what came after it would not be caught.
const FindingAnchorBehind = "anchor_behind"

// How far behind the head the latest anchor may lie before doctor says
// so: this many events, or this long before the head event while events
// were appended since.
const (
	anchorLagEvents = 1000
	anchorLagTime   = 7 * 24 * time.Hour
)

// doctorAnchors reports, for a project whose repository holds anchors of
// it, a latest anchor far behind the head (anchorLagEvents, anchorLagTime).
// A project without a repository or without anchors has nothing to say;
// an anchor file the user keeps elsewhere is not known to doctor.
func (p *Project) doctorAnchors(ctx context.Context, add func(DoctorFinding)) {
	g, err := gitRepo(ctx, p.dir, "doctor")
	if err != nil {
		return
	}
	anchors, _, err := g.readNotes(ctx)
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
		l, err := events.ReadLineage(r.Conn)
		if err != nil {
			return err
		}
		var latest *Anchor
		for i, a := range anchors {
			if a.ProjectID == l.Current() && a.Fork == "" && (latest == nil || a.Seq > latest.Seq) {
				latest = &anchors[i]
			}
		}
		if latest == nil || latest.Seq >= r.Head {
			return nil
		}
		behind := r.Head - latest.Seq
		at, err := time.Parse(time.RFC3339, latest.At)
		old := err == nil && time.UnixMilli(r.HeadTime).Sub(at) > anchorLagTime
		if behind < anchorLagEvents && !old {
			return nil
		}
		add(DoctorFinding{Code: FindingAnchorBehind, Severity: SeverityInfo, Subject: latest.Where,
			Message: fmt.Sprintf("the latest anchor of this project (%s, seq %d, taken %s) is %d event(s) behind the head (seq %d): a rewrite of what came after it would not be caught", latest.Where, latest.Seq, latest.At, behind, r.Head),
			Repair:  "awr anchor"})
		return nil
	})
}
