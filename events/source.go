package events

import "fmt"

// SourceIndexed records one indexing of a project source file (stream
// "source/<path>"): the content hash and everything parsed from it. Work
// items, goals, rules and dependency edges are projected only from these
// events, so replays and reads at past revisions never read the file again.
// A later SourceIndexed for the same path replaces the items of the earlier
// one, or, as a Delta, changes only those it names; Removed marks a source
// dropped from the manifest.
//
// An index too large for one event (MaxEventBytes) is split into Parts
// events appended in one transaction, each with at most MaxPartBytes of
// elements: the first replaces (or, as a delta, changes) the source's
// elements, the later ones are deltas that add the rest. Only the last
// part (or an unsplit event) sets the source's own row (hash, size,
// issues), so a read at a seq between two parts sees the new elements
// already appended under the source's previous hash.
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
	// Delta says Items, Goals and Rules hold only the elements added or
	// changed since the source's previous state, and Dropped those that
	// are gone; every other element stays as it was, read again from the
	// new content: its source reference's content hash, when it names one,
	// becomes this event's ContentHash (Restamp). Without Delta the event
	// replaces the source's elements whole.
	Delta bool `json:"delta,omitempty"`
	// ItemRepeats gives, in a delta, for each of Items, which declaration
	// of its key in the source it is (0 for the first, 1 for the first
	// repeat, ...); absent when every one is 0.
	ItemRepeats []int `json:"item_repeats,omitempty"`
	// Dropped names, in a delta, the elements the source no longer holds.
	Dropped *SourceDropped `json:"dropped,omitempty"`
	// Part and Parts number the events of one split index (1 to Parts);
	// both are 0 in an index that fits one event.
	Part  int `json:"part,omitempty"`
	Parts int `json:"parts,omitempty"`
}

// SourceDropped names the elements a delta removes from a source: work
// items by key and declaration (ItemRef), goals and rules by key.
type SourceDropped struct {
	Items []ItemRef `json:"items,omitempty"`
	Goals []string  `json:"goals,omitempty"`
	Rules []string  `json:"rules,omitempty"`
}

// ItemRef names one declaration of a work item key in a source: Repeat 0
// is the first, 1 the first repeat of the key, and so on.
type ItemRef struct {
	Key    string `json:"key"`
	Repeat int    `json:"repeat,omitempty"`
}

// Restamp gives ref the content hash hash when it names one: what an
// element a delta leaves as it was becomes, as a full index of the new
// content would have parsed it.
func Restamp(ref *SourceRef, hash string) {
	if ref.ContentHash != "" {
		ref.ContentHash = hash
	}
}

// Last reports whether s is an unsplit index or the last part of a split
// one: the event that sets the source's own row.
func (s *SourceIndexed) Last() bool { return s.Parts == 0 || s.Part >= s.Parts }

// ItemRepeat returns the declaration number of s.Items[i] (see
// ItemRepeats).
func (s *SourceIndexed) ItemRepeat(i int) int {
	if i < len(s.ItemRepeats) {
		return s.ItemRepeats[i]
	}
	return 0
}

// shape returns what is wrong with the fields of s that go together (a
// delta's repeats and drops, a part's number), or "".
func (s *SourceIndexed) shape() string {
	switch {
	case !s.Delta && (len(s.ItemRepeats) > 0 || s.Dropped != nil):
		return "names repeats or drops but is not a delta"
	case len(s.ItemRepeats) > 0 && len(s.ItemRepeats) != len(s.Items):
		return fmt.Sprintf("gives %d item repeats for %d items", len(s.ItemRepeats), len(s.Items))
	case s.Part < 0 || s.Parts < 0 || (s.Parts == 0) != (s.Part == 0) || s.Part > s.Parts:
		return fmt.Sprintf("is part %d of %d", s.Part, s.Parts)
	}
	for _, r := range s.ItemRepeats {
		if r < 0 {
			return fmt.Sprintf("gives a negative item repeat (%d)", r)
		}
	}
	return ""
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
	// Group names the part of the register the item belongs to: a
	// spec-kit phase or user story, a Kanban lane, a sprint or project.
	Group string `json:"group,omitempty"`
	// Parallel marks work that can run beside its group's other work
	// (spec-kit's [P]).
	Parallel bool `json:"parallel,omitempty"`
	// Parent is the key of the item this one is a part of: a nested
	// checklist item's, a Taskmaster subtask's task, a beads child's epic.
	Parent string    `json:"parent,omitempty"`
	Source SourceRef `json:"source"`
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
