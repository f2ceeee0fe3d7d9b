package projections_test

import (
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// TestObjects: every projection names its schema objects for the check
// at open, each a p_ name, none claimed by two projections.
func TestObjects(t *testing.T) {
	owner := map[string]string{}
	for _, p := range projections.All() {
		sp, ok := p.(events.SchemaProjector)
		require.True(t, ok, "%s names no schema objects", p.Name())
		require.NotEmpty(t, sp.Objects(), p.Name())
		for _, name := range sp.Objects() {
			require.Regexp(t, `^p_[a-z_]+$`, name)
			require.Empty(t, owner[name], "%s is %s's and %s's", name, owner[name], p.Name())
			owner[name] = p.Name()
		}
	}
}

// BenchmarkObjects is the projectors' part of the schema check every open
// runs: reading and parsing their schema scripts.
func BenchmarkObjects(b *testing.B) {
	for b.Loop() {
		for _, p := range projections.Projectors() {
			p.(events.SchemaProjector).Objects()
		}
	}
}
