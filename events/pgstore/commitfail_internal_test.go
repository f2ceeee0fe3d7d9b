package pgstore

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/jackc/pgx/v5/pgconn"
)

// A commit batch's failure is "nothing written" only when the server
// says so or nothing left this machine: a connection lost after the
// send, or a backend that ended, may have committed, and saying
// otherwise would have the caller redo (or report lost) a write the
// shared log holds. Main took every error for a coded one here.
func TestCommitNotApplied(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"a coded error", fault.New(fault.RevisionConflict, "the head moved"), true},
		{"a statement's ERROR", &pgconn.PgError{Severity: "ERROR", Code: "23505"}, true},
		{"a wrapped statement's ERROR", fmt.Errorf("commit: %w", &pgconn.PgError{Severity: "ERROR", Code: "40001"}), true},
		{"the backend ended (FATAL)", &pgconn.PgError{Severity: "FATAL", Code: "57P01"}, false},
		{"a PANIC", &pgconn.PgError{Severity: "PANIC"}, false},
		{"the connection lost after the send", io.ErrUnexpectedEOF, false},
		{"an uncoded error", errors.New("read tcp: connection reset by peer"), false},
	} {
		if got := commitNotApplied(c.err); got != c.want {
			t.Errorf("%s: commitNotApplied = %v, want %v", c.name, got, c.want)
		}
	}
}
