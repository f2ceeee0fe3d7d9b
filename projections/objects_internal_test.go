package projections

import (
	"sort"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/stretchr/testify/require"
)

// TestObjects_DeclaredByTheScripts: schemaObjects, the list the check at
// open reads, names exactly what each projection's schema scripts create.
func TestObjects_DeclaredByTheScripts(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range All() {
		schema := p.(interface{ schemaName() string }).schemaName()
		parsed := map[string]bool{}
		for _, name := range []string{schema, schema + "_indexes"} {
			if script, ok := schemas.Get(name); ok {
				events.ScriptObjects(parsed, script)
			}
		}
		var want []string
		for name := range parsed {
			want = append(want, name)
		}
		sort.Strings(want)
		got := append([]string(nil), schemaObjects[schema]...)
		sort.Strings(got)
		require.Equal(t, want, got, "schemaObjects[%q]", schema)
		seen[schema] = true
	}
	require.Len(t, schemaObjects, len(seen), "schemaObjects names only the projections' schemas")
}

// schemaName is the name of the projection's schema scripts.
func (b base) schemaName() string { return b.schema }
