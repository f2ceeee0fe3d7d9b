package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/jackc/pgx/v5"
)

// Moved is where a project's shared log went when `awr migrate` moved it
// out (the log is then fenced: it refuses every append, from every
// machine).
type Moved struct {
	// To names the log's new place, without credentials.
	To string
	// At is when the log moved (the migrating machine's clock).
	At time.Time
	// Revision is the log's head when it moved: every event up to it is
	// in the new place too.
	Revision int64
}

// sqlstateMoved is the SQLSTATE the database raises for an append to a
// fenced log (schema 003's trigger).
const sqlstateMoved = "AWRMV"

// MovedTo returns where the project's log moved, or nil when it has not
// (reads go on after a move: the log stays readable, as it was).
// Errors: Storage when the store cannot be read.
func (s *Store) MovedTo(ctx context.Context) (*Moved, error) {
	const op = "read the fence"
	if err := s.checkOpen(op); err != nil {
		return nil, err
	}
	var h events.Head
	var to *string
	var at int64
	err := s.pool.QueryRow(ctx, q("head_fence"), pgx.NamedArgs{"project": s.project}).Scan(&h.Revision, &h.Hash, &h.OccurredAt, &to, &at)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && to == nil) {
		return nil, nil
	}
	if err != nil {
		return nil, s.mapErr(op, err)
	}
	return &Moved{To: *to, At: time.UnixMilli(at).UTC(), Revision: h.Revision}, nil
}

// movedErr is the refusal of a write to a log that moved away: it names
// the log's new place, says nothing was written, and gives the command
// that points this checkout at a log it may write.
func (s *Store) movedErr(op string, m *Moved) error {
	return fault.New(fault.InvalidTransition, "%s: the project's log moved out of the shared store %s into %s at project_revision %d (awr migrate, %s): the shared store is fenced and takes no more writes from any machine; nothing was written; to follow the log where it went, have it shared again from there (awr migrate --to postgres://...) and pull that checkout's .awr/project.toml; to go on here alone from the log as it was when it moved, make this checkout's cache its own log",
		op, s.Describe(), m.To, m.Revision, m.At.Format(time.RFC3339)).
		With("store", s.Describe()).With("moved_to", m.To).With("moved_at_revision", m.Revision).
		WithHint("awr migrate --to sqlite")
}

// ServerInfo is what awr doctor reports of the server: its version, its
// clock and how long one round trip took.
type ServerInfo struct {
	Version   string
	Now       time.Time
	RoundTrip time.Duration
}

// Server asks the server for its version and clock, in one round trip.
// Errors: Storage when it cannot be reached.
func (s *Store) Server(ctx context.Context) (ServerInfo, error) {
	const op = "ask the server"
	if err := s.checkOpen(op); err != nil {
		return ServerInfo{}, err
	}
	var info ServerInfo
	var now int64
	begin := time.Now()
	if err := s.pool.QueryRow(ctx, q("server_info")).Scan(&info.Version, &now); err != nil {
		return ServerInfo{}, s.mapErr(op, err)
	}
	info.RoundTrip = time.Since(begin)
	// The server's clock read halfway through the round trip.
	info.Now = time.UnixMilli(now).UTC()
	return info, nil
}
