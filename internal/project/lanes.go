package project

import (
	"context"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
)

// MaxLanes bounds the lanes of one Lanes answer, and MaxLaneSpans the
// sessions a lane lists one by one.
const (
	MaxLanes     = 200
	MaxLaneSpans = projections.MaxLaneSpans
)

// LanesRequest asks for the timeline's lanes at a revision: one per work
// item, session or agent (By), each with the sessions active in each of
// Buckets equal intervals of seqs from 1 to the revision; Offset and
// Limit page the lanes, in key order.
type LanesRequest struct {
	Read
	By      string `json:"by"`
	Buckets int    `json:"buckets"`
	Offset  int    `json:"offset,omitempty"`
	Limit   int    `json:"limit"`
}

// LanesResult is one page of lanes. Total counts every lane at the
// revision.
type LanesResult struct {
	ProjectRevision int64  `json:"project_revision"`
	By              string `json:"by"`
	Buckets         int    `json:"buckets"`
	Total           int    `json:"total"`
	Offset          int    `json:"offset"`
	Lanes           []Lane `json:"lanes"`
}

// The lanes of a LanesResult (projections.LanesAt).
type (
	// Lane is a work item's, session's or agent's sessions.
	Lane = projections.Lane
	// LaneSpan is one session of a lane.
	LaneSpan = projections.LaneSpan
)

// Lanes answers the timeline of a log too long for a mark per event: the
// sessions of each lane, counted per interval of seqs, from the sessions'
// read model (two passes over the sessions at the revision, never over
// the events; memory is the page's lanes and one counter per lane).
// Errors: InvalidInput for By other than work, session or agent, Buckets
// outside 1 to MaxHistogramBuckets, Limit outside 1 to MaxLanes, a
// negative Offset, --at beyond the head; Storage.
func (p *Project) Lanes(ctx context.Context, req LanesRequest) (*LanesResult, error) {
	if req.By == "" {
		req.By = "work"
	}
	switch {
	case req.By != "work" && req.By != "session" && req.By != "agent":
		return nil, fault.New(fault.InvalidInput, "lanes: by %q: lanes are by work, session or agent", req.By).With("field", "by")
	case req.Buckets < 1 || req.Buckets > MaxHistogramBuckets:
		return nil, fault.New(fault.InvalidInput, "lanes: buckets %d: lanes have 1 to %d buckets", req.Buckets, MaxHistogramBuckets).
			With("field", "buckets").With("min", 1).With("max", MaxHistogramBuckets)
	case req.Limit < 1 || req.Limit > MaxLanes:
		return nil, fault.New(fault.InvalidInput, "lanes: limit %d: a page has 1 to %d lanes", req.Limit, MaxLanes).
			With("field", "limit").With("min", 1).With("max", MaxLanes)
	case req.Offset < 0:
		return nil, fault.New(fault.InvalidInput, "lanes: offset %d: want 0 or more", req.Offset).With("field", "offset")
	}
	res := &LanesResult{By: req.By, Buckets: req.Buckets, Offset: req.Offset, Lanes: []Lane{}}
	err := p.read(ctx, req.Read, func(r *events.Reader, rev, _ int64) error {
		res.ProjectRevision = rev
		if rev == 0 {
			return nil
		}
		total, lanes, err := projections.LanesAt(r.Conn, rev, req.By, req.Buckets, req.Offset, req.Limit)
		res.Total, res.Lanes = total, append(res.Lanes, lanes...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
