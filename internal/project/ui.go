package project

import (
	"context"
	"encoding/hex"

	"github.com/awr-dev/awr/events"
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
	res := &HeadResult{}
	err := p.read(ctx, Read{}, func(r *events.Reader, rev, _ int64) error {
		res.ProjectRevision = rev
		if rev == 0 {
			return nil
		}
		return events.ScanEvents(r.Conn, rev, rev, func(e *events.Event) error {
			res.HeadHash, res.LastEventAt = hex.EncodeToString(e.Hash), e.OccurredAt
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return res, nil
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
