package rig

import (
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
)

func TestUpResultIncomplete(t *testing.T) {
	ok := &UpResult{Result: FullyRestored, Seats: []*SeatPlan{{Address: "a@r", Outcome: events.SeatResumed}}}
	require.NoError(t, ok.Incomplete("r", false))

	res := &UpResult{Result: PartiallyRestored, Seats: []*SeatPlan{
		{Address: "a@r", Outcome: events.SeatRunning},
		{Address: "b@r", Outcome: "awaiting-decision"},
		{Address: "c@r", Outcome: "failed", Hint: "awr rig up r --fresh c@r"},
	}}
	err := res.Incomplete("r", false)
	e := fault.As(err)
	require.NotNil(t, e)
	require.Equal(t, fault.RestoreIncomplete, e.Code)
	require.Equal(t, "rig r is partially_restored: b@r awaiting-decision, c@r failed", e.Message)
	require.Equal(t, "awr rig up r --fresh c@r", e.Hint, "the first seat's next command")

	res.Seats[2].Hint = ""
	e = fault.As(res.Incomplete("r", true))
	require.Equal(t, "rig r would be partially_restored: b@r awaiting-decision, c@r failed", e.Message)
	require.Equal(t, "awr rig ps r", e.Hint, "no seat's command: the rig's state")
}

func TestRestoreCheckResultIncomplete(t *testing.T) {
	green := &RestoreCheckResult{Result: FullyRestored, Status: CheckYellow}
	require.NoError(t, green.Incomplete("r"), "fully restored with no red check")

	res := &RestoreCheckResult{Result: Failed, Status: CheckRed,
		Checks: []*Check{{Name: CheckTmux, Status: CheckGreen}},
		Seats: []*SeatCheck{{Address: "a@r", Checks: []*Check{
			{Name: CheckCwd, Status: CheckYellow, Remediation: "awr seat show a@r"},
			{Name: CheckProgram, Status: CheckRed, Remediation: "awr rig up r --fresh a@r"},
		}}},
	}
	e := fault.As(res.Incomplete("r"))
	require.NotNil(t, e)
	require.Equal(t, fault.RestoreIncomplete, e.Code)
	require.Equal(t, "rig r would be failed: a@r cwd yellow, a@r program red", e.Message)
	require.Equal(t, "awr rig up r --fresh a@r", e.Hint, "the first remediation of the worst status")

	res.Seats[0].Checks[1].Remediation = ""
	require.Equal(t, "awr rig ps r", fault.As(res.Incomplete("r")).Hint)
}
