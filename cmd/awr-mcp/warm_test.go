package main

import (
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWarmReads_SeeOtherWrites: a warm awr-mcp keeps what its reads of
// the head computed (the head's facts, the work queues, the ready page,
// the held claims), and the next call after another process's write
// answers for the new head, exactly as a new `awr` process does; a
// claim that lapses with no write at all shows in the next call too
// (what the memo keeps follows the head, never the clock).
func TestWarmReads_SeeOtherWrites(t *testing.T) {
	awr, bin := binaries(t)
	dir := project(t, awr)
	cs := serve(t, bin, "--project", dir)
	status := func() map[string]any { return ok(t, cs, "awr_status", map[string]any{}) }
	ready := func() map[string]any { return ok(t, cs, "awr_ready", map[string]any{}) }
	readyKeys := func(m map[string]any) []string {
		var keys []string
		for _, it := range m["ready"].([]any) {
			keys = append(keys, it.(map[string]any)["key"].(string))
		}
		return keys
	}
	// Warm: the same head read twice.
	before := status()
	require.Equal(t, before, status())
	require.Contains(t, readyKeys(ready()), "CART-1")
	require.Contains(t, readyKeys(ready()), "CART-1")

	// Another process claims CART-1: the next calls answer for its head,
	// as the CLI does.
	out, err := exec.Command(awr, "--project", dir, "--json", "session", "start", "--work", "CART-1", "--agent", "cli", "--claim").Output()
	require.NoError(t, err)
	var started struct {
		Session struct {
			ID string `json:"id"`
		} `json:"session"`
		ProjectRevision float64 `json:"project_revision"`
	}
	require.NoError(t, json.Unmarshal(out, &started))
	after := status()
	require.Equal(t, started.ProjectRevision, after["project_revision"])
	require.Equal(t, before["live_claims"].(float64)+1, after["live_claims"])
	current := after["queues"].(map[string]any)["current"].([]any)
	require.Len(t, current, 1)
	require.Equal(t, "CART-1", current[0].(map[string]any)["key"])
	require.Equal(t, started.Session.ID, current[0].(map[string]any)["holder"].(map[string]any)["session_id"])
	text, _, isErr := call(t, cs, "awr_status", map[string]any{})
	require.False(t, isErr, text)
	require.Equal(t, cli(t, awr, dir, "status"), text)
	require.NotContains(t, readyKeys(ready()), "CART-1")
	text, _, isErr = call(t, cs, "awr_ready", map[string]any{})
	require.False(t, isErr, text)
	require.Equal(t, cli(t, awr, dir, "ready"), text)

	// That session ends (another write): CART-1 is ready again.
	out, err = exec.Command(awr, "--project", dir, "--json", "session", "end", "--session", started.Session.ID, "--outcome", "interrupted").Output()
	require.NoError(t, err)
	text, _, isErr = call(t, cs, "awr_status", map[string]any{})
	require.False(t, isErr, text)
	require.Equal(t, cli(t, awr, dir, "status"), text)
	require.Contains(t, readyKeys(ready()), "CART-1")

	// A claim of two seconds, then no write: once it lapses, the next
	// call lists the session lapsed at the same head.
	out, err = exec.Command(awr, "--project", dir, "--json", "session", "start", "--work", "CART-1", "--agent", "cli", "--claim", "--ttl", "2s").Output()
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(out, &started))
	lapsed := func(m map[string]any) bool {
		l, _ := m["lapsed_sessions"].([]any)
		return len(l) == 1 && l[0].(map[string]any)["id"] == started.Session.ID
	}
	first := status()
	t.Logf("first call after the claim: lapsed %v (a loaded machine may take the 2 s before it)", lapsed(first))
	_ = ready()
	deadline := time.Now().Add(2 * time.Minute)
	var last map[string]any
	for last = status(); !lapsed(last) && time.Now().Before(deadline); last = status() {
		time.Sleep(100 * time.Millisecond)
	}
	require.True(t, lapsed(last), "the lapsed claim never showed: %v", last["lapsed_sessions"])
	require.Equal(t, started.ProjectRevision, last["project_revision"], "no write came between")
	require.Equal(t, before["live_claims"], last["live_claims"])
	require.Contains(t, readyKeys(ready()), "CART-1", "the lapsed claim's work is ready again")
}
