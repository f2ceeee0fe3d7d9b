package events

import (
	"encoding/hex"
	"fmt"
	"time"

	"github.com/awr-dev/awr/internal/fault"
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

// Line is a stretch of a log's history that belongs to one project: the
// project of seq 1's project_initialized, or the fork a project_forked
// begins, from seq From until the next line begins.
type Line struct {
	ProjectID string `json:"project_id"`
	From      int64  `json:"from"`
	// Fork is the project_forked event that began the line (nil for the
	// first line).
	Fork *Event `json:"-"`
}

// Lineage is the lines of a log's history, oldest first: which project
// each seq belongs to. It is folded from the events themselves (never
// from the origin recorded beside a replica, which no hash covers): the
// id of project_initialized at seq 1, then the id each valid
// project_forked gives its fork. A fork is valid when it names an id of
// its own that no earlier line holds (a fork of a project's own id is
// refused), names as its origin the project the log is at that point,
// and names as the origin's head the event right before it (its seq and
// hash): a replica refuses every write until it is forked, so nothing
// lies between the copy's head and its fork. Use Fold in seq order, or
// ReadLineage.
type Lineage struct {
	Lines []Line
}

// Fold folds e, whose decoded payload is v, and returns the rule it breaks
// ("" when none): a project_forked that is not a valid fork. Events must
// come in seq order; an invalid fork begins no line.
func (l *Lineage) Fold(e *Event, v Payload) string {
	switch pl := v.(type) {
	case *ProjectInitialized:
		if e.Seq == 1 && len(l.Lines) == 0 {
			l.Lines = append(l.Lines, Line{ProjectID: pl.ProjectID, From: 1})
		}
	case *ProjectForked:
		cur := l.Current()
		prev := hex.EncodeToString(e.PrevHash)
		switch {
		case pl.ProjectID == "" || pl.ProjectID == pl.OriginProjectID:
			return fmt.Sprintf("project_forked at seq %d forks project %s under its own id: a fork is a project of its own, with an id of its own", e.Seq, pl.OriginProjectID)
		case l.Holds(pl.ProjectID):
			return fmt.Sprintf("project_forked at seq %d forks project %s under the id %s, which this log's history already holds: a fork of a project's own id", e.Seq, pl.OriginProjectID, pl.ProjectID)
		case pl.OriginProjectID != cur:
			return fmt.Sprintf("project_forked at seq %d names project %s as its origin, but the log is project %s there", e.Seq, pl.OriginProjectID, cur)
		case pl.OriginHeadSeq != e.Seq-1 || pl.OriginHeadHash != prev:
			return fmt.Sprintf("project_forked at seq %d names the origin's head seq %d (hash %.12s), but it follows seq %d (hash %.12s): a replica is forked at its head", e.Seq, pl.OriginHeadSeq, pl.OriginHeadHash, e.Seq-1, prev)
		}
		l.Lines = append(l.Lines, Line{ProjectID: pl.ProjectID, From: e.Seq, Fork: e})
	}
	return ""
}

// Current returns the project the log is at its head: the last line's id
// ("" for a log without project_initialized).
func (l *Lineage) Current() string {
	if len(l.Lines) == 0 {
		return ""
	}
	return l.Lines[len(l.Lines)-1].ProjectID
}

// Holds reports whether a line of the log belongs to project id.
func (l *Lineage) Holds(id string) bool {
	_, _, ok := l.Span(id)
	return ok
}

// Span returns the seqs project id's line covers: from..to, to 0 for the
// last line (open: it goes on), ok false when no line is id's.
func (l *Lineage) Span(id string) (from, to int64, ok bool) {
	for i, ln := range l.Lines {
		if ln.ProjectID == id {
			if i+1 < len(l.Lines) {
				to = l.Lines[i+1].From - 1
			}
			return ln.From, to, true
		}
	}
	return 0, 0, false
}

// ReadLineage folds the lineage of the log on conn: its seq 1 and its
// project_forked events. An invalid fork begins no line (verify and
// import refuse the log that holds it, naming its seq).
func ReadLineage(conn *sqlite.Conn) (*Lineage, error) {
	l := new(Lineage)
	var evs []*Event
	if err := ScanEvents(conn, 1, 1, func(e *Event) error {
		evs = append(evs, e)
		return nil
	}); err != nil {
		return nil, err
	}
	var forks []*Event
	if err := LatestOfKind(conn, "project", KindProjectForked, -1, func(e *Event) bool {
		forks = append(forks, e)
		return true
	}); err != nil {
		return nil, err
	}
	for i := len(forks) - 1; i >= 0; i-- {
		evs = append(evs, forks[i])
	}
	for _, e := range evs {
		if v, err := Decode(e); err == nil {
			l.Fold(e, v)
		}
	}
	return l, nil
}

// ForkOf returns the project_forked event that made the replica with
// origin o a fork (the first valid fork after o's head, see Lineage), or
// nil while it is a replica. A fork's own history may hold forks at or
// before o's head: those forked the origin, not this copy. A forged
// project_forked (of the project's own id, or not right after the head)
// forks nothing: the replica still refuses writes.
func ForkOf(conn *sqlite.Conn, o *Origin) (*Event, error) {
	if o == nil {
		return nil, nil
	}
	l, err := ReadLineage(conn)
	if err != nil {
		return nil, err
	}
	for _, ln := range l.Lines {
		if ln.Fork != nil && ln.From > o.HeadSeq {
			return ln.Fork, nil
		}
	}
	return nil, nil
}

// LatestFork returns the latest valid project_forked event of the log
// (see Lineage), or nil.
func LatestFork(conn *sqlite.Conn) (*Event, error) {
	l, err := ReadLineage(conn)
	if err != nil {
		return nil, err
	}
	if n := len(l.Lines); n > 0 && l.Lines[n-1].Fork != nil {
		return l.Lines[n-1].Fork, nil
	}
	return nil, nil
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
