package projections_test

import (
	"fmt"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
)

const claimRows = `SELECT claim_id, work, session_id, agent, acquired_at, expires_at, ttl_ms, fencing_token,
	state, release_reason, released_at, valid_from, valid_to, lvl, node
	FROM p_claims ORDER BY claim_id, valid_from`

// readClaims renders ClaimsAt(rev) as "id state/reason token exp=E @revision"
// separated by "; ".
func readClaims(t *testing.T, conn *sqlite.Conn, rev int64) string {
	t.Helper()
	all, err := projections.ClaimsAt(conn, rev)
	return joinRows(t, all, err, func(c projections.Claim) string {
		return fmt.Sprintf("%s %s/%s %d exp=%s @%d", c.ID, c.State, c.ReleaseReason, c.FencingToken, clock(c.ExpiresAt), c.Revision)
	})
}

func acquire(id, work, session string, token, expiresSeq int64) *events.ClaimAcquired {
	c := &events.ClaimAcquired{ClaimID: id, Work: work, SessionID: session, Agent: "ag-" + session, FencingToken: token}
	if expiresSeq > 0 {
		c.ExpiresAt, c.TTLms = ms(expiresSeq), 7000
	}
	return c
}

func release(id, work, session, reason string) *events.ClaimReleased {
	return &events.ClaimReleased{ClaimID: id, Work: work, SessionID: session, Reason: reason}
}

// claimed is the log every claims case starts from: W-1 and W-2 declared
// (seq 1), sessions s1 and s2 on W-1 (seqs 2, 3).
func claimed(more ...events.Payload) []events.Payload {
	return append([]events.Payload{declare("W-1", "W-2"), start("s1", "W-1"), start("s2", "W-1")}, more...)
}

// TestClaims_Apply: claim_acquired opens a held version, renewals move
// the lease, releases end it (moved when handed to another session);
// expiry is data, never a write.
func TestClaims_Apply(t *testing.T) {
	t.Parallel()
	applyTable(t, claimRows, readClaims, []applyCase{
		{
			name: "Acquired",
			log:  claimed(acquire("c1", "W-1", "s1", 1, 10)),
			rows: []string{
				"c1 W-1 s1 ag-s1 t+4 t+10 7000 1 held '' 0 4 - - -",
			},
			at: map[int64]string{
				3: "",
				4: "c1 held/ 1 exp=t+10 @4",
			},
		},
		{
			name: "AcquiredWithoutLease",
			log:  claimed(acquire("c1", "W-1", "s1", 1, 0)),
			rows: []string{
				"c1 W-1 s1 ag-s1 t+4 0 0 1 held '' 0 4 - - -",
			},
			at: map[int64]string{
				4: "c1 held/ 1 exp=0 @4",
			},
		},
		{
			name: "Renewed",
			log: claimed(acquire("c1", "W-1", "s1", 1, 10),
				&events.ClaimRenewed{ClaimID: "c1", Work: "W-1", SessionID: "s1", ExpiresAt: ms(20), TTLms: 15000}),
			rows: []string{
				"c1 W-1 s1 ag-s1 t+4 t+10 7000 1 held '' 0 4 5 0 4",
				"c1 W-1 s1 ag-s1 t+4 t+20 15000 1 held '' 0 5 - - -",
			},
			at: map[int64]string{
				4: "c1 held/ 1 exp=t+10 @4",
				5: "c1 held/ 1 exp=t+20 @5",
			},
		},
		{
			// A renewal that names no length (an older log's) keeps the
			// claim's; one that removes the lease clears it.
			name: "RenewedWithoutLengthThenUnleased",
			log: claimed(acquire("c1", "W-1", "s1", 1, 10),
				&events.ClaimRenewed{ClaimID: "c1", Work: "W-1", SessionID: "s1", ExpiresAt: ms(30)},
				&events.ClaimRenewed{ClaimID: "c1", Work: "W-1", SessionID: "s1"}),
			rows: []string{
				"c1 W-1 s1 ag-s1 t+4 t+10 7000 1 held '' 0 4 5 0 4",
				"c1 W-1 s1 ag-s1 t+4 t+30 7000 1 held '' 0 5 6 0 5",
				"c1 W-1 s1 ag-s1 t+4 0 0 1 held '' 0 6 - - -",
			},
			at: map[int64]string{
				5: "c1 held/ 1 exp=t+30 @5",
				6: "c1 held/ 1 exp=0 @6",
			},
		},
		{
			name: "Released",
			log:  claimed(acquire("c1", "W-1", "s1", 1, 10), release("c1", "W-1", "s1", events.ReleaseExplicit)),
			rows: []string{
				"c1 W-1 s1 ag-s1 t+4 t+10 7000 1 held '' 0 4 5 0 4",
				"c1 W-1 s1 ag-s1 t+4 t+10 7000 1 released released t+5 5 - - -",
			},
			at: map[int64]string{
				4: "c1 held/ 1 exp=t+10 @4",
				5: "c1 released/released 1 exp=t+10 @5",
			},
		},
		{
			name: "ReleasedAtSessionEnd",
			log: claimed(acquire("c1", "W-1", "s1", 1, 0), release("c1", "W-1", "s1", events.ReleaseSessionEnd),
				end("s1", "W-1", events.OutcomeCompleted)),
			rows: []string{
				"c1 W-1 s1 ag-s1 t+4 0 0 1 held '' 0 4 5 0 4",
				"c1 W-1 s1 ag-s1 t+4 0 0 1 released session_ended t+5 5 - - -",
			},
			at: map[int64]string{
				6: "c1 released/session_ended 1 exp=0 @5",
			},
		},
		{
			name: "MovedToAnotherSession",
			log: claimed(acquire("c1", "W-1", "s1", 1, 0),
				&events.ClaimReleased{ClaimID: "c1", Work: "W-1", SessionID: "s1", Reason: events.ReleaseMoved, ToSession: "s2"},
				&events.ClaimAcquired{ClaimID: "c2", Work: "W-1", SessionID: "s2", Agent: "ag-s2", FencingToken: 2, MovedFrom: "c1"}),
			rows: []string{
				"c1 W-1 s1 ag-s1 t+4 0 0 1 held '' 0 4 5 0 4",
				"c1 W-1 s1 ag-s1 t+4 0 0 1 moved moved t+5 5 - - -",
				"c2 W-1 s2 ag-s2 t+6 0 0 2 held '' 0 6 - - -",
			},
			at: map[int64]string{
				5: "c1 moved/moved 1 exp=0 @5",
				6: "c1 moved/moved 1 exp=0 @5; c2 held/ 2 exp=0 @6",
			},
		},
		{
			// The lease of c1 ends at t+5: nothing is written then, and
			// c2 may take the item at seq 5 (t+5), c1's row still held.
			name: "ExpiredThenTakenOver",
			log:  claimed(acquire("c1", "W-1", "s1", 1, 5), acquire("c2", "W-1", "s2", 2, 0)),
			rows: []string{
				"c1 W-1 s1 ag-s1 t+4 t+5 7000 1 held '' 0 4 - - -",
				"c2 W-1 s2 ag-s2 t+5 0 0 2 held '' 0 5 - - -",
			},
			at: map[int64]string{
				4: "c1 held/ 1 exp=t+5 @4",
				5: "c1 held/ 1 exp=t+5 @4; c2 held/ 2 exp=0 @5",
			},
		},
		{
			name: "ErrRenewUnknownClaim",
			log:  claimed(acquire("c1", "W-1", "s1", 1, 10), &events.ClaimRenewed{ClaimID: "c9", Work: "W-1", SessionID: "s1", ExpiresAt: ms(20)}),
			err:  "claim c9: never acquired",
			rows: []string{
				"c1 W-1 s1 ag-s1 t+4 t+10 7000 1 held '' 0 4 - - -",
			},
		},
		{
			name: "ErrReleaseUnknownClaim",
			log:  claimed(release("c9", "W-1", "s1", events.ReleaseExplicit)),
			err:  "claim c9: never acquired",
		},
		{
			name:    "ReleasedTwice",
			log:     claimed(acquire("c1", "W-1", "s1", 1, 0), release("c1", "W-1", "s1", events.ReleaseExplicit), release("c1", "W-1", "s1", events.ReleaseRepaired)),
			invalid: "claim c1 on W-1 is released twice",
			rows: []string{
				"c1 W-1 s1 ag-s1 t+4 0 0 1 held '' 0 4 5 0 4",
				"c1 W-1 s1 ag-s1 t+4 0 0 1 released released t+5 5 6 0 5",
				"c1 W-1 s1 ag-s1 t+4 0 0 1 released repaired t+6 6 - - -",
			},
			at: map[int64]string{
				6: "c1 released/repaired 1 exp=0 @6",
			},
		},
		{
			name:    "FencingTokenNotAbove",
			log:     claimed(acquire("c1", "W-1", "s1", 3, 0), release("c1", "W-1", "s1", events.ReleaseExplicit), acquire("c2", "W-1", "s2", 3, 0)),
			invalid: "claim c2 on W-1 has fencing token 3, not above the 3 already issued",
			rows: []string{
				"c1 W-1 s1 ag-s1 t+4 0 0 3 held '' 0 4 5 0 4",
				"c1 W-1 s1 ag-s1 t+4 0 0 3 released released t+5 5 - - -",
				"c2 W-1 s2 ag-s2 t+6 0 0 3 held '' 0 6 - - -",
			},
			at: map[int64]string{
				6: "c1 released/released 3 exp=0 @5; c2 held/ 3 exp=0 @6",
			},
		},
	})
}

// TestClaims_Reads: which claim holds a work item depends on the reader's
// clock and revision, and the head reads agree with the history reads.
func TestClaims_Reads(t *testing.T) {
	t.Parallel()
	st := logOf(t, claimed(
		acquire("c1", "W-1", "s1", 1, 10), // seq 4, lease to t+10
		&events.ClaimRenewed{ClaimID: "c1", Work: "W-1", SessionID: "s1", ExpiresAt: ms(20), TTLms: 15000}, // seq 5
		start("s3", "W-2"),                                 // seq 6
		acquire("c3", "W-2", "s3", 4, 0),                   // seq 7
		release("c3", "W-2", "s3", events.ReleaseExplicit), // seq 8
	)...)
	read(t, st, func(conn *sqlite.Conn) {
		live := func(work string, rev, now int64, head bool) string {
			c, err := projections.LiveClaimAt(conn, work, rev, now, head)
			require.NoError(t, err)
			if c == nil {
				return ""
			}
			return fmt.Sprintf("%s@%d", c.ID, c.Revision)
		}
		require.Equal(t, "", live("W-1", 3, ms(3), false), "before the claim")
		require.Equal(t, "c1@4", live("W-1", 4, ms(4), false))
		require.Equal(t, "", live("W-1", 4, ms(10), false), "the first lease ended at t+10")
		require.Equal(t, "c1@5", live("W-1", 5, ms(10), false), "the renewal moved it to t+20")
		require.Equal(t, "c1@5", live("W-1", 8, ms(19), true))
		require.Equal(t, "", live("W-1", 8, ms(20), true))
		require.Equal(t, "c3@7", live("W-2", 7, ms(7), false))
		require.Equal(t, "", live("W-2", 8, ms(8), true), "released")

		held, err := projections.HeldClaimsAt(conn, 8, true)
		require.NoError(t, err)
		require.Len(t, held, 1)
		require.Equal(t, "c1", held[0].ID)
		held, err = projections.HeldClaimsAt(conn, 7, false)
		require.NoError(t, err)
		require.Len(t, held, 2)

		for _, c := range []struct {
			rev, now int64
			head     bool
			want     int
		}{{7, ms(7), false, 2}, {8, ms(8), true, 1}, {8, ms(25), true, 0}, {8, ms(8), false, 1}} {
			all, err := projections.LiveClaimsAt(conn, c.rev, c.now, c.head)
			require.NoError(t, err)
			require.Len(t, all, c.want, "live at %d, now %s, head %v", c.rev, clock(c.now), c.head)
		}

		tok, err := projections.MaxFencingToken(conn, "W-2", 8)
		require.NoError(t, err)
		require.EqualValues(t, 4, tok)
		tok, err = projections.MaxFencingToken(conn, "W-2", 6)
		require.NoError(t, err)
		require.Zero(t, tok)

		mine, err := projections.SessionClaimsAt(conn, "s3", 8)
		require.NoError(t, err)
		require.Len(t, mine, 1)
		require.Equal(t, projections.ClaimReleased, mine[0].State)

		c, err := projections.ClaimAt(conn, "c1", 4)
		require.NoError(t, err)
		require.Equal(t, "expired", c.StateAt(ms(10)))
		require.Equal(t, projections.ClaimHeld, c.StateAt(ms(9)))
		c, err = projections.ClaimAt(conn, "c1", 3)
		require.NoError(t, err)
		require.Nil(t, c)
	})
}
