package project

import (
	"context"
	"encoding/hex"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
)

// HeadResult is the log's head: the revision, the hash and the time of
// its latest event (zero values for an empty log).
type HeadResult struct {
	ProjectRevision int64  `json:"project_revision"`
	HeadHash        string `json:"head_hash"`
	LastEventAt     int64  `json:"last_event_at,omitempty"`
}

// Head returns the log's head, reading one event: the cheap read a
// follower (the web page of `awr ui`) polls to learn that the log grew.
// Errors: NotFound (hint `awr init`) when the project has no log; Storage.
func (p *Project) Head(ctx context.Context) (*HeadResult, error) {
	return readResult(ctx, p, Read{}, func(r *events.Reader, rev, _ int64) (*HeadResult, error) {
		res := &HeadResult{ProjectRevision: rev}
		if rev == 0 {
			return res, nil
		}
		return res, events.ScanEvents(r.Conn, rev, rev, func(e *events.Event) error {
			res.HeadHash, res.LastEventAt = hex.EncodeToString(e.Hash), e.OccurredAt
			return nil
		})
	})
}

// EventKinds returns every event kind, in the order the log format
// declares them: the values `awr log --kind` accepts.
func EventKinds() []string {
	ks := events.Kinds()
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}

// SeekRequest asks for the first event at or after a time (UTC ms).
type SeekRequest struct {
	Read
	// Time is UTC milliseconds.
	Time int64 `json:"time"`
}

// SeekResult is the first event at or after the time asked for: its seq
// and time, 0 when every event is older (Seq then says the head).
type SeekResult struct {
	ProjectRevision int64 `json:"project_revision"`
	Seq             int64 `json:"seq"`
	OccurredAt      int64 `json:"occurred_at,omitempty"`
}

// Seek finds the first event at or after req.Time, as of the request's
// revision, by a binary search on seq: occurred_at never decreases with
// seq (the log's rule), so the search reads about log2(revision) events
// and never the log.
// Errors: InvalidInput for --at beyond the head; Storage.
func (p *Project) Seek(ctx context.Context, req SeekRequest) (*SeekResult, error) {
	return readResult(ctx, p, req.Read, func(r *events.Reader, rev, _ int64) (*SeekResult, error) {
		seq, at, err := projections.SeekTime(r.Conn, rev, req.Time)
		return &SeekResult{ProjectRevision: rev, Seq: seq, OccurredAt: at}, err
	})
}

// MaxHistogramBuckets bounds the buckets of one histogram.
const MaxHistogramBuckets = 500

// HistogramRequest asks how many events fell in each of Buckets equal
// intervals of time between From and To (UTC ms; 0: the first event's
// time, the last event's), as of the request's revision.
type HistogramRequest struct {
	Read
	From    int64 `json:"from,omitempty"`
	To      int64 `json:"to,omitempty"`
	Buckets int   `json:"buckets"`
}

// HistogramBucket is one interval of a histogram.
type HistogramBucket = projections.HistogramBucket

// HistogramResult is the time axis of `awr ui`: events per interval.
type HistogramResult struct {
	ProjectRevision int64             `json:"project_revision"`
	From            int64             `json:"from"`
	To              int64             `json:"to"`
	Buckets         []HistogramBucket `json:"buckets"`
}

// Histogram counts the events of each interval of time without reading
// them: occurred_at never decreases with seq, so each interval's first
// seq is found by a binary search (Seek) and the counts are differences
// of seqs. Its cost is about Buckets × log2(revision) reads of one event.
// Errors: InvalidInput for Buckets outside 1 to MaxHistogramBuckets,
// From after To, --at beyond the head; Storage.
func (p *Project) Histogram(ctx context.Context, req HistogramRequest) (*HistogramResult, error) {
	if req.Buckets < 1 || req.Buckets > MaxHistogramBuckets {
		return nil, fault.New(fault.InvalidInput, "histogram: buckets %d: a histogram has 1 to %d buckets", req.Buckets, MaxHistogramBuckets).
			With("field", "buckets").With("min", 1).With("max", MaxHistogramBuckets)
	}
	if req.From < 0 || req.To < 0 || (req.To > 0 && req.From > req.To) {
		return nil, fault.New(fault.InvalidInput, "histogram: from %d to %d is not an interval of time (UTC ms, from before to)", req.From, req.To).
			With("from", req.From).With("to", req.To)
	}
	res := &HistogramResult{Buckets: []HistogramBucket{}}
	err := p.read(ctx, req.Read, func(r *events.Reader, rev, _ int64) error {
		res.ProjectRevision = rev
		if rev == 0 {
			return nil
		}
		from, to, buckets, err := projections.HistogramAt(r.Conn, rev, req.From, req.To, req.Buckets)
		res.From, res.To, res.Buckets = from, to, append(res.Buckets, buckets...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
