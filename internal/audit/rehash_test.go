package audit_test

import (
	"math"
	"strconv"

	"github.com/awr-dev/awr/events"
	"github.com/rogpeppe/go-internal/testscript"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// cmdRehash implements `rehash DB FROM`: a forger's tool. It recomputes
// the hash chain of the project database DB from seq FROM to the head
// exactly as package events computes it (events.ComputeHash over each
// event's canonical encoding, chained from the previous hash), writing
// every prev_hash and hash behind the append-only trigger's back (the
// trigger is dropped and put back as schema 001 declares it), so that a
// payload edited with sqlite3 leaves a chain that verifies again.
func cmdRehash(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: rehash DB FROM")
	}
	from, err := strconv.ParseInt(args[1], 10, 64)
	if err != nil || from < 1 {
		ts.Fatalf("rehash: bad seq %q", args[1])
	}
	conn, err := events.OpenConn(ts.MkAbs(args[0]), sqlite.OpenReadWrite|sqlite.OpenWAL)
	ts.Check(err)
	defer conn.Close()
	var evs []*events.Event
	ts.Check(events.ScanEvents(conn, 1, math.MaxInt64, func(e *events.Event) error {
		evs = append(evs, e)
		return nil
	}))
	ts.Check(sqlitex.ExecuteTransient(conn, "DROP TRIGGER IF EXISTS events_no_update", nil))
	prev := make([]byte, events.HashSize)
	for _, e := range evs {
		if e.Seq >= from {
			e.PrevHash = prev
			e.Hash = events.ComputeHash(prev, e)
			ts.Check(sqlitex.ExecuteTransient(conn, "UPDATE events SET prev_hash = :prev, hash = :hash WHERE seq = :seq", &sqlitex.ExecOptions{
				Named: map[string]any{":prev": e.PrevHash, ":hash": e.Hash, ":seq": e.Seq}}))
		}
		prev = e.Hash
	}
	ts.Check(sqlitex.ExecuteTransient(conn, `CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN
  SELECT RAISE(ABORT, 'events: the log is append-only, UPDATE is rejected');
END`, nil))
}
