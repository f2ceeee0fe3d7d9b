package events

import (
	"context"

	"zombiezen.com/go/sqlite"
)

// ProjectInitialized is the first event of every project log (stream
// "project"). It names the project and records the awr version that created
// the log.
type ProjectInitialized struct {
	ProjectID  string `json:"project_id"`
	Name       string `json:"name"`
	AWRVersion string `json:"awr_version,omitempty"`
}

// Kind returns KindProjectInitialized.
func (ProjectInitialized) Kind() Kind { return KindProjectInitialized }

// InitializedBy returns the payload of e when e is project_initialized,
// nil for an event of another kind.
// Errors: Storage (Decode's) when its payload does not decode.
func InitializedBy(e *Event) (*ProjectInitialized, error) {
	if e.Kind != KindProjectInitialized {
		return nil, nil
	}
	v, err := Decode(e)
	if err != nil {
		return nil, err
	}
	return v.(*ProjectInitialized), nil
}

// ReadInitialized returns the project_initialized at seq 1 of the log on
// conn: nil for an empty log or one whose seq 1 is another kind. A seq 1
// that does not decode is returned apart, as bad (Decode's error), from
// err, the read's own: a caller that only names the project (status, an
// anchor) goes on without it, one that appends after it stops.
func ReadInitialized(conn *sqlite.Conn) (pi *ProjectInitialized, bad, err error) {
	err = ScanEvents(conn, 1, 1, func(e *Event) error {
		pi, bad = InitializedBy(e)
		return nil
	})
	return pi, bad, err
}

// ScanInitialized is ReadInitialized over a log read by Scan (a shared
// store's upstream).
func ScanInitialized(ctx context.Context, log interface {
	Scan(ctx context.Context, from, to int64, fn func(e *Event) error) error
}) (pi *ProjectInitialized, bad, err error) {
	err = log.Scan(ctx, 1, 1, func(e *Event) error {
		pi, bad = InitializedBy(e)
		return nil
	})
	return pi, bad, err
}

// ProjectForked (stream "project") turns an imported replica into a
// project of its own: from this event on, the copy accepts writes and its
// history diverges from the origin's. It names the fork's own project id
// (never the origin's: a fork of a project's own id is refused, see
// Lineage), the origin as the replica recorded it (Origin), why the fork
// was made and who made it.
type ProjectForked struct {
	// ProjectID is the fork's own project id, from this event on: the
	// anchors of the fork name it, those of the origin name the origin's.
	ProjectID string `json:"project_id"`
	// OriginProjectID is the project id of the log the replica was
	// imported from.
	OriginProjectID string `json:"origin_project_id"`
	// OriginHeadSeq and OriginHeadHash are the origin's head at import:
	// the last event the replica and its origin share.
	OriginHeadSeq  int64  `json:"origin_head_seq"`
	OriginHeadHash string `json:"origin_head_hash"`
	// ImportedAt is when the replica was imported (UTC milliseconds).
	ImportedAt int64  `json:"imported_at,omitempty"`
	Reason     string `json:"reason,omitempty"`
	By         string `json:"by"`
}

// Kind returns KindProjectForked.
func (ProjectForked) Kind() Kind { return KindProjectForked }
