package fault_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
)

func TestExitCode(t *testing.T) {
	t.Parallel()
	require.Equal(t, 0, fault.ExitCode(nil))
	require.Equal(t, 2, fault.ExitCode(fault.New(fault.Usage, "bad flag")))
	require.Equal(t, 1, fault.ExitCode(fault.New(fault.NotFound, "no project")))
	require.Equal(t, 1, fault.ExitCode(errors.New("plain")), "an uncoded error is a domain failure, not a usage error")
}

func TestAs(t *testing.T) {
	t.Parallel()
	inner := fault.New(fault.ClaimConflict, "claim W-1: held").With("holder_session", "s1").WithHint("awr session list")
	wrapped := fmt.Errorf("start: %w", inner)
	got := fault.As(wrapped)
	require.Equal(t, fault.ClaimConflict, got.Code)
	require.Equal(t, "s1", got.Details["holder_session"])
	require.Equal(t, "awr session list", got.Hint)
	require.True(t, fault.Is(wrapped, fault.ClaimConflict))
	require.Equal(t, fault.Internal, fault.As(errors.New("boom")).Code)
	require.Nil(t, fault.As(nil))
}
