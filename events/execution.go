package events

// ExecutionStream returns the stream of the executions of key on work:
// "exec/<work>/<key>". Every execution of one (work item, key) sits on it,
// so its versions say in which order they started and finished.
func ExecutionStream(work, key string) string { return "exec/" + work + "/" + key }

// ExecutionRepo is the repository an execution ran in, as awr captured it
// around the command: HEAD and the dirty fingerprint (nil State when it
// could not be read, with the reason in Unverifiable).
type ExecutionRepo struct {
	Head             string `json:"head,omitempty"`
	Branch           string `json:"branch,omitempty"`
	Dirty            bool   `json:"dirty,omitempty"`
	DirtyFingerprint string `json:"dirty_fingerprint,omitempty"`
	Unverifiable     string `json:"unverifiable,omitempty"`
}

// ExecutionProcess identifies the awr process that runs an execution (and
// must record its finish) across PID reuse: the host, the boot, the PID
// and the process's start time in clock ticks after boot. A reader at the
// head calls an unfinished execution running only while that process
// lives.
type ExecutionProcess struct {
	Host       string `json:"host"`
	BootID     string `json:"boot_id,omitempty"`
	PID        int    `json:"pid"`
	StartTicks int64  `json:"start_ticks,omitempty"`
}

// ExecutionStarted records, before the command runs, that a session runs
// a side effect once for its work item under a key (stream
// "exec/<work>/<key>"): the command line, where it runs, the repository
// then and the process responsible for its finish. Retries names the
// execution it runs again (one that never finished, or one that failed,
// retried on request); "" for the key's first execution.
type ExecutionStarted struct {
	ExecutionID  string            `json:"execution_id"`
	Work         string            `json:"work"`
	SessionID    string            `json:"session_id"`
	Key          string            `json:"key"`
	Purpose      string            `json:"purpose,omitempty"`
	Argv         []string          `json:"argv"`
	Cwd          string            `json:"cwd,omitempty"`
	Repo         *ExecutionRepo    `json:"repo,omitempty"`
	Process      *ExecutionProcess `json:"process,omitempty"`
	ClaimID      string            `json:"claim_id,omitempty"`
	FencingToken int64             `json:"fencing_token,omitempty"`
	Retries      string            `json:"retries,omitempty"`
}

// Kind returns KindExecutionStarted.
func (ExecutionStarted) Kind() Kind { return KindExecutionStarted }

// ExecutionOutput describes one output stream of an execution: the
// SHA-256 and size of everything the command wrote on it, and what awr
// kept of it under .awr/executions/<id>/ (Kept bytes, cut at the cap when
// Truncated, Withheld lines replaced because they looked like a secret).
type ExecutionOutput struct {
	SHA256    string `json:"sha256"`
	Bytes     int64  `json:"bytes"`
	Kept      int64  `json:"kept_bytes"`
	Truncated bool   `json:"truncated,omitempty"`
	Withheld  int    `json:"withheld_lines,omitempty"`
}

// ExecutionFinished records how a started execution ended (stream
// "exec/<work>/<key>"): its exit code (-1 when a signal ended it, named in
// Signal, or when it could not start, said in Error), how long it ran,
// its output and the repository after it.
type ExecutionFinished struct {
	ExecutionID string          `json:"execution_id"`
	Work        string          `json:"work"`
	SessionID   string          `json:"session_id"`
	Key         string          `json:"key"`
	ExitCode    int             `json:"exit_code"`
	Signal      string          `json:"signal,omitempty"`
	Error       string          `json:"error,omitempty"`
	DurationMs  int64           `json:"duration_ms"`
	Stdout      ExecutionOutput `json:"stdout"`
	Stderr      ExecutionOutput `json:"stderr"`
	RepoAfter   *ExecutionRepo  `json:"repo_after,omitempty"`
}

// Kind returns KindExecutionFinished.
func (ExecutionFinished) Kind() Kind { return KindExecutionFinished }
