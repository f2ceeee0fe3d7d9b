package projections_test

import (
	"fmt"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
)

const executionRows = `SELECT execution_id, work, key, session_id, state, started_seq, finished_seq, retried_by,
	json_extract(started, '$.at'), iif(finished = '', 'unfinished', json_extract(finished, '$.exit_code')), valid_from, valid_to
	FROM p_executions ORDER BY execution_id, valid_from`

// readExecutions renders ExecutionsAt(rev) as "id state exit retries>retried_by @revision".
func readExecutions(t *testing.T, conn *sqlite.Conn, rev int64) string {
	t.Helper()
	all, err := projections.ExecutionsAt(conn, rev, "", "")
	return joinRows(t, all, err, func(x projections.Execution) string {
		exit := "-"
		if x.ExitCode != nil {
			exit = fmt.Sprint(*x.ExitCode)
		}
		return fmt.Sprintf("%s %s %s %s>%s @%d", x.ID, x.State, exit, x.Retries, x.RetriedBy, x.Revision)
	})
}

func run(id, key, retries string) *events.ExecutionStarted {
	return &events.ExecutionStarted{ExecutionID: id, Work: "W-1", SessionID: "s1", Key: key, Purpose: "check " + key,
		Argv: []string{"go", "test", "./..."}, ClaimID: "c1", FencingToken: 1, Retries: retries}
}

func finish(id, key string, exit int) *events.ExecutionFinished {
	return &events.ExecutionFinished{ExecutionID: id, Work: "W-1", SessionID: "s1", Key: key, ExitCode: exit, DurationMs: 1500,
		Stdout: events.ExecutionOutput{SHA256: "aa", Bytes: 10, Kept: 10}}
}

// holding is the log every executions case starts from: W-1 declared, s1
// started on it and holding claim c1 (seqs 1-3).
func holding(more ...events.Payload) []events.Payload {
	return append([]events.Payload{declare("W-1"), start("s1", "W-1"), acquire("c1", "W-1", "s1", 1, 0)}, more...)
}

// TestExecutions_Apply: execution_started opens a started row, its finish
// makes it succeeded or failed, and a retry names the run it repeats on
// that run's row.
func TestExecutions_Apply(t *testing.T) {
	t.Parallel()
	applyTable(t, executionRows, readExecutions, []applyCase{
		{
			name: "Started",
			log:  holding(run("x1", "test", "")),
			rows: []string{
				"x1 W-1 test s1 started 4 0 '' t+4 unfinished 4 -",
			},
			at: map[int64]string{
				3: "",
				4: "x1 started - > @4",
			},
		},
		{
			name: "Succeeded",
			log:  holding(run("x1", "test", ""), finish("x1", "test", 0)),
			rows: []string{
				"x1 W-1 test s1 started 4 0 '' t+4 unfinished 4 5",
				"x1 W-1 test s1 succeeded 4 5 '' t+4 0 5 -",
			},
			at: map[int64]string{
				4: "x1 started - > @4",
				5: "x1 succeeded 0 > @5",
			},
		},
		{
			name: "FailedThenRetried",
			log:  holding(run("x1", "test", ""), finish("x1", "test", 2), run("x2", "test", "x1"), finish("x2", "test", 0)),
			rows: []string{
				"x1 W-1 test s1 started 4 0 '' t+4 unfinished 4 5",
				"x1 W-1 test s1 failed 4 5 '' t+4 2 5 6",
				"x1 W-1 test s1 failed 4 5 x2 t+4 2 6 -",
				"x2 W-1 test s1 started 6 0 '' t+6 unfinished 6 7",
				"x2 W-1 test s1 succeeded 6 7 '' t+6 0 7 -",
			},
			at: map[int64]string{
				5: "x1 failed 2 > @5",
				6: "x1 failed 2 >x2 @6; x2 started - x1> @6",
				7: "x1 failed 2 >x2 @6; x2 succeeded 0 x1> @7",
			},
		},
		{
			// A signal or an error fails the run whatever its exit code.
			name: "SignalledAndErrored",
			log: holding(run("x1", "build", ""), &events.ExecutionFinished{ExecutionID: "x1", Work: "W-1", SessionID: "s1", Key: "build", Signal: "SIGKILL"},
				run("x2", "lint", ""), &events.ExecutionFinished{ExecutionID: "x2", Work: "W-1", SessionID: "s1", Key: "lint", Error: "no such program"}),
			rows: []string{
				"x1 W-1 build s1 started 4 0 '' t+4 unfinished 4 5",
				"x1 W-1 build s1 failed 4 5 '' t+4 0 5 -",
				"x2 W-1 lint s1 started 6 0 '' t+6 unfinished 6 7",
				"x2 W-1 lint s1 failed 6 7 '' t+6 0 7 -",
			},
			at: map[int64]string{
				7: "x1 failed 0 > @5; x2 failed 0 > @7",
			},
		},
		{
			name: "ErrFinishNeverStarted",
			log:  holding(run("x1", "test", ""), finish("x9", "test", 0)),
			err:  "execution x9 finishes but never started",
			rows: []string{
				"x1 W-1 test s1 started 4 0 '' t+4 unfinished 4 -",
			},
		},
		{
			// A retry of a run the projection never saw opens its own row
			// and touches no other; the log's rules refuse it.
			name:    "RetryOfUnknownRun",
			log:     holding(run("x2", "test", "x0")),
			invalid: "execution x2 retries x0, which is not an execution of test on W-1",
			rows: []string{
				"x2 W-1 test s1 started 4 0 '' t+4 unfinished 4 -",
			},
			at: map[int64]string{
				4: "x2 started - x0> @4",
			},
		},
		{
			name:    "FinishedTwice",
			log:     holding(run("x1", "test", ""), finish("x1", "test", 1), finish("x1", "test", 0)),
			invalid: "execution x1 finishes twice",
			rows: []string{
				"x1 W-1 test s1 started 4 0 '' t+4 unfinished 4 5",
				"x1 W-1 test s1 failed 4 5 '' t+4 1 5 6",
				"x1 W-1 test s1 succeeded 4 6 '' t+4 0 6 -",
			},
			at: map[int64]string{
				6: "x1 succeeded 0 > @6",
			},
		},
	})
}

// TestExecutions_Reads: an execution read back carries what its start
// and finish recorded, and the per-work reads count and order them.
func TestExecutions_Reads(t *testing.T) {
	t.Parallel()
	st := logOf(t, holding(run("x1", "test", ""), finish("x1", "test", 2), run("x2", "test", "x1"), run("x3", "lint", ""))...)
	read(t, st, func(conn *sqlite.Conn) {
		x, err := projections.ExecutionAt(conn, "x1", 5)
		require.NoError(t, err)
		two := 2
		require.Equal(t, &projections.Execution{
			ID: "x1", Work: "W-1", Key: "test", SessionID: "s1", State: projections.ExecFailed, Purpose: "check test",
			Argv: []string{"go", "test", "./..."}, ClaimID: "c1", FencingToken: 1, StartedSeq: 4, StartedAt: ms(4),
			FinishedSeq: 5, FinishedAt: ms(5), ExitCode: &two, DurationMs: 1500,
			Stdout: &events.ExecutionOutput{SHA256: "aa", Bytes: 10, Kept: 10}, Stderr: &events.ExecutionOutput{},
			Revision: 5,
		}, x)
		x, err = projections.ExecutionAt(conn, "x1", 4)
		require.NoError(t, err)
		require.Equal(t, projections.ExecStarted, x.State)
		require.Nil(t, x.ExitCode)
		x, err = projections.ExecutionAt(conn, "x1", 3)
		require.NoError(t, err)
		require.Nil(t, x)

		latest, err := projections.LatestExecutionOfKey(conn, "W-1", "test")
		require.NoError(t, err)
		require.Equal(t, "x2", latest.ID)
		latest, err = projections.LatestExecutionOfKey(conn, "W-1", "deploy")
		require.NoError(t, err)
		require.Nil(t, latest)

		xs, total, err := projections.LatestExecutionsOfWorkAt(conn, "W-1", 7, 2)
		require.NoError(t, err)
		require.Equal(t, 3, total)
		require.Equal(t, []string{"x3", "x2"}, []string{xs[0].ID, xs[1].ID})

		bySession, err := projections.ExecutionsAt(conn, 7, "", "s9")
		require.NoError(t, err)
		require.Empty(t, bySession)
		byWork, err := projections.ExecutionsAt(conn, 7, "W-1", "")
		require.NoError(t, err)
		require.Len(t, byWork, 3)
	})
}
