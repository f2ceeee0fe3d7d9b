package events

// Kinds of knowledge a checkpoint keeps for its work item. Each item has a
// short stable id: its kind's prefix and a number per work item (L-3, D-2,
// F-5, H-1).
const (
	KnowledgeLoop       = "loop"
	KnowledgeDecision   = "decision"
	KnowledgeFact       = "fact"
	KnowledgeHypothesis = "hypothesis"
)

// What a checkpoint does to one knowledge item.
const (
	// ChangeOpen opens an item: a loop, or a decision, fact or hypothesis
	// that is in force until retracted or superseded.
	ChangeOpen = "open"
	// ChangeResolve closes a loop with its resolution.
	ChangeResolve = "resolve"
	// ChangeDrop closes a loop that will not be done, with the reason.
	ChangeDrop = "drop"
	// ChangeConfirm makes a hypothesis a fact (it keeps its id).
	ChangeConfirm = "confirm"
	// ChangeRetract withdraws a fact or hypothesis found false, or a
	// decision reversed, with the reason.
	ChangeRetract = "retract"
	// ChangeSupersede replaces an item by a new version (By names it; the
	// same checkpoint opens it with Supersedes set).
	ChangeSupersede = "supersede"
)

// KnowledgeChange is one change a checkpoint makes to the knowledge of its
// work item. Ids are assigned when the checkpoint is written, so the log
// says which item each change concerns.
type KnowledgeChange struct {
	Op   string `json:"op"`
	ID   string `json:"id"`
	Kind string `json:"kind,omitempty"`
	Text string `json:"text,omitempty"`
	// Note is the resolution of a resolved loop or the reason of a drop or
	// retraction.
	Note string `json:"note,omitempty"`
	// Supersedes (on an open) names the item the new one replaces; By (on
	// a supersede) names its replacement.
	Supersedes string `json:"supersedes,omitempty"`
	By         string `json:"by,omitempty"`
}

// KnowledgePrefix returns the id prefix of a knowledge kind ("L", "D",
// "F", "H"), or "" for an unknown kind.
func KnowledgePrefix(kind string) string {
	switch kind {
	case KnowledgeLoop:
		return "L"
	case KnowledgeDecision:
		return "D"
	case KnowledgeFact:
		return "F"
	case KnowledgeHypothesis:
		return "H"
	}
	return ""
}

// KnowledgeConfirmed records that a live loop, decision, fact or
// hypothesis of a work item still holds, as someone checked it against
// what `awr context hygiene` quoted (stream "knowledge/<work>"). It
// changes nothing in the item: hygiene no longer flags it for evidence
// the log held by this event, nor for commits reachable from Head (the
// repository's HEAD when it was confirmed, empty when there was none).
type KnowledgeConfirmed struct {
	Work   string `json:"work"`
	ItemID string `json:"item_id"`
	Agent  string `json:"agent"`
	// Note says what was checked.
	Note string `json:"note,omitempty"`
	Head string `json:"head,omitempty"`
}

// Kind returns KindKnowledgeConfirmed.
func (KnowledgeConfirmed) Kind() Kind { return KindKnowledgeConfirmed }

// KnowledgeStream is the stream of a work item's knowledge confirmations.
func KnowledgeStream(work string) string { return "knowledge/" + work }
