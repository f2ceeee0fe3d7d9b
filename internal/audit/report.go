package audit

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/awr-dev/awr/events"
)

// Formats a report renders to.
const (
	FormatMarkdown = "md"
	FormatHTML     = "html"
)

// Formats lists the formats a report renders to, the default first.
func Formats() []string { return []string{FormatMarkdown, FormatHTML} }

// Subjects of a report.
const (
	SubjectSession = "session"
	SubjectWork    = "work"
)

// Report is the chain-of-custody report of one subject as of one
// revision: every session of it, every claim event, checkpoint, resume,
// restatement check, host binding and host event, execution, evidence and
// verification of the work, each with the event it comes from, oldest
// first, and the verdict of the hash chain up to the revision.
type Report struct {
	Subject         Subject `json:"subject"`
	ProjectID       string  `json:"project_id"`
	ProjectName     string  `json:"project_name,omitempty"`
	ProjectRevision int64   `json:"project_revision"`
	// HeadHash is the hash of event ProjectRevision ("" at revision 0),
	// HeadAt its time.
	HeadHash      string         `json:"head_hash"`
	HeadAt        string         `json:"head_at,omitempty"`
	Chain         Chain          `json:"chain"`
	Work          []WorkItem     `json:"work"`
	Sessions      []Session      `json:"sessions"`
	Claims        []ClaimEvent   `json:"claims"`
	Checkpoints   []Checkpoint   `json:"checkpoints"`
	Resumes       []Resume       `json:"resumes"`
	Restatements  []Restatement  `json:"restatements"`
	Bindings      []Binding      `json:"bindings"`
	HostEvents    []HostEvent    `json:"host_events"`
	Executions    []Execution    `json:"executions"`
	Evidence      []Evidence     `json:"evidence"`
	Verifications []Verification `json:"verifications"`
}

// Subject is what a report is about: a session (and the chain of
// sessions it resumed from and that resumed it) or a work item.
type Subject struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
}

// Ref names the event an entry comes from.
type Ref struct {
	Seq   int64  `json:"seq"`
	Hash  string `json:"hash"`
	At    string `json:"at"`
	Actor string `json:"actor,omitempty"`
}

// Time formats UTC milliseconds as the report shows times.
func Time(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

// Chain is the verdict of the hash chain and the log's rules up to the
// report's revision, as `awr verify` checks them.
type Chain struct {
	Verified bool `json:"verified"`
	// Anchored is always false: the report checks the chain, not the
	// witnesses kept outside it (awr verify --anchors does), so a
	// rewritten and re-hashed history would verify here too.
	Anchored bool `json:"anchored"`
	// Through is the last seq the verdict covers: the report's revision.
	Through     int64  `json:"through_seq"`
	FirstBadSeq int64  `json:"first_bad_seq,omitempty"`
	Problem     string `json:"problem,omitempty"`
}

// WorkItem is a work item of the report as its source declared it at the
// report's revision (Title and Status empty when no source declares it
// any more).
type WorkItem struct {
	Key    string `json:"key"`
	Title  string `json:"title,omitempty"`
	Status string `json:"status,omitempty"`
	Source string `json:"source,omitempty"`
}

// Session is one session of the report.
type Session struct {
	Started     Ref         `json:"started"`
	ID          string      `json:"id"`
	Work        string      `json:"work"`
	Agent       string      `json:"agent"`
	Provider    string      `json:"provider,omitempty"`
	Model       string      `json:"model,omitempty"`
	Workdir     string      `json:"workdir,omitempty"`
	ResumedFrom string      `json:"resumed_from,omitempty"`
	ResumedBy   []string    `json:"resumed_by,omitempty"`
	Repo        *Repo       `json:"repo,omitempty"`
	Ended       *SessionEnd `json:"ended,omitempty"`
}

// SessionEnd is how a session ended.
type SessionEnd struct {
	Ref     Ref    `json:"event"`
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
}

// Claim event names.
const (
	ClaimAcquired = "acquired"
	ClaimRenewed  = "renewed"
	ClaimReleased = "released"
)

// ClaimEvent is one acquisition, renewal or release of a claim. The
// fencing token of a renewal or release is the token its claim was
// acquired with.
type ClaimEvent struct {
	Ref          Ref    `json:"event"`
	Event        string `json:"change"`
	ClaimID      string `json:"claim_id"`
	Work         string `json:"work"`
	Session      string `json:"session_id"`
	Agent        string `json:"agent,omitempty"`
	FencingToken int64  `json:"fencing_token,omitempty"`
	ExpiresAt    string `json:"expires_at,omitempty"`
	TTLms        int64  `json:"ttl_ms,omitempty"`
	MovedFrom    string `json:"moved_from,omitempty"`
	Reason       string `json:"reason,omitempty"`
	ToSession    string `json:"to_session,omitempty"`
	Note         string `json:"note,omitempty"`
}

// Lease describes the claim event's lease in words.
func (c ClaimEvent) Lease() string {
	switch {
	case c.ExpiresAt == "" && c.Event != ClaimReleased:
		return "no expiry"
	case c.ExpiresAt == "":
		return ""
	case c.TTLms > 0:
		return fmt.Sprintf("until %s (%s)", c.ExpiresAt, time.Duration(c.TTLms)*time.Millisecond)
	}
	return "until " + c.ExpiresAt
}

// Change is one change a checkpoint made to its work item's knowledge, as
// the checkpoint recorded it.
type Change events.KnowledgeChange

// Item is one knowledge item in force.
type Item struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// Knowledge is what was in force on a work item at one event: open loops
// and active decisions, facts and hypotheses.
type Knowledge struct {
	OpenLoops  []Item `json:"open_loops"`
	Decisions  []Item `json:"decisions"`
	Facts      []Item `json:"facts"`
	Hypotheses []Item `json:"hypotheses"`
}

// Empty reports whether nothing was in force.
func (k Knowledge) Empty() bool {
	return len(k.OpenLoops)+len(k.Decisions)+len(k.Facts)+len(k.Hypotheses) == 0
}

// Checkpoint is one checkpoint in full: what it recorded, what it changed
// in the knowledge of its work item, what stayed in force after it
// (Kept: in force and not opened by it) and the repository it recorded.
type Checkpoint struct {
	Ref                 Ref       `json:"event"`
	ID                  string    `json:"id"`
	Session             string    `json:"session_id"`
	Work                string    `json:"work"`
	Agent               string    `json:"agent"`
	Digest              string    `json:"digest"`
	NextAction          string    `json:"next_action"`
	ContextHash         string    `json:"context_hash,omitempty"`
	ContextHashVerified bool      `json:"context_hash_verified"`
	ContextHashNote     string    `json:"context_hash_note,omitempty"`
	OpenLoopTexts       []string  `json:"open_loop_texts,omitempty"`
	Changes             []Change  `json:"changes"`
	Kept                Knowledge `json:"kept"`
	Repo                *Repo     `json:"repo,omitempty"`
}

// Repo is a repository state as an event recorded it.
type Repo struct {
	Head             string `json:"head,omitempty"`
	Branch           string `json:"branch,omitempty"`
	Dirty            bool   `json:"dirty"`
	DirtyFingerprint string `json:"dirty_fingerprint,omitempty"`
	DirtyFiles       []File `json:"dirty_files,omitempty"`
	DirtyTruncated   bool   `json:"dirty_truncated,omitempty"`
	Unverifiable     string `json:"unverifiable,omitempty"`
	FilesChanged     []File `json:"files_changed,omitempty"`
	FilesSince       string `json:"files_changed_since,omitempty"`
	FilesTruncated   bool   `json:"files_changed_truncated,omitempty"`
}

// File is one path with its git status.
type File struct {
	Path   string `json:"path"`
	Status string `json:"status"`
	From   string `json:"from,omitempty"`
}

// Resume is one session resumed by another: the checkpoint inherited,
// the claim moved (when it was) and the knowledge carried into the
// successor.
type Resume struct {
	Ref             Ref         `json:"event"`
	Session         string      `json:"session_id"`
	FromSession     string      `json:"from_session"`
	Work            string      `json:"work"`
	Agent           string      `json:"agent,omitempty"`
	CheckpointID    string      `json:"checkpoint_id,omitempty"`
	ExternalSession string      `json:"external_session,omitempty"`
	ClaimMoved      *MovedClaim `json:"claim_moved,omitempty"`
	// PredecessorEnded is the outcome the resume ended the predecessor
	// with, when it was still active.
	PredecessorEnded string    `json:"predecessor_ended,omitempty"`
	Carried          Knowledge `json:"carried"`
}

// MovedClaim is a claim a resume moved: released by the predecessor,
// acquired by the successor.
type MovedClaim struct {
	FromClaim    string `json:"from_claim"`
	ToClaim      string `json:"to_claim"`
	FencingToken int64  `json:"fencing_token"`
	ReleasedSeq  int64  `json:"released_seq"`
	AcquiredSeq  int64  `json:"acquired_seq"`
}

// Restatement is one check of a session's restatement against the
// recorded state, with its verdict and each field's outcome.
type Restatement struct {
	Ref          Ref                `json:"event"`
	Session      string             `json:"session_id"`
	Work         string             `json:"work"`
	CheckpointID string             `json:"checkpoint_id,omitempty"`
	Verdict      string             `json:"verdict"`
	Items        []RestatementField `json:"items"`
}

// RestatementField is one field of a restatement compared with the
// record.
type RestatementField struct {
	Field    string `json:"field"`
	Status   string `json:"status"`
	Expected string `json:"expected,omitempty"`
	Stated   string `json:"stated,omitempty"`
}

// Binding is a host conversation bound to a session.
type Binding struct {
	Ref             Ref    `json:"event"`
	Client          string `json:"client"`
	ExternalSession string `json:"external_session"`
	Session         string `json:"session_id"`
	Work            string `json:"work"`
	CheckpointID    string `json:"checkpoint_id,omitempty"`
	ContinuesFrom   string `json:"continues_from,omitempty"`
}

// HostEvent is one hook delivery of a host for a bound conversation.
type HostEvent struct {
	Ref             Ref    `json:"event"`
	Client          string `json:"client"`
	ExternalSession string `json:"external_session"`
	Session         string `json:"session_id"`
	Event           string `json:"host_event"`
	HostEvent       string `json:"host_name"`
	Detail          string `json:"detail,omitempty"`
	Answer          string `json:"answer,omitempty"`
	ContextHash     string `json:"context_hash,omitempty"`
}

// Execution is one side effect run through `awr exec run`: its start and,
// once recorded, its finish.
type Execution struct {
	Started      Ref           `json:"started"`
	ID           string        `json:"id"`
	Work         string        `json:"work"`
	Session      string        `json:"session_id"`
	Key          string        `json:"key"`
	Purpose      string        `json:"purpose,omitempty"`
	Argv         []string      `json:"argv"`
	Cwd          string        `json:"cwd,omitempty"`
	ClaimID      string        `json:"claim_id,omitempty"`
	FencingToken int64         `json:"fencing_token,omitempty"`
	Retries      string        `json:"retries,omitempty"`
	Repo         *Repo         `json:"repo,omitempty"`
	Finished     *ExecFinished `json:"finished,omitempty"`
}

// ExecFinished is how an execution ended.
type ExecFinished struct {
	Ref          Ref    `json:"event"`
	ExitCode     int    `json:"exit_code"`
	Signal       string `json:"signal,omitempty"`
	Error        string `json:"error,omitempty"`
	DurationMs   int64  `json:"duration_ms"`
	StdoutSHA256 string `json:"stdout_sha256"`
	StdoutBytes  int64  `json:"stdout_bytes"`
	StderrSHA256 string `json:"stderr_sha256"`
	StderrBytes  int64  `json:"stderr_bytes"`
	RepoAfter    *Repo  `json:"repo_after,omitempty"`
}

// Evidence is one piece of evidence against an acceptance criterion.
type Evidence struct {
	Ref       Ref    `json:"event"`
	ID        string `json:"id"`
	Work      string `json:"work"`
	Criterion string `json:"criterion"`
	Basis     string `json:"basis"`
	Level     string `json:"level"`
	Passed    bool   `json:"passed"`
	Session   string `json:"session_id,omitempty"`
	Detail    string `json:"detail,omitempty"`
	Repo      *Repo  `json:"repo,omitempty"`
}

// Verification is a work_verified record: every criterion had passing
// evidence at one repository state.
type Verification struct {
	Ref      Ref         `json:"event"`
	Work     string      `json:"work"`
	Session  string      `json:"session_id"`
	Level    string      `json:"level"`
	Criteria []Criterion `json:"criteria"`
	Repo     *Repo       `json:"repo,omitempty"`
}

// Criterion is one verified criterion and the evidence that carried it.
type Criterion struct {
	Criterion  string `json:"criterion"`
	EvidenceID string `json:"evidence_id"`
	Level      string `json:"level"`
}

// valid returns a copy of r whose every string is valid UTF-8 (invalid
// bytes become U+FFFD, as encoding/json writes them), so the renderings'
// code-span marks, bytes that never occur in UTF-8, cannot occur in a
// value. A report gathered from the log is valid already.
func valid(r *Report) *Report {
	raw, err := json.Marshal(r)
	if err != nil {
		panic("audit: marshal report: " + err.Error())
	}
	out := new(Report)
	if err := json.Unmarshal(raw, out); err != nil {
		panic("audit: unmarshal report: " + err.Error())
	}
	return out
}
