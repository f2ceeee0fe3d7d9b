package commands_test

import (
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
)

// A page size is 1 to MaxLimit, the default when left out; 0 and
// negatives are refused, naming the flag.
func TestLimitOf(t *testing.T) {
	t.Parallel()
	n, err := commands.LimitOf("search", "--limit", nil, 20)
	require.NoError(t, err)
	require.Equal(t, 20, n)
	for _, ok := range []int{1, 7, commands.MaxLimit} {
		n, err := commands.LimitOf("search", "--limit", &ok, 20)
		require.NoError(t, err)
		require.Equal(t, ok, n)
	}
	for _, bad := range []int{0, -1, commands.MaxLimit + 1, 1 << 40} {
		_, err := commands.LimitOf("search", "--limit", &bad, 20)
		require.True(t, fault.Is(err, fault.InvalidInput), "%d: %v", bad, err)
		require.Equal(t, "--limit", fault.As(err).Details["flag"])
		require.Contains(t, fault.As(err).Message, "search: --limit")
	}
}
