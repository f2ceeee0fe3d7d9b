package recovery

import (
	"testing"

	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// TestNextStep: the one command a recovery report names next, for each
// state a session can be found in.
func TestNextStep(t *testing.T) {
	t.Parallel()
	active := projections.Session{ID: "S1", Work: "W-1", Status: projections.SessionActive}
	ended := projections.Session{ID: "S1", Work: "W-1", Status: "ended"}
	completed := ended
	completed.Outcome = "completed"
	succeeded := ended
	succeeded.SuccessorID = "S2"
	expired := &ClaimState{StateNow: "expired"}
	for _, c := range []struct {
		name        string
		session     projections.Session
		claim       *ClaimState
		heldByOther bool
		seat        string
		want        string
	}{
		{"succeeded", succeeded, nil, false, "", "awr recovery inspect --session S2"},
		{"completed", completed, nil, false, "", "awr ready"},
		{"ended, work held by another", ended, nil, true, "", `awr session resume --from-session S1 --agent "$USER" --no-claim`},
		{"ended", ended, nil, false, "", `awr session resume --from-session S1 --agent "$USER"`},
		{"active, fenced", active, nil, true, "", "awr session end --session S1 --outcome interrupted"},
		{"active, claim lapsed", active, expired, false, "", `awr session resume --from-session S1 --agent "$USER"`},
		{"active, a seat's claim lapsed", active, expired, false, "dev@starter", "awr rig up starter"},
		{"active", active, &ClaimState{StateNow: "live"}, false, "", "awr context compile --work W-1 --session S1"},
	} {
		rep := &Report{Session: c.session, Claim: c.claim}
		require.Equal(t, c.want, nextStep(rep, c.heldByOther, c.seat), c.name)
	}
}
