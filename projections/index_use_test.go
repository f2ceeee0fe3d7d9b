package projections

import (
	"context"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// foldIndexes names the indexes the projection's fold reads (base.fold).
func (b base) foldIndexes() []string { return b.fold }

// TestEveryProjectionIndexIsUsed holds every index of the projections'
// tables to a reason to exist, since each costs every row written to
// its table one more b-tree insert: a UNIQUE index (a constraint), an
// index a fold reads (base.fold), or one that the query plan of some
// statement awr prepares against the projections names. The statements
// are every file of sql/ (the one set every read and write of the
// projections goes through: names built at run time, such as
// "item_brief"+"_item"+"_at", are files of it too) and the reads of
// Checksum. The plans are taken on an empty store: awr never runs
// ANALYZE, so SQLite chooses an index from the schema and the statement
// alone, never from the rows; and no statement compares a bound
// parameter with LIKE or GLOB, or has a bare LIMIT parameter, whose
// value would be read at planning (checked here, and by PrepareAll).
func TestEveryProjectionIndexIsUsed(t *testing.T) {
	st, err := events.Open(context.Background(), events.DBPath(t.TempDir()), events.Options{Create: true, Projectors: Projectors()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	fold := map[string]bool{}
	for _, p := range All() {
		for _, name := range p.(interface{ foldIndexes() []string }).foldIndexes() {
			fold[name] = true
		}
	}
	require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error {
		used := plannedIndexes(t, r.Conn)
		indexes := projectionIndexes(t, r.Conn)
		for name := range fold {
			require.Contains(t, indexes, name, "base.fold names an index no schema creates")
		}
		var unused []string
		for name, unique := range indexes {
			if !unique && !fold[name] && len(used[name]) == 0 {
				unused = append(unused, name)
			}
		}
		sort.Strings(unused)
		require.Empty(t, unused, "no statement of projections/sql nor Checksum is planned through these indexes, none is UNIQUE and no fold reads them (base.fold): each costs every row of its table an index insert for nothing; remove it from projections/schema (and schemaObjects) and bump its projection's version")
		return nil
	}))
}

// indexInPlan finds the index a line of EXPLAIN QUERY PLAN reads.
var indexInPlan = regexp.MustCompile(`USING (?:COVERING )?INDEX (\w+)`)

// valueInPlan finds a comparison whose plan depends on a bound value.
var valueInPlan = regexp.MustCompile(`(?i)\b(?:LIKE|GLOB)\s+[:@$?]`)

// plannedIndexes maps each index named by the query plan of a statement
// awr prepares against the projections to those statements' names.
func plannedIndexes(t *testing.T, conn *sqlite.Conn) map[string][]string {
	t.Helper()
	queries := map[string]string{}
	for _, name := range statements.Names() {
		q, ok := statements.Get(name)
		require.True(t, ok, name)
		queries[name] = q
	}
	for _, p := range All() {
		for _, tb := range p.Tables() {
			queries["Checksum "+tb.Name] = checksumQuery(tb)
		}
	}
	used := map[string][]string{}
	for name, q := range queries {
		require.False(t, valueInPlan.MatchString(q), "%s: LIKE or GLOB with a parameter is planned from its value: plan it with the values the code binds", name)
		plan, err := events.QueryPlan(conn, q)
		require.NoError(t, err, name)
		for _, line := range plan {
			for _, m := range indexInPlan.FindAllStringSubmatch(line, -1) {
				used[m[1]] = append(used[m[1]], name)
			}
		}
	}
	return used
}

// projectionIndexes maps the name of each index over a projection table
// (p_...) that a schema script creates to whether it is UNIQUE.
func projectionIndexes(t *testing.T, conn *sqlite.Conn) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := sqlitex.ExecuteTransient(conn, `SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL AND tbl_name LIKE 'p\_%' ESCAPE '\'`, &sqlitex.ExecOptions{
		ResultFunc: func(st *sqlite.Stmt) error {
			out[st.ColumnText(0)] = strings.HasPrefix(st.ColumnText(1), "CREATE UNIQUE ")
			return nil
		},
	})
	require.NoError(t, err)
	require.NotEmpty(t, out)
	return out
}

// TestOpen_DropsRemovedIndexes: a project whose claims and work
// projections were built by the last versions with an index since
// removed (claims 9 with p_claims_from and p_claims_work, work 6 with
// p_goals_from and p_rules_from, search 3 with p_search_open) rebuilds
// them at its first open, without the index.
func TestOpen_DropsRemovedIndexes(t *testing.T) {
	ctx := context.Background()
	path := events.DBPath(t.TempDir())
	st, err := events.Open(ctx, path, events.Options{Create: true, Projectors: Projectors()})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	conn, err := events.OpenConn(path, sqlite.OpenReadWrite)
	require.NoError(t, err)
	for _, q := range []string{
		"CREATE INDEX p_claims_from ON p_claims (valid_from)",
		"CREATE INDEX p_claims_work ON p_claims (work, valid_from)",
		"CREATE INDEX p_goals_from ON p_goals (valid_from)",
		"CREATE INDEX p_rules_from ON p_rules (valid_from)",
		"CREATE INDEX p_search_open ON p_search (doc) WHERE valid_to IS NULL",
		"UPDATE projections SET version = 3 WHERE name = 'search'",
		"UPDATE projections SET version = 9 WHERE name = 'claims'",
		"UPDATE projections SET version = 6 WHERE name = 'work'",
	} {
		require.NoError(t, sqlitex.ExecuteTransient(conn, q, nil), q)
	}
	require.NoError(t, conn.Close())
	st, err = events.Open(ctx, path, events.Options{Projectors: Projectors()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
		indexes := projectionIndexes(t, r.Conn)
		for _, name := range []string{"p_claims_from", "p_claims_work", "p_goals_from", "p_rules_from", "p_search_open"} {
			require.NotContains(t, indexes, name)
		}
		require.Contains(t, indexes, "p_claims_key", "the claims projection is rebuilt whole")
		states, err := events.ProjectionStates(r.Conn)
		for _, s := range states {
			for _, p := range All() {
				if p.Name() == s.Name {
					require.Equal(t, p.Version(), s.Version, s.Name)
				}
			}
		}
		return err
	}))
}
