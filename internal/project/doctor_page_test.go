package project_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/awr-dev/awr/internal/doctor"
	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

// TestDoctor_PerCode: a project with more stale sessions than a report
// lists shows doctor.PerCode of them, counts the others by code (and in
// findings_total and the severity counts, so ok stays false), and --all
// lists every one.
func TestDoctor_PerCode(t *testing.T) {
	ctx := context.Background()
	dir := openW1Dir(t)
	clock := time.Now()
	p := opened(t, dir, project.Options{Now: func() time.Time { return clock }})
	n := doctor.PerCode + 7
	for i := range n {
		_, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: fmt.Sprintf("a%d", i)})
		require.NoError(t, err)
	}
	clock = clock.Add(48 * time.Hour) // every session idle past the lease

	page, err := p.Doctor(ctx, project.DoctorRequest{})
	require.NoError(t, err)
	all, err := p.Doctor(ctx, project.DoctorRequest{All: true})
	require.NoError(t, err)
	stale := func(fs []project.DoctorFinding) (k int) {
		for _, f := range fs {
			if f.Code == doctor.FindingStaleSession {
				k++
			}
		}
		return k
	}
	require.Equal(t, n, stale(all.Findings))
	require.Equal(t, doctor.PerCode, stale(page.Findings))
	require.Equal(t, map[string]int{doctor.FindingStaleSession: n - doctor.PerCode}, page.NotListed)
	require.Nil(t, all.NotListed)
	require.Equal(t, len(all.Findings), all.FindingsTotal)
	require.Equal(t, all.FindingsTotal, page.FindingsTotal)
	require.Equal(t, len(page.Findings)+n-doctor.PerCode, page.FindingsTotal)
	require.Equal(t, all.Counts, page.Counts)
	require.False(t, page.OK)
	require.Equal(t, all.Findings[:len(page.Findings)], page.Findings, "the listed ones are the first, in rank")
}
