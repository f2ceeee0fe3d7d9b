package events

// Evidence levels, strongest first: observed (awr ran the command and saw
// its exit status), reported (a result someone reported, or a file's
// content hash), note (a statement).
const (
	LevelObserved = "observed"
	LevelReported = "reported"
	LevelNote     = "note"
)

// Evidence bases: what an evidence_recorded stands on.
const (
	EvidenceCommand = "command"
	EvidenceFile    = "file"
	EvidenceNote    = "note"
)

// EvidenceRecorded is evidence against one acceptance criterion of a work
// item (stream "evidence/<key>"). Criterion is the criterion's text as the
// source stated it when the evidence was recorded (Index its 1-based
// position then), so evidence follows a criterion, not a position. Passed
// says whether it supports the criterion (a command that exited 0, a file
// that exists, a note). Repo is the repository when it was recorded:
// evidence counts toward completion only at the same HEAD and dirty
// content.
type EvidenceRecorded struct {
	EvidenceID string `json:"evidence_id"`
	Work       string `json:"work"`
	Criterion  string `json:"criterion"`
	Index      int    `json:"index"`
	Basis      string `json:"basis"`
	Level      string `json:"level"`
	Passed     bool   `json:"passed"`
	SessionID  string `json:"session_id,omitempty"`
	Agent      string `json:"agent,omitempty"`
	// Command, ExitCode, DurationMs and the output's hash and size, for a
	// command (OutputHash empty for a reported result).
	Command    string `json:"command,omitempty"`
	ExitCode   *int   `json:"exit_code,omitempty"`
	DurationMs int64  `json:"duration_ms,omitempty"`
	OutputHash string `json:"output_hash,omitempty"`
	OutputSize int64  `json:"output_size,omitempty"`
	// Path and FileHash, for a file (relative to the project).
	Path     string `json:"path,omitempty"`
	FileHash string `json:"file_hash,omitempty"`
	// Note, for a note.
	Note string    `json:"note,omitempty"`
	Repo *SeatRepo `json:"repo,omitempty"`
	// RepoAfter is the repository after the command ran, when the command
	// changed it: the evidence then speaks for Repo only.
	RepoAfter *SeatRepo `json:"repo_after,omitempty"`
}

// Kind returns KindEvidenceRecorded.
func (EvidenceRecorded) Kind() Kind { return KindEvidenceRecorded }

// VerifiedCriterion is one criterion of a verified work item and the
// evidence that carried it.
type VerifiedCriterion struct {
	Criterion  string `json:"criterion"`
	EvidenceID string `json:"evidence_id"`
	Level      string `json:"level"`
}

// WorkVerified records that every acceptance criterion of a work item had
// passing evidence at the repository state Repo, at the level the project
// requires (stream "evidence/<key>"). awr never edits the team's sources:
// this event is where completion is recorded.
type WorkVerified struct {
	Work      string              `json:"work"`
	SessionID string              `json:"session_id"`
	Level     string              `json:"level"`
	Criteria  []VerifiedCriterion `json:"criteria"`
	Repo      *SeatRepo           `json:"repo,omitempty"`
}

// Kind returns KindWorkVerified.
func (WorkVerified) Kind() Kind { return KindWorkVerified }
