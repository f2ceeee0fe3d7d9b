//go:build !awrtest

package events_test

import (
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/stretchr/testify/require"
)

// TestVerifyPayloads_EnvIgnored: without the awrtest tag AWR_VERIFY_PAYLOADS
// is not read; the check runs only when a test turns it on.
func TestVerifyPayloads_EnvIgnored(t *testing.T) {
	t.Setenv("AWR_VERIFY_PAYLOADS", "1")
	st, _ := openSeen(t)
	// An empty slice the encoding omits decodes as nil: the check would
	// refuse it.
	mismatch := &events.CheckpointRecorded{CheckpointID: "c1", SessionID: "s1", Work: "T-1", Agent: "a", Digest: "d", NextAction: "n", Changes: []events.KnowledgeChange{}}
	require.NoError(t, appendOne(st, mismatch))
	defer events.SetVerifyPayloads(events.SetVerifyPayloads(true))
	mismatch.CheckpointID = "c2"
	require.Error(t, appendOne(st, mismatch))
}
