package events

// ProjectInitialized is the first event of every project log (stream
// "project"). It names the project and records the awr version that created
// the log.
type ProjectInitialized struct {
	ProjectID  string `json:"project_id"`
	Name       string `json:"name"`
	AWRVersion string `json:"awr_version,omitempty"`
}

// Kind returns KindProjectInitialized.
func (ProjectInitialized) Kind() Kind { return KindProjectInitialized }

// ProjectForked (stream "project") turns an imported replica into a
// project of its own: from this event on, the copy accepts writes and its
// history diverges from the origin's. It names the origin as the replica
// recorded it (Origin), why the fork was made and who made it.
type ProjectForked struct {
	// OriginProjectID is the project id of the log the replica was
	// imported from.
	OriginProjectID string `json:"origin_project_id"`
	// OriginHeadSeq and OriginHeadHash are the origin's head at import:
	// the last event the replica and its origin share.
	OriginHeadSeq  int64  `json:"origin_head_seq"`
	OriginHeadHash string `json:"origin_head_hash"`
	// ImportedAt is when the replica was imported (UTC milliseconds).
	ImportedAt int64  `json:"imported_at,omitempty"`
	Reason     string `json:"reason,omitempty"`
	By         string `json:"by"`
}

// Kind returns KindProjectForked.
func (ProjectForked) Kind() Kind { return KindProjectForked }
