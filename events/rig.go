package events

// Seat restore policies: what `awr rig up` does with a seat's conversation
// after a down. The policy belongs to the seat, never to its occupants.
const (
	PolicyResumeIfPossible = "resume_if_possible"
	PolicyRelaunchFresh    = "relaunch_fresh"
	PolicyCheckpointOnly   = "checkpoint_only"
)

// Seat runtimes: how a seat's agent is launched and resumed.
const (
	RuntimeGeneric = "generic"
	RuntimeClaude  = "claude"
	RuntimeCodex   = "codex"
)

// Seat restore outcomes, one per seat per restore.
const (
	SeatResumed           = "resumed"
	SeatFreshPrimed       = "fresh-primed"
	SeatAwaitingDecision  = "awaiting-decision"
	SeatAttentionRequired = "attention_required"
	SeatFailed            = "failed"
	// SeatRunning: the seat was already running; nothing was launched.
	SeatRunning = "running"
)

// SeatDeclared declares or redeclares a seat (stream "seat/<address>"). The
// whole declaration is repeated on every change.
type SeatDeclared struct {
	Address       string `json:"address"`
	Role          string `json:"role"`
	Rig           string `json:"rig"`
	Runtime       string `json:"runtime"`
	Command       string `json:"command,omitempty"`
	ResumeCommand string `json:"resume_command,omitempty"`
	Work          string `json:"work,omitempty"`
	Cwd           string `json:"cwd,omitempty"`
	Policy        string `json:"policy"`
	StopMessage   string `json:"stop_message,omitempty"`
	// ConversationStore is where a generic runtime keeps a conversation:
	// a path template with {conversation} (and {project}, {home}),
	// relative to the seat's working directory. Empty: awr cannot tell
	// whether a conversation still exists (claude and codex stores are
	// known).
	ConversationStore string `json:"conversation_store,omitempty"`
}

// Kind returns KindSeatDeclared.
func (SeatDeclared) Kind() Kind { return KindSeatDeclared }

// SeatRemoved retires a seat (stream "seat/<address>").
type SeatRemoved struct {
	Address string `json:"address"`
	Rig     string `json:"rig"`
}

// Kind returns KindSeatRemoved.
func (SeatRemoved) Kind() Kind { return KindSeatRemoved }

// Launch modes recorded by SeatLaunched.
const (
	LaunchStart  = "start"
	LaunchResume = "resume"
	LaunchFresh  = "fresh"
)

// SeatLaunched records that a seat's agent was launched (stream
// "seat/<address>"): the session and claim started for it, the tmux session
// it runs in, the context file it was given and the conversation it is
// expected to report (empty when the runtime cannot pre-assign one).
type SeatLaunched struct {
	Address      string `json:"address"`
	Rig          string `json:"rig"`
	Mode         string `json:"mode"`
	SessionID    string `json:"session_id"`
	ClaimID      string `json:"claim_id,omitempty"`
	TmuxSession  string `json:"tmux_session"`
	ContextFile  string `json:"context_file"`
	Conversation string `json:"conversation,omitempty"`
	RestoreID    string `json:"restore_id,omitempty"`
	// Repo is the repository of the seat's directory at the launch, the
	// reference a later restore compares with when nothing newer (a
	// checkpoint, a snapshot) recorded it; nil outside a git work tree.
	Repo *SeatRepo `json:"repo,omitempty"`
}

// SeatRepo is the repository state a seat's launch records: HEAD,
// whether the worktree is dirty (awr's own .awr directory excluded) and
// the dirty content's fingerprint ("sha256:<hex>" over each dirty file's
// path, status and content hash; "" when clean).
type SeatRepo struct {
	Head             string `json:"head"`
	Dirty            bool   `json:"dirty"`
	DirtyFingerprint string `json:"dirty_fingerprint,omitempty"`
}

// Kind returns KindSeatLaunched.
func (SeatLaunched) Kind() Kind { return KindSeatLaunched }

// StopRequested asks a live seat to checkpoint before its rig goes down
// (stream "seat/<address>").
type StopRequested struct {
	Address   string `json:"address"`
	Rig       string `json:"rig"`
	SessionID string `json:"session_id"`
	Message   string `json:"message"`
}

// Kind returns KindStopRequested.
func (StopRequested) Kind() Kind { return KindStopRequested }

// SnapshotSeat is one seat's entry in a rig snapshot. Conversation is the
// id needed to resume; no conversation content is ever stored.
type SnapshotSeat struct {
	Address       string `json:"address"`
	SessionID     string `json:"session_id,omitempty"`
	ClaimID       string `json:"claim_id,omitempty"`
	CheckpointSeq int64  `json:"checkpoint_seq,omitempty"`
	CheckpointID  string `json:"checkpoint_id,omitempty"`
	Checkpointed  bool   `json:"checkpointed"`
	Conversation  string `json:"conversation,omitempty"`
	Host          string `json:"host,omitempty"`
	Cwd           string `json:"cwd"`
	RepoHead      string `json:"repo_head,omitempty"`
	WorktreeDirty bool   `json:"worktree_dirty"`
	// DirtyFingerprint fingerprints the dirty content (as SeatRepo's);
	// "" when clean, and in snapshots recorded before it existed.
	DirtyFingerprint string `json:"dirty_fingerprint,omitempty"`
	Running          bool   `json:"running"`
}

// RigSnapshotTaken records a rig's per-seat manifest (stream "rig/<name>").
// Watermark is the project_revision the manifest describes.
type RigSnapshotTaken struct {
	SnapshotID string         `json:"snapshot_id"`
	Rig        string         `json:"rig"`
	Watermark  int64          `json:"watermark"`
	Seats      []SnapshotSeat `json:"seats"`
}

// Kind returns KindRigSnapshotTaken.
func (RigSnapshotTaken) Kind() Kind { return KindRigSnapshotTaken }

// RestoreStarted opens a restore attempt of a rig (stream "rig/<name>").
// It is written again, with the same restore id and Continued set, by each
// `rig up` that continues an unfinished attempt; Owner names the process
// doing the restore, so another up can tell a crashed attempt from one in
// progress.
type RestoreStarted struct {
	RestoreID  string        `json:"restore_id"`
	Rig        string        `json:"rig"`
	SnapshotID string        `json:"snapshot_id,omitempty"`
	Seats      []string      `json:"seats"`
	Continued  bool          `json:"continued,omitempty"`
	Owner      *RestoreOwner `json:"owner,omitempty"`
}

// Kind returns KindRestoreStarted.
func (RestoreStarted) Kind() Kind { return KindRestoreStarted }

// RestoreOwner identifies a process across PID reuse: the host, the boot,
// the PID and the process's start time (clock ticks after boot).
type RestoreOwner struct {
	Host       string `json:"host"`
	BootID     string `json:"boot_id,omitempty"`
	PID        int    `json:"pid"`
	StartTicks int64  `json:"start_ticks,omitempty"`
}

// SeatEvidence is what a person needs to judge a seat's outcome.
type SeatEvidence struct {
	PaneTail        []string `json:"pane_tail,omitempty"`
	SnapshotHead    string   `json:"snapshot_head,omitempty"`
	CurrentHead     string   `json:"current_head,omitempty"`
	SnapshotDirty   bool     `json:"snapshot_dirty,omitempty"`
	CurrentDirty    bool     `json:"current_dirty,omitempty"`
	ExpectedConv    string   `json:"expected_conversation,omitempty"`
	ReportedConv    string   `json:"reported_conversation,omitempty"`
	ExitStatus      *int     `json:"exit_status,omitempty"`
	Error           string   `json:"error,omitempty"`
	Command         string   `json:"command,omitempty"`
	VerifyTimeoutMS int64    `json:"verify_timeout_ms,omitempty"`
	// Reference names the recorded repository state the restore compared
	// with ("snapshot ID", "checkpoint ID", "launch at seq N"): the newest
	// of them. SnapshotHead, SnapshotDirty and SnapshotFingerprint are that
	// state; CurrentHead, CurrentDirty and CurrentFingerprint the state at
	// the restore.
	Reference           string `json:"reference,omitempty"`
	SnapshotFingerprint string `json:"snapshot_dirty_fingerprint,omitempty"`
	CurrentFingerprint  string `json:"current_dirty_fingerprint,omitempty"`
	// PendingAttention is the reason of an earlier attention_required that
	// nobody has answered yet (awr seat clear-attention).
	PendingAttention string `json:"pending_attention,omitempty"`
}

// PaneTailOrNil returns the pane lines of e (nil when e is nil).
func (e *SeatEvidence) PaneTailOrNil() []string {
	if e == nil {
		return nil
	}
	return e.PaneTail
}

// SeatRestored records one seat's outcome in a restore attempt (stream
// "seat/<address>").
type SeatRestored struct {
	RestoreID    string        `json:"restore_id"`
	Address      string        `json:"address"`
	Rig          string        `json:"rig"`
	Outcome      string        `json:"outcome"`
	Reason       string        `json:"reason"`
	SessionID    string        `json:"session_id,omitempty"`
	Conversation string        `json:"conversation,omitempty"`
	Evidence     *SeatEvidence `json:"evidence,omitempty"`
}

// Kind returns KindSeatRestored.
func (SeatRestored) Kind() Kind { return KindSeatRestored }

// RestoreCompleted closes a restore attempt with its rolled-up result
// (stream "rig/<name>").
type RestoreCompleted struct {
	RestoreID string `json:"restore_id"`
	Rig       string `json:"rig"`
	Result    string `json:"result"`
}

// Kind returns KindRestoreCompleted.
func (RestoreCompleted) Kind() Kind { return KindRestoreCompleted }

// Seat decisions recorded by SeatDecided.
const DecisionFresh = "fresh"

// SeatDecided records a person's decision for a seat whose conversation
// could not be resumed (stream "seat/<address>"). It holds for the stop it
// names in Scope ("snapshot:<id>" or "session:<id>"), so the next stop asks
// again and the seat's policy never drifts.
type SeatDecided struct {
	Address  string `json:"address"`
	Rig      string `json:"rig"`
	Decision string `json:"decision"`
	Scope    string `json:"scope"`
}

// Kind returns KindSeatDecided.
func (SeatDecided) Kind() Kind { return KindSeatDecided }

// SeatAttentionCleared records a person's answer to a seat's
// attention_required (stream "seat/<address>"): what they checked and
// decided. AttentionSeq is the seq of the seat_restored it answers.
type SeatAttentionCleared struct {
	Address      string `json:"address"`
	Rig          string `json:"rig"`
	Reason       string `json:"reason"`
	AttentionSeq int64  `json:"attention_seq"`
	RestoreID    string `json:"restore_id,omitempty"`
}

// Kind returns KindSeatAttentionCleared.
func (SeatAttentionCleared) Kind() Kind { return KindSeatAttentionCleared }

// SeatMessageSent records a message typed into a running seat's pane by
// `awr rig send` (stream "seat/<address>"): who sent it (Agent, empty when
// unnamed), the seat's session at the time and the exact text. It is
// written before the text is typed, so the log holds every attempt to
// talk to an agent, including one whose typing then failed.
type SeatMessageSent struct {
	Address   string `json:"address"`
	Rig       string `json:"rig"`
	SessionID string `json:"session_id"`
	Agent     string `json:"agent,omitempty"`
	Text      string `json:"text"`
}

// Kind returns KindSeatMessageSent.
func (SeatMessageSent) Kind() Kind { return KindSeatMessageSent }

// SeatReconciled records that a person adopted, as a seat's session, the
// successor someone resumed from the seat's session by hand (stream
// "seat/<address>"): who (By, also the event's actor) and why. FromSession
// is the seat's session before, SessionID the adopted end of its chain;
// SessionActive says whether that session was still running, ClaimID is
// its live claim on the seat's work ("" when none), Conversation and Host
// the conversation bound to it, and Repo the seat's repository at the
// adoption, the reference the next restore compares with. Nothing is
// typed into the seat's pane.
type SeatReconciled struct {
	Address       string    `json:"address"`
	Rig           string    `json:"rig"`
	FromSession   string    `json:"from_session"`
	SessionID     string    `json:"session_id"`
	SessionActive bool      `json:"session_active"`
	ClaimID       string    `json:"claim_id,omitempty"`
	Conversation  string    `json:"conversation,omitempty"`
	Host          string    `json:"host,omitempty"`
	Repo          *SeatRepo `json:"repo,omitempty"`
	By            string    `json:"by"`
	Reason        string    `json:"reason"`
}

// Kind returns KindSeatReconciled.
func (SeatReconciled) Kind() Kind { return KindSeatReconciled }
