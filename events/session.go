package events

import "github.com/awr-dev/awr/internal/repo"

// RepoRecord is the git repository a session works in as an event
// captured it: its state (nil when it could not be read, with the reason
// in Unverifiable) and, on a checkpoint, the files changed since the
// previous checkpoint of the session's chain (or since the session
// started). It is captured into the event and never re-read for an old
// revision.
type RepoRecord struct {
	State        *repo.State `json:"state,omitempty"`
	Unverifiable string      `json:"unverifiable,omitempty"`
	FilesChanged []repo.File `json:"files_changed,omitempty"`
	// FilesSince names what FilesChanged is relative to: a checkpoint id,
	// or "session_start".
	FilesSince     string `json:"files_changed_since,omitempty"`
	FilesTruncated bool   `json:"files_changed_truncated,omitempty"`
}

// FilesSinceStart is RepoRecord.FilesSince for files changed since the
// session started.
const FilesSinceStart = "session_start"

// SessionStarted opens a work session (stream "session/<id>").
type SessionStarted struct {
	SessionID     string `json:"session_id"`
	Work          string `json:"work"`
	Agent         string `json:"agent"`
	Provider      string `json:"provider,omitempty"`
	Model         string `json:"model,omitempty"`
	PredecessorID string `json:"predecessor_id,omitempty"`
	// Workdir is the session's working directory, relative to the project
	// root ("" for the root itself); Repo, its repository at the start.
	Workdir string      `json:"workdir,omitempty"`
	Repo    *RepoRecord `json:"repo,omitempty"`
}

// Kind returns KindSessionStarted.
func (SessionStarted) Kind() Kind { return KindSessionStarted }

// SessionResumed links a new session to the session it continues (stream
// "session/<new id>"); it follows the new session's SessionStarted event.
type SessionResumed struct {
	SessionID    string `json:"session_id"`
	FromSession  string `json:"from_session"`
	Work         string `json:"work"`
	CheckpointID string `json:"checkpoint_id,omitempty"`
	// ExternalSession is the key of the host conversation the resume was
	// made for ("CLIENT:ID" or "HOST:ID"): only that conversation's
	// binding may follow the resume into the new session.
	ExternalSession string `json:"external_session,omitempty"`
}

// Kind returns KindSessionResumed.
func (SessionResumed) Kind() Kind { return KindSessionResumed }

// ContextCompiled records that a context packet was compiled for a session
// (stream "session/<id>"), so a later checkpoint can prove which context it
// was based on.
type ContextCompiled struct {
	SessionID     string `json:"session_id"`
	Work          string `json:"work"`
	ContextHash   string `json:"context_hash"`
	TokenEstimate int    `json:"token_estimate"`
	TokenBudget   int    `json:"token_budget"`
	Complete      bool   `json:"complete"`
	// Held says the session held the live claim on the work when the
	// packet was compiled; a checkpoint's hash verifies only then.
	Held bool `json:"held,omitempty"`
}

// Kind returns KindContextCompiled.
func (ContextCompiled) Kind() Kind { return KindContextCompiled }

// CheckpointRecorded records what an agent actually did and what it will do
// next (stream "session/<id>"). CheckpointID is the id of the event itself.
type CheckpointRecorded struct {
	CheckpointID        string `json:"checkpoint_id"`
	SessionID           string `json:"session_id"`
	Work                string `json:"work"`
	Agent               string `json:"agent"`
	ContextHash         string `json:"context_hash,omitempty"`
	ContextHashVerified bool   `json:"context_hash_verified"`
	Digest              string `json:"digest"`
	NextAction          string `json:"next_action"`
	// OpenLoops is the form of loops in logs written before knowledge
	// ids: each text opens a loop unless an open loop of the work item has
	// the same text. Checkpoints now say what they change in Changes.
	OpenLoops []string `json:"open_loops,omitempty"`
	// Changes opens, resolves, drops, confirms, retracts and supersedes
	// the loops, decisions, facts and hypotheses of the work item.
	Changes []KnowledgeChange `json:"changes,omitempty"`
	// ContextHashNote says why a given context hash is not verified.
	ContextHashNote string `json:"context_hash_note,omitempty"`
	// Repo is the session's repository at the checkpoint.
	Repo *RepoRecord `json:"repo,omitempty"`
}

// Kind returns KindCheckpointRecorded.
func (CheckpointRecorded) Kind() Kind { return KindCheckpointRecorded }

// Session outcomes recorded by SessionEnded.
const (
	OutcomeCompleted   = "completed"
	OutcomeIncomplete  = "incomplete"
	OutcomeInterrupted = "interrupted"
	OutcomeAbandoned   = "abandoned"
)

// SessionEnded closes a session (stream "session/<id>"). It never changes
// the status of the work item in its source.
type SessionEnded struct {
	SessionID string `json:"session_id"`
	Work      string `json:"work"`
	Outcome   string `json:"outcome"`
	Reason    string `json:"reason,omitempty"`
}

// Kind returns KindSessionEnded.
func (SessionEnded) Kind() Kind { return KindSessionEnded }

// RestatementItem is one field of a successor's restatement compared with
// the recorded state: match, missing, extra, mismatch, closed (a closed item stated as live) or unverifiable.
type RestatementItem struct {
	Field    string `json:"field"`
	Status   string `json:"status"`
	Expected string `json:"expected,omitempty"`
	Stated   string `json:"stated,omitempty"`
}

// RestatementChecked records that a session's restatement of its handoff
// was checked against the recorded state (stream "session/<id>"), so an
// auditor can see that a handoff was proven, or where it was not.
type RestatementChecked struct {
	SessionID    string            `json:"session_id"`
	Work         string            `json:"work"`
	CheckpointID string            `json:"checkpoint_id,omitempty"`
	Verdict      string            `json:"verdict"`
	Items        []RestatementItem `json:"items"`
}

// Kind returns KindRestatementChecked.
func (RestatementChecked) Kind() Kind { return KindRestatementChecked }
