package anchor_test

import (
	"testing"

	"github.com/awr-dev/awr/internal/anchor"
	"github.com/stretchr/testify/require"
)

func TestVerdictOf(t *testing.T) {
	require.Equal(t, anchor.NotAnchored, anchor.VerdictOf(0), "no anchor: the verdict says what a pass cannot prove")
	require.Contains(t, anchor.VerdictOf(0), "run `awr anchor`")
	require.Equal(t, "chain intact, verified against 1 anchor", anchor.VerdictOf(1))
	require.Equal(t, "chain intact, verified against 3 anchors", anchor.VerdictOf(3))
}
