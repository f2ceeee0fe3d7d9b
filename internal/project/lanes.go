package project

import (
	"context"
	"sort"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
)

// MaxLanes bounds the lanes of one Lanes answer, and MaxLaneSpans the
// sessions a lane lists one by one.
const (
	MaxLanes     = 200
	MaxLaneSpans = 20
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

// Lane is a work item's, session's or agent's sessions: how many started
// by the revision and how many of them are still active, the first seq
// of the lane (its first session's start) and the last (the latest start
// or end), the sessions active in each interval (Active[i]: seqs from
// i×rev/buckets+1 to (i+1)×rev/buckets), and each session's span when
// the lane has at most MaxLaneSpans.
type Lane struct {
	Key      string     `json:"key"`
	Sessions int        `json:"sessions"`
	Open     int        `json:"open"`
	FirstSeq int64      `json:"first_seq"`
	LastSeq  int64      `json:"last_seq"`
	Active   []int      `json:"active"`
	Spans    []LaneSpan `json:"spans,omitempty"`
}

// LaneSpan is one session of a lane, from its start to its end (To 0:
// active at the revision).
type LaneSpan struct {
	Session string `json:"session"`
	Agent   string `json:"agent"`
	Work    string `json:"work"`
	From    int64  `json:"from"`
	To      int64  `json:"to,omitempty"`
}

// laneKey is the lane a session belongs to.
func laneKey(by string, sp projections.SessionSpan) string {
	switch by {
	case "session":
		return sp.ID
	case "agent":
		return sp.Agent
	}
	return sp.Work
}

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
		// First pass: every lane's key and size.
		sizes := map[string]int{}
		err := projections.SessionSpansAt(r.Conn, rev, func(sp projections.SessionSpan) error {
			sizes[laneKey(req.By, sp)]++
			return nil
		})
		if err != nil {
			return err
		}
		keys := make([]string, 0, len(sizes))
		for k := range sizes {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		res.Total = len(keys)
		if req.Offset >= len(keys) {
			return nil
		}
		keys = keys[req.Offset:min(req.Offset+req.Limit, len(keys))]
		// Second pass: the page's lanes, counted per interval through a
		// difference array (a session adds one from the interval of its
		// start to the interval of its end).
		n := int64(req.Buckets)
		bucket := func(seq int64) int64 { return min((seq-1)*n/rev, n-1) }
		page := make(map[string]*Lane, len(keys))
		diffs := make(map[string][]int, len(keys))
		for _, k := range keys {
			page[k] = &Lane{Key: k}
			diffs[k] = make([]int, n+1)
		}
		err = projections.SessionSpansAt(r.Conn, rev, func(sp projections.SessionSpan) error {
			l := page[laneKey(req.By, sp)]
			if l == nil || sp.From < 1 {
				return nil
			}
			end := sp.To
			if end == 0 {
				end = rev
				l.Open++
			}
			l.Sessions++
			if l.FirstSeq == 0 || sp.From < l.FirstSeq {
				l.FirstSeq = sp.From
			}
			l.LastSeq = max(l.LastSeq, sp.From, sp.To)
			d := diffs[l.Key]
			d[bucket(sp.From)]++
			d[bucket(end)+1]--
			if sizes[l.Key] <= MaxLaneSpans {
				l.Spans = append(l.Spans, LaneSpan{Session: sp.ID, Agent: sp.Agent, Work: sp.Work, From: sp.From, To: sp.To})
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range keys {
			l, d := page[k], diffs[k]
			l.Active = make([]int, n)
			run := 0
			for i := range l.Active {
				run += d[i]
				l.Active[i] = run
			}
			sort.Slice(l.Spans, func(i, j int) bool { return l.Spans[i].From < l.Spans[j].From })
			res.Lanes = append(res.Lanes, *l)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
