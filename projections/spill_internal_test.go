package projections

import (
	"path/filepath"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
)

// TestSeats_SpillInBulk: a bulk rebuild's seats projection holds a
// bounded number of open versions, as the other temporal projections do:
// past its limit it spills (writes what it holds, builds its indexes and
// folds on incrementally), and the EndBulk that ends the rebuild then
// does nothing more, whatever projection it is.
func TestSeats_SpillInBulk(t *testing.T) {
	conn, err := events.OpenConn(filepath.Join(t.TempDir(), "seats.db"), sqlite.OpenReadWrite|sqlite.OpenCreate)
	require.NoError(t, err)
	defer conn.Close()
	p := newSeats()
	p.rows.heldMax = 1
	require.NoError(t, p.BeginBulk(conn))
	for i, address := range []string{"dev@r", "qa@r", "ops@r"} {
		e := &events.Event{Seq: int64(i + 1), Kind: events.KindSeatDeclared, OccurredAt: int64(i + 1)}
		pl := &events.SeatDeclared{Address: address, Role: "dev", Rig: "r", Runtime: events.RuntimeClaude, Work: "W-1"}
		require.NoError(t, p.Apply(conn, e, pl))
	}
	require.False(t, p.rows.bulk, "the seats projection held more than one open version without spilling")
	require.NoError(t, p.EndBulk(conn), "the rebuild's EndBulk after a spill")
	all, err := SeatsAt(conn, "", 3)
	require.NoError(t, err)
	require.Len(t, all, 3)
}
