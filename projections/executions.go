package projections

import (
	"encoding/json"
	"fmt"

	"github.com/awr-dev/awr/events"
	"zombiezen.com/go/sqlite"
)

// Execution states as the log records them. A reader at the head further
// tells an ExecStarted execution whose process still runs (running) from
// one whose process is gone (unknown); see the project door.
const (
	ExecStarted   = "started"
	ExecSucceeded = "succeeded"
	ExecFailed    = "failed"
)

// Execution is the read model of one run of a side effect: what started
// (execution_started) and, once it ended, how (execution_finished).
type Execution struct {
	ID        string `json:"id"`
	Work      string `json:"work"`
	Key       string `json:"key"`
	SessionID string `json:"session_id"`
	// State is started (no finish recorded), succeeded (exit 0) or
	// failed.
	State        string                   `json:"state"`
	Purpose      string                   `json:"purpose,omitempty"`
	Argv         []string                 `json:"argv"`
	Cwd          string                   `json:"cwd"`
	Repo         *events.ExecutionRepo    `json:"repo"`
	Process      *events.ExecutionProcess `json:"process,omitempty"`
	ClaimID      string                   `json:"claim_id,omitempty"`
	FencingToken int64                    `json:"fencing_token,omitempty"`
	// Retries names the execution this one runs again; RetriedBy, the
	// execution that ran this one again.
	Retries    string `json:"retries,omitempty"`
	RetriedBy  string `json:"retried_by,omitempty"`
	StartedSeq int64  `json:"started_seq"`
	StartedAt  int64  `json:"started_at"`
	// The finish: nil/zero while none is recorded.
	FinishedSeq int64                   `json:"finished_seq,omitempty"`
	FinishedAt  int64                   `json:"finished_at,omitempty"`
	ExitCode    *int                    `json:"exit_code"`
	Signal      string                  `json:"signal,omitempty"`
	Error       string                  `json:"error,omitempty"`
	DurationMs  int64                   `json:"duration_ms,omitempty"`
	Stdout      *events.ExecutionOutput `json:"stdout,omitempty"`
	Stderr      *events.ExecutionOutput `json:"stderr,omitempty"`
	RepoAfter   *events.ExecutionRepo   `json:"repo_after,omitempty"`
	// Revision is the seq of the event that produced this version.
	Revision int64 `json:"revision"`
}

// stored is what a row keeps besides its columns: the start and finish as
// recorded, with their seqs and times.
type storedStart struct {
	At int64 `json:"at"`
	events.ExecutionStarted
}

type storedFinish struct {
	At int64 `json:"at"`
	events.ExecutionFinished
}

type executions struct {
	base
	rows versions[execRow]
}

// execRow is one version of an execution row.
type execRow struct {
	id, work, key, session, state, retriedBy string
	startedSeq, finishedSeq                  int64
	started, finished                        string
}

func newExecutions() *executions {
	p := &executions{base: base{name: "executions", version: 1, schema: "executions", tables: []Table{
		{Name: "p_executions", Key: []string{"execution_id"}, Temporal: true},
	}}}
	// Rebuilt like the incremental path: the schema's indexes serve the
	// lookups during a rebuild too.
	p.rows = versions[execRow]{insert: putExecRow, load: loadExecRow, close: closeOpen("execution_close", ":execution_id")}
	return p
}

func putExecRow(conn *sqlite.Conn, r *execRow, from, to int64) error {
	return exec(conn, "execution_insert", func(st *sqlite.Stmt) {
		st.SetText(":execution_id", r.id)
		st.SetText(":work", r.work)
		st.SetText(":key", r.key)
		st.SetText(":session_id", r.session)
		st.SetText(":state", r.state)
		st.SetInt64(":started_seq", r.startedSeq)
		st.SetInt64(":finished_seq", r.finishedSeq)
		st.SetText(":retried_by", r.retriedBy)
		st.SetText(":started", r.started)
		st.SetText(":finished", r.finished)
		st.SetInt64(":valid_from", from)
		setValidTo(st, to)
	})
}

func scanExecRow(st *sqlite.Stmt) *execRow {
	return &execRow{id: st.GetText("execution_id"), work: st.GetText("work"), key: st.GetText("key"), session: st.GetText("session_id"),
		state: st.GetText("state"), retriedBy: st.GetText("retried_by"), startedSeq: st.GetInt64("started_seq"),
		finishedSeq: st.GetInt64("finished_seq"), started: st.GetText("started"), finished: st.GetText("finished")}
}

func loadExecRow(conn *sqlite.Conn, id string, _ int64) (*execRow, error) {
	return firstRow(queryRows(conn, "execution_open_row", func(st *sqlite.Stmt) { st.SetText(":execution_id", id) }, deref(scanExecRow)))
}

// Apply folds execution_started and execution_finished.
func (p *executions) Apply(conn *sqlite.Conn, e *events.Event, v events.Payload) error {
	switch pl := v.(type) {
	case *events.ExecutionStarted:
		raw, err := json.Marshal(storedStart{At: e.OccurredAt, ExecutionStarted: *pl})
		if err != nil {
			return err
		}
		if pl.Retries != "" {
			prev, err := p.rows.get(conn, pl.Retries, e.Seq)
			if err != nil {
				return err
			}
			if prev != nil {
				prev.retriedBy = pl.ExecutionID
				if err := p.rows.put(conn, prev.id, e.Seq, prev); err != nil {
					return err
				}
			}
		}
		return p.rows.put(conn, pl.ExecutionID, e.Seq, &execRow{id: pl.ExecutionID, work: pl.Work, key: pl.Key, session: pl.SessionID,
			state: ExecStarted, startedSeq: e.Seq, started: string(raw)})
	case *events.ExecutionFinished:
		cur, err := p.rows.get(conn, pl.ExecutionID, e.Seq)
		if err != nil {
			return err
		}
		if cur == nil {
			return fmt.Errorf("event %d: execution %s finishes but never started", e.Seq, pl.ExecutionID)
		}
		raw, err := json.Marshal(storedFinish{At: e.OccurredAt, ExecutionFinished: *pl})
		if err != nil {
			return err
		}
		cur.state, cur.finishedSeq, cur.finished = ExecFailed, e.Seq, string(raw)
		if pl.ExitCode == 0 && pl.Signal == "" && pl.Error == "" {
			cur.state = ExecSucceeded
		}
		return p.rows.put(conn, cur.id, e.Seq, cur)
	}
	return nil
}

// view decodes a row version into an Execution.
func (r *execRow) view(revision int64) (*Execution, error) {
	var s storedStart
	if err := json.Unmarshal([]byte(r.started), &s); err != nil {
		return nil, fmt.Errorf("execution %s: %w", r.id, err)
	}
	x := &Execution{ID: r.id, Work: r.work, Key: r.key, SessionID: r.session, State: r.state, Purpose: s.Purpose, Argv: s.Argv,
		Cwd: s.Cwd, Repo: s.Repo, Process: s.Process, ClaimID: s.ClaimID, FencingToken: s.FencingToken, Retries: s.Retries,
		RetriedBy: r.retriedBy, StartedSeq: r.startedSeq, StartedAt: s.At, Revision: revision}
	if x.Argv == nil {
		x.Argv = []string{}
	}
	if r.finished != "" {
		var f storedFinish
		if err := json.Unmarshal([]byte(r.finished), &f); err != nil {
			return nil, fmt.Errorf("execution %s: %w", r.id, err)
		}
		code := f.ExitCode
		x.FinishedSeq, x.FinishedAt, x.ExitCode, x.Signal, x.Error, x.DurationMs = r.finishedSeq, f.At, &code, f.Signal, f.Error, f.DurationMs
		x.Stdout, x.Stderr, x.RepoAfter = &f.Stdout, &f.Stderr, f.RepoAfter
	}
	return x, nil
}

func scanExecutions(conn *sqlite.Conn, name string, bind func(st *sqlite.Stmt)) ([]Execution, error) {
	out, err := queryRows(conn, name, bind, func(st *sqlite.Stmt) (Execution, error) {
		x, err := scanExecRow(st).view(st.GetInt64("valid_from"))
		if err != nil {
			return Execution{}, err
		}
		return *x, nil
	})
	if out == nil {
		out = []Execution{} // an empty list, never null
	}
	return out, err
}

// ExecutionAt returns execution id as of rev, or nil.
func ExecutionAt(conn *sqlite.Conn, id string, rev int64) (*Execution, error) {
	return firstRow(scanExecutions(conn, "execution_by_id_at", keyAt(":execution_id", id, rev)))
}

// LatestExecutionOfKey returns the latest execution of key on work at the
// head (for writers inside a transaction), or nil.
func LatestExecutionOfKey(conn *sqlite.Conn, work, key string) (*Execution, error) {
	return firstRow(scanExecutions(conn, "execution_latest_of_key_head", func(st *sqlite.Stmt) {
		st.SetText(":work", work)
		st.SetText(":key", key)
	}))
}

// ExecutionsAt lists the executions as of rev, oldest first, optionally
// only those of one work item or one session ("" for all).
func ExecutionsAt(conn *sqlite.Conn, rev int64, work, session string) ([]Execution, error) {
	out := []Execution{}
	err := ExecutionsPageAt(conn, rev, ExecutionPage{Work: work, Session: session}, func(x Execution) error {
		out = append(out, x)
		return nil
	})
	return out, err
}

// LatestExecutionsOfWorkAt returns the latest n executions of work as of
// rev, newest first, and how many it has in all.
func LatestExecutionsOfWorkAt(conn *sqlite.Conn, work string, rev int64, n int) ([]Execution, int, error) {
	xs, err := scanExecutions(conn, "execution_latest_by_work_at", func(st *sqlite.Stmt) {
		st.SetText(":work", work)
		st.SetInt64(":rev", rev)
		st.SetInt64(":limit", int64(n))
	})
	if err != nil {
		return nil, 0, err
	}
	total := 0
	err = query(conn, "execution_count_by_work_at", keyAt(":work", work, rev), func(st *sqlite.Stmt) error {
		total = int(st.GetInt64("n"))
		return nil
	})
	return xs, total, err
}
