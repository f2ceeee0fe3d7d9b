package projections_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// The harness of the Apply tables: each case is a short log, appended one
// event per write through a real SQLite store with every projector
// registered, and the rows a SQL query reads back from the projection's
// tables afterwards. Every case is then rebuilt from the log: the rebuild
// must give the same rows and the same checksum as incremental application.

// printRows logs, for each case, the rows and reads it got in the form
// of the table's fields: a reader checks them before pasting them in.
var printRows = flag.Bool("print-rows", false, "log the rows and reads each Apply case got, as table fields")

// t0 is the clock of the first write; the write of seq n happens at
// t0 + n seconds, so an event's occurred_at is ms(n).
var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// ms returns the occurred_at, in UTC milliseconds, of the event at seq.
func ms(seq int64) int64 { return t0.Add(time.Duration(seq) * time.Second).UnixMilli() }

// applyCase is one row of an Apply table.
type applyCase struct {
	name string
	// log is appended in order, one event per write, at seqs 1, 2, ...
	log []events.Payload
	// err, when set, is a substring of the error the last event's write
	// must fail with: the write appends nothing and changes no row.
	err string
	// invalid, when set, is the domain rule the log breaks: the write
	// path applies it (the commands refuse such logs before they write),
	// but a rebuild refuses it, naming the problem, and leaves the rows
	// as they were.
	invalid string
	// rows are the rows query reads after the log (and after a rebuild).
	rows []string
	// at maps a revision to what read (the test's read at a revision)
	// returns there.
	at map[int64]string
}

// applyTable runs cases against a fresh store each, reading rows with
// query (its columns rendered by dump) and revisions with read.
func applyTable(t *testing.T, query string, read func(t *testing.T, conn *sqlite.Conn, rev int64) string, cases []applyCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			st := openLog(t)
			want := int64(len(c.log))
			for i, p := range c.log {
				_, err := appendOne(st, int64(i+1), p)
				if c.err != "" && i == len(c.log)-1 {
					require.ErrorContains(t, err, c.err)
					want--
					continue
				}
				require.NoError(t, err, "event %d (%s)", i+1, p.Kind())
			}
			check := func(stage string) []string {
				var sums []string
				require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error {
					require.Equal(t, want, r.Head, stage)
					got := dump(t, r.Conn, query)
					if *printRows {
						var b strings.Builder
						for _, g := range got {
							fmt.Fprintf(&b, "\t%q,\n", g)
						}
						for rev := range c.at {
							fmt.Fprintf(&b, "%d: %q,\n", rev, read(t, r.Conn, rev))
						}
						t.Logf("%s\n%s", stage, b.String())
					}
					require.Equal(t, c.rows, got, "%s: rows", stage)
					for rev, w := range c.at {
						require.Equal(t, w, read(t, r.Conn, rev), "%s: read at %d", stage, rev)
					}
					for _, p := range projections.All() {
						sum, err := projections.Checksum(r.Conn, p)
						require.NoError(t, err)
						sums = append(sums, p.Name()+" "+sum)
					}
					return nil
				}))
				return sums
			}
			incremental := check("incremental")
			err := st.Rebuild(context.Background(), nil)
			if c.invalid != "" {
				require.True(t, fault.Is(err, fault.VerifyFailed), "%v", err)
				require.ErrorContains(t, err, c.invalid)
				require.Equal(t, incremental, check("refused rebuild"), "checksums after a refused rebuild")
				return
			}
			require.NoError(t, err)
			require.Equal(t, incremental, check("rebuilt"), "checksums after a rebuild")
			require.Equal(t, incremental, spilledChecksums(t, st), "checksums after a rebuild whose projections spill")
		})
	}
}

// spilledChecksums rebuilds st's log into a scratch database with
// projectors that spill at once (projections.SpillingProjectors: each
// leaves its bulk mode as soon as it holds more than one open version and
// folds the rest incrementally) and returns the checksums of the result,
// as check lists them. Every table and index of the projections must be
// there at the end: a spill builds only the indexes the fold reads, the
// rebuild's end the others.
func spilledChecksums(t *testing.T, st *events.Store) []string {
	t.Helper()
	dst, err := events.OpenConn(filepath.Join(t.TempDir(), "scratch.db"), sqlite.OpenReadWrite|sqlite.OpenCreate)
	require.NoError(t, err)
	defer dst.Close()
	require.NoError(t, events.EnsureProjectionTable(dst))
	var sums []string
	require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error {
		endFn, err := sqlitex.ImmediateTransaction(dst)
		require.NoError(t, err)
		err = events.RebuildFrom(r.Conn, dst, projections.SpillingProjectors(), r.Head, nil)
		endFn(&err)
		require.NoError(t, err)
		for _, p := range projections.All() {
			for _, name := range p.(events.SchemaProjector).Objects() {
				n, err := sqlitex.ResultInt(dst.Prep("SELECT count(*) FROM sqlite_schema WHERE name = '" + name + "'"))
				require.NoError(t, err)
				require.Equal(t, 1, n, "projection %s: %s is missing after a rebuild that spilled", p.Name(), name)
			}
		}
		for _, p := range projections.All() {
			sum, err := projections.Checksum(dst, p)
			require.NoError(t, err)
			sums = append(sums, p.Name()+" "+sum)
		}
		return nil
	}))
	return sums
}

// openLog opens a new store in t.TempDir() with every projector.
func openLog(t *testing.T) *events.Store {
	t.Helper()
	st, err := events.Open(context.Background(), events.DBPath(t.TempDir()), events.Options{Create: true, Projectors: projections.Projectors()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

// joinRows renders rows, read with err (which must be nil), one by line
// each, separated by "; ": how the tables' reads at a revision are
// written.
func joinRows[T any](t *testing.T, rows []T, err error, line func(T) string) string {
	t.Helper()
	require.NoError(t, err)
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, line(r))
	}
	return strings.Join(out, "; ")
}

// logOf opens a store (openLog) holding log, appended one event per
// write at seqs 1, 2, ...; every write must succeed.
func logOf(t *testing.T, log ...events.Payload) *events.Store {
	t.Helper()
	st := openLog(t)
	for i, p := range log {
		_, err := appendOne(st, int64(i+1), p)
		require.NoError(t, err, "event %d (%s)", i+1, p.Kind())
	}
	return st
}

// appendOne appends p in one write at the clock of seq.
func appendOne(st *events.Store, seq int64, p events.Payload) (*events.WriteResult, error) {
	opts := events.WriteOptions{Now: t0.Add(time.Duration(seq) * time.Second), Entropy: rand.New(rand.NewSource(seq)), Actor: "tester"}
	return st.Write(context.Background(), opts, func(tx *events.Tx) (any, error) {
		return nil, appendIn(tx, p)
	})
}

// appendIn appends p in tx; a checkpoint without an id gets the event's
// id, as the commands give it.
func appendIn(tx *events.Tx, p events.Payload) error {
	ne := events.NewEvent{Stream: streamOf(p), Payload: p}
	if cp, ok := p.(*events.CheckpointRecorded); ok && cp.CheckpointID == "" {
		named := *cp
		named.CheckpointID = tx.NewID()
		ne.ID, ne.Payload = named.CheckpointID, &named
	}
	_, err := tx.Append(ne)
	return err
}

// streamOf returns the stream the commands append p on (the one a rebuild
// checks it against).
func streamOf(p events.Payload) string {
	switch pl := p.(type) {
	case *events.SourceIndexed:
		return "source/" + pl.Path
	case *events.SessionStarted:
		return "session/" + pl.SessionID
	case *events.SessionResumed:
		return "session/" + pl.SessionID
	case *events.ContextCompiled:
		return "session/" + pl.SessionID
	case *events.CheckpointRecorded:
		return "session/" + pl.SessionID
	case *events.SessionEnded:
		return "session/" + pl.SessionID
	case *events.ClientBound:
		return "client/" + pl.ExternalSession
	case *events.ClaimAcquired:
		return "work/" + pl.Work
	case *events.ClaimRenewed:
		return "work/" + pl.Work
	case *events.ClaimReleased:
		return "work/" + pl.Work
	case *events.EvidenceRecorded:
		return "evidence/" + pl.Work
	case *events.WorkVerified:
		return "evidence/" + pl.Work
	case *events.RestatementChecked:
		return "session/" + pl.SessionID
	case *events.ExecutionStarted:
		return events.ExecutionStream(pl.Work, pl.Key)
	case *events.ExecutionFinished:
		return events.ExecutionStream(pl.Work, pl.Key)
	case *events.SeatDeclared:
		return "seat/" + pl.Address
	case *events.SeatRemoved:
		return "seat/" + pl.Address
	case *events.SeatLaunched:
		return "seat/" + pl.Address
	case *events.SeatRestored:
		return "seat/" + pl.Address
	case *events.SeatReconciled:
		return "seat/" + pl.Address
	case *events.StopRequested:
		return "seat/" + pl.Address
	case *events.SeatDecided:
		return "seat/" + pl.Address
	case *events.SeatAttentionCleared:
		return "seat/" + pl.Address
	case *events.RigSnapshotTaken:
		return "rig/" + pl.Rig
	case *events.RestoreStarted:
		return "rig/" + pl.Rig
	case *events.RestoreCompleted:
		return "rig/" + pl.Rig
	}
	return "test/" + string(p.Kind())
}

// declare is the index of tasks.md declaring the work items keys, each
// "todo" with the title "Do KEY".
func declare(keys ...string) *events.SourceIndexed {
	p := &events.SourceIndexed{Path: "tasks.md", Adapter: "markdown", ContentHash: "h-" + strings.Join(keys, "-")}
	for _, k := range keys {
		p.Items = append(p.Items, events.WorkItem{Key: k, Title: "Do " + k, Status: "todo"})
	}
	return p
}

// dump runs q and renders each row as its columns separated by single
// spaces, NULL as "-", the empty string as "”" and times as clock
// renders them.
func dump(t *testing.T, conn *sqlite.Conn, q string) []string {
	t.Helper()
	st, _, err := conn.PrepareTransient(q)
	require.NoError(t, err, q)
	defer st.Finalize()
	var out []string
	for {
		ok, err := st.Step()
		require.NoError(t, err, q)
		if !ok {
			return out
		}
		cols := make([]string, st.ColumnCount())
		for i := range cols {
			switch st.ColumnType(i) {
			case sqlite.TypeNull:
				cols[i] = "-"
			case sqlite.TypeInteger:
				cols[i] = clock(st.ColumnInt64(i))
			default:
				if cols[i] = st.ColumnText(i); cols[i] == "" {
					cols[i] = "''"
				}
			}
		}
		out = append(out, strings.Join(cols, " "))
	}
}

// clock renders n as "t+S" when it is a time of the test's clock (S
// seconds after t0), as a number otherwise.
func clock(n int64) string {
	if d := n - t0.UnixMilli(); d >= 0 && d < 1e7 && d%1000 == 0 {
		return fmt.Sprintf("t+%d", d/1000)
	}
	return fmt.Sprint(n)
}

// noRead is the read of a table with no temporal reads.
func noRead(t *testing.T, conn *sqlite.Conn, rev int64) string { return "" }
