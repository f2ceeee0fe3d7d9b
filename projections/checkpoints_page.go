package projections

import "zombiezen.com/go/sqlite"

// SessionCheckpointCountAt counts a session's checkpoints recorded by
// rev, through the index of the session's checkpoints by seq.
func SessionCheckpointCountAt(conn *sqlite.Conn, session string, rev int64) (int, error) {
	n, err := queryInt64(conn, "checkpoint_count_by_session_at", "n", keyAt(":session_id", session, rev))
	return int(n), err
}

// EachSessionCheckpointAt gives each of a session's checkpoints recorded
// by rev to each, oldest first, one at a time (a long session's every
// checkpoint in bounded memory). each's error ends the read and is
// returned.
func EachSessionCheckpointAt(conn *sqlite.Conn, session string, rev int64, each func(Checkpoint) error) error {
	return query(conn, "checkpoint_by_session_at", keyAt(":session_id", session, rev), func(st *sqlite.Stmt) error {
		c, err := scanCheckpoint(st)
		if err != nil {
			return err
		}
		return each(c)
	})
}
