package events

import (
	"encoding/hex"
	"time"

	"github.com/awr-dev/awr/fault"
	"zombiezen.com/go/sqlite"
)

// Origin is where an imported log came from: the origin project's id and
// its head (the last event the copy holds) when it was imported. A log with
// an origin is a replica: the store refuses every write to it with
// ReadOnlyReplica until a project_forked event after the origin's head
// makes it a project of its own (a fork). The origin is metadata beside
// the log, never an event, so the replica's chain stays byte for byte the
// origin's.
type Origin struct {
	ProjectID  string `json:"project_id"`
	HeadSeq    int64  `json:"head_seq"`
	HeadHash   string `json:"head_hash"`
	ImportedAt int64  `json:"imported_at"` // UTC milliseconds
}

// ReadOrigin returns the log's origin, or nil when the log was not
// imported (or was imported by an awr that did not record it).
func ReadOrigin(conn *sqlite.Conn) (*Origin, error) {
	st := prep(conn, "origin_get")
	defer st.Reset()
	row, err := st.Step()
	if err != nil || !row {
		return nil, err
	}
	h := make([]byte, st.GetLen("head_hash"))
	st.GetBytes("head_hash", h)
	return &Origin{ProjectID: st.GetText("project_id"), HeadSeq: st.GetInt64("head_seq"), HeadHash: hex.EncodeToString(h), ImportedAt: st.GetInt64("imported_at")}, nil
}

// RecordOrigin records, in the write transaction, that the log is a
// replica of o (an import records it once its last event is appended).
// Errors: InvalidInput when the log already has an origin or o's hash is
// not a hash; Storage otherwise.
func (tx *Tx) RecordOrigin(o Origin) error {
	h, err := decodeHash(o.HeadHash)
	if err != nil {
		return fault.New(fault.InvalidInput, "record origin: head hash %q: %v", o.HeadHash, err)
	}
	st := prep(tx.Conn, "origin_put")
	st.SetText(":project_id", o.ProjectID)
	st.SetInt64(":head_seq", o.HeadSeq)
	st.SetBytes(":head_hash", h)
	st.SetInt64(":imported_at", o.ImportedAt)
	_, err = st.Step()
	st.Reset()
	if err != nil {
		if sqlite.ErrCode(err) == sqlite.ResultConstraintPrimaryKey || sqlite.ErrCode(err) == sqlite.ResultConstraintUnique {
			return fault.New(fault.InvalidInput, "record origin: the log already records an origin")
		}
		return err
	}
	return nil
}

// ForkOf returns the project_forked event that made the replica with
// origin o a fork (the latest one after o's head), or nil while it is a
// replica. A fork's own history may hold project_forked events at or
// before o's head: those forked the origin, not this copy.
func ForkOf(conn *sqlite.Conn, o *Origin) (*Event, error) {
	if o == nil {
		return nil, nil
	}
	return LastOfKind(conn, "project", KindProjectForked, o.HeadSeq)
}

// LatestFork returns the latest project_forked event of the log, or nil.
func LatestFork(conn *sqlite.Conn) (*Event, error) {
	return LastOfKind(conn, "project", KindProjectForked, 0)
}

// ReplicaError is the refusal of a write to an unforked replica.
func ReplicaError(o *Origin) error {
	short := o.HeadHash
	if len(short) > 12 {
		short = short[:12]
	}
	return fault.New(fault.ReadOnlyReplica, "write: this project is a read-only replica of project %s (imported at seq %d, hash %s, on %s); nothing was written",
		o.ProjectID, o.HeadSeq, short, time.UnixMilli(o.ImportedAt).UTC().Format(time.RFC3339)).
		With("origin", *o).WithHint("awr fork --accept")
}

// checkReplica refuses a write to a replica that was not forked, unless
// the write is the fork itself.
func checkReplica(conn *sqlite.Conn, fork bool) error {
	o, err := ReadOrigin(conn)
	if err != nil || o == nil {
		return err
	}
	ev, err := ForkOf(conn, o)
	if err != nil {
		return err
	}
	if ev == nil && !fork {
		return ReplicaError(o)
	}
	return nil
}
