package events

// SourceIndexed records one indexing of a project source file (stream
// "source/<path>"): the content hash and everything parsed from it. Work
// items, goals, rules and dependency edges are projected only from these
// events, so replays and reads at past revisions never read the file again.
// A later SourceIndexed for the same path replaces the items of the earlier
// one; Removed marks a source dropped from the manifest.
type SourceIndexed struct {
	Path        string `json:"path"`
	Adapter     string `json:"adapter"`
	Role        string `json:"role,omitempty"`
	ContentHash string `json:"content_hash"`
	// OptionsHash identifies how the file was read (adapter, role and the
	// manifest's maps), so a manifest change re-indexes an unchanged file.
	OptionsHash string        `json:"options_hash,omitempty"`
	Size        int64         `json:"size,omitempty"`
	ModTimeMS   int64         `json:"mtime_ms,omitempty"`
	Removed     bool          `json:"removed,omitempty"`
	Items       []WorkItem    `json:"items,omitempty"`
	Goals       []Goal        `json:"goals,omitempty"`
	Rules       []Rule        `json:"rules,omitempty"`
	Issues      []SourceIssue `json:"issues,omitempty"`
}

// Kind returns KindSourceIndexed.
func (SourceIndexed) Kind() Kind { return KindSourceIndexed }

// SourceRef locates a parsed element in its source file.
type SourceRef struct {
	Path        string `json:"path"`
	LineStart   int    `json:"line_start"`
	LineEnd     int    `json:"line_end"`
	ContentHash string `json:"content_hash,omitempty"`
}

// Dependency is one edge from a work item to a prerequisite.
type Dependency struct {
	Key      string `json:"key"`
	Required bool   `json:"required"`
}

// WorkItem is a unit of work parsed from a task register or ledger.
type WorkItem struct {
	Key        string       `json:"key"`
	Title      string       `json:"title"`
	Status     string       `json:"status"`
	RawStatus  string       `json:"raw_status,omitempty"`
	Kind       string       `json:"kind,omitempty"`
	Priority   string       `json:"priority,omitempty"`
	Summary    string       `json:"summary,omitempty"`
	NextAction string       `json:"next_action,omitempty"`
	Blocker    string       `json:"blocker,omitempty"`
	Acceptance []string     `json:"acceptance,omitempty"`
	DependsOn  []Dependency `json:"depends_on,omitempty"`
	Goal       string       `json:"goal,omitempty"`
	Milestone  string       `json:"milestone,omitempty"`
	Owner      string       `json:"owner,omitempty"`
	Tags       []string     `json:"tags,omitempty"`
	Paths      []string     `json:"paths,omitempty"`
	Source     SourceRef    `json:"source"`
}

// Goal is a project goal parsed from a goals file or ledger.
type Goal struct {
	Key     string    `json:"key"`
	Title   string    `json:"title"`
	Status  string    `json:"status,omitempty"`
	Summary string    `json:"summary,omitempty"`
	Source  SourceRef `json:"source"`
}

// Rule is a project rule; Strength is "hard" or "soft".
type Rule struct {
	Key      string    `json:"key"`
	Text     string    `json:"text"`
	Strength string    `json:"strength"`
	Paths    []string  `json:"paths,omitempty"`
	Source   SourceRef `json:"source"`
}

// SourceIssue is a problem found while parsing a source, located by path and
// line.
type SourceIssue struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Path    string `json:"path"`
	Line    int    `json:"line,omitempty"`
	Key     string `json:"key,omitempty"`
}
