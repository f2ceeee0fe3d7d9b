package project_test

import (
	"context"
	"testing"

	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

// opened is the project at dir opened with opts for a test, closed when
// the test and its subtests are done.
func opened(tb testing.TB, dir string, opts project.Options) *project.Project {
	tb.Helper()
	p, err := project.Open(context.Background(), dir, opts)
	require.NoError(tb, err)
	tb.Cleanup(func() { p.Close() })
	return p
}
