package projections

import "zombiezen.com/go/sqlite"

// SessionCheckpointCountAt counts a session's checkpoints recorded by
// rev, through the index of the session's checkpoints by seq.
func SessionCheckpointCountAt(conn *sqlite.Conn, session string, rev int64) (int, error) {
	n, err := queryInt64(conn, "checkpoint_count_by_session_at", "n", keyAt(":session_id", session, rev))
	return int(n), err
}
