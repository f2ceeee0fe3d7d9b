package workcontext

import (
	"fmt"
	"slices"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
)

// FieldChange is one field of the work item that changed in its source
// after the latest checkpoint: its value then and now, and the seq of the
// source_indexed event that set the value it has now.
type FieldChange struct {
	Field string `json:"field"`
	Then  string `json:"then"`
	Now   string `json:"now"`
	Seq   int64  `json:"seq"`
}

// NextAction puts the register's next action beside the latest
// checkpoint's: when they differ, both are shown, labelled.
type NextAction struct {
	Source            string `json:"source_next_action"`
	Checkpoint        string `json:"latest_checkpoint_next_action"`
	CheckpointSeq     int64  `json:"latest_checkpoint_seq,omitempty"`
	DiffersFromSource bool   `json:"differs_from_source"`
	// SourceChangedSeq is the seq at which the register's next action
	// changed after the checkpoint (0 when it did not).
	SourceChangedSeq int64 `json:"source_changed_seq,omitempty"`
}

// trackedFields are the fields of a work item whose change after a
// checkpoint the packet says out loud.
var trackedFields = []struct {
	name  string
	value func(it *projections.WorkItem) string
}{
	{"status", func(it *projections.WorkItem) string { return it.Status }},
	{"next_action", func(it *projections.WorkItem) string { return strings.TrimSpace(it.NextAction) }},
	{"acceptance", func(it *projections.WorkItem) string { return strings.Join(it.Acceptance, "; ") }},
	{"blocker", func(it *projections.WorkItem) string { return strings.TrimSpace(it.Blocker) }},
	{"dependencies", func(it *projections.WorkItem) string {
		var deps []string
		for _, d := range it.DependsOn {
			s := d.Key
			if !d.Required {
				s += " (optional)"
			}
			deps = append(deps, s)
		}
		return strings.Join(deps, ", ")
	}},
}

// changedSince lists the tracked fields of work that differ between its
// version at seq from (the latest checkpoint) and at rev, with the seq of
// the change that set each current value. An item that did not exist at
// from has nothing to compare.
// ChangedSince lists the fields of work item work whose value at rev
// differs from its value at from, each with the seq of its change: the
// item's own fields only, so an edit of another item in the same register
// file (which restamps every item with the file's new hash) changes
// nothing here. Empty when the item is unknown at either revision.
func ChangedSince(conn *sqlite.Conn, work string, from, rev int64) ([]FieldChange, error) {
	now, err := projections.WorkItemAt(conn, work, rev)
	if err != nil || len(now) == 0 {
		return []FieldChange{}, err
	}
	return changedSince(conn, work, from, rev, &now[0])
}

func changedSince(conn *sqlite.Conn, work string, from, rev int64, now *projections.WorkItem) ([]FieldChange, error) {
	out := []FieldChange{}
	if now == nil || from >= rev {
		return out, nil
	}
	then, err := projections.WorkItemAt(conn, work, from)
	if err != nil || len(then) == 0 {
		return out, err
	}
	versions, err := projections.ItemVersionsSince(conn, work, from, rev)
	if err != nil {
		return nil, err
	}
	for _, f := range trackedFields {
		a, b := f.value(&then[0]), f.value(now)
		if a == b {
			continue
		}
		// The seq of the last version whose value differs from the one
		// before it and equals the value now.
		var seq int64
		prev := a
		for i := range versions {
			v := f.value(&versions[i].WorkItem)
			if v != prev {
				seq = versions[i].From
			}
			prev = v
		}
		out = append(out, FieldChange{Field: f.name, Then: a, Now: b, Seq: seq})
	}
	return out, nil
}

// NextActionOf compares the register's next action with the latest
// checkpoint's.
func NextActionOf(in *Input) NextAction {
	var na NextAction
	if in.Item != nil {
		na.Source = strings.TrimSpace(in.Item.NextAction)
	}
	if in.Latest != nil {
		na.Checkpoint = strings.TrimSpace(in.Latest.NextAction)
		na.CheckpointSeq = in.Latest.Seq
	}
	na.DiffersFromSource = na.Source != "" && na.Checkpoint != "" && projections.NormalizeText(na.Source) != projections.NormalizeText(na.Checkpoint)
	for _, c := range in.Changed {
		if c.Field == "next_action" {
			na.SourceChangedSeq = c.Seq
		}
	}
	return na
}

// knowledgeLines renders knowledge items as list lines.
func knowledgeLines(items []projections.Knowledge, detail func(k *projections.Knowledge) string) []string {
	var lines []string
	for i := range items {
		k := &items[i]
		line := "- " + k.ID + ": " + SafeText(k.Text)
		if d := detail(k); d != "" {
			line += " (" + d + ")"
		}
		lines = append(lines, line)
	}
	return lines
}

// loopDetail says how long a loop has been open.
func loopDetail(k *projections.Knowledge) string {
	s := fmt.Sprintf("open since seq %d", k.OpenedSeq)
	if k.Sessions > 1 {
		s += fmt.Sprintf(", %d sessions", k.Sessions)
	}
	return s
}

// MaxClosedShown bounds the items a packet lists as closed since the
// previous checkpoint: the latest ones to close; the earlier are counted,
// with the command that lists them. A session resumed long after its
// checkpoint, on a work item others went on with, would otherwise carry
// every item closed since, beyond any budget.
const MaxClosedShown = 20

// closedLines is the section of the items k lists as closed since its
// Since seq: at most MaxClosedShown of them (LatestClosed), and a line
// that counts the rest.
func closedLines(work string, k *projections.KnowledgeState) []string {
	lines := []string{"## Closed since the previous checkpoint (shown once)"}
	shown := LatestClosed(k.Closed, MaxClosedShown)
	if earlier := len(k.Closed) - len(shown); earlier > 0 {
		lines = append(lines, fmt.Sprintf("- %d closed before the %d below (every close: awr log --work %s --kind checkpoint_recorded --since %d)", earlier, len(shown), work, k.Since))
	}
	return append(lines, knowledgeLines(shown, closedDetail)...)
}

// LatestClosed returns the n items of closed that closed last, in
// closed's order (of those closed at the earliest seq kept, the first in
// that order while there is room); closed itself when it holds n or
// fewer.
func LatestClosed(closed []projections.Knowledge, n int) []projections.Knowledge {
	if len(closed) <= n {
		return closed
	}
	seqs := make([]int64, len(closed))
	for i := range closed {
		seqs[i] = closed[i].ClosedSeq
	}
	slices.Sort(seqs)
	cut := seqs[len(seqs)-n] // the earliest close kept
	// Every item closed after cut, then those closed at cut (one
	// checkpoint may close several) while there is room.
	room := n
	for _, q := range seqs {
		if q > cut {
			room--
		}
	}
	var kept []projections.Knowledge
	for _, c := range closed {
		if c.ClosedSeq > cut || c.ClosedSeq == cut && room > 0 {
			if c.ClosedSeq == cut {
				room--
			}
			kept = append(kept, c)
		}
	}
	return kept
}

// closedDetail says how an item closed.
func closedDetail(k *projections.Knowledge) string {
	s := fmt.Sprintf("%s %s at seq %d", kindName(k.Kind), k.State, k.ClosedSeq)
	if k.SupersededBy != "" {
		s += " by " + k.SupersededBy
	}
	if k.Note != "" {
		s += ": " + SafeText(k.Note)
	}
	return s
}

func kindName(kind string) string {
	if kind == events.KnowledgeLoop {
		return "loop"
	}
	return kind
}
