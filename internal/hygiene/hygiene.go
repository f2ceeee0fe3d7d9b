package hygiene

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/repo"
	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
)

// Kinds of hygiene findings. Each is evidence that an item died or was
// completed, quoted in the finding; age alone is never one.
const (
	// FindingAnswered: a later live fact or decision of the work item
	// names the item's id, or a later fact states what a hypothesis
	// guessed (its words cover the hypothesis's), confirming or refuting
	// it.
	FindingAnswered = "answered_by_later_item"
	// FindingLoopCommitted: a commit made since the loop was opened names
	// the loop (its id with its work key) or its words cover the loop's.
	FindingLoopCommitted = "loop_closed_by_commit"
	// FindingLoopTicked: the loop's work item was ticked done (completed
	// or cancelled) in its register after the loop was opened, or a
	// register item whose title covers the loop's words was.
	FindingLoopTicked         = "loop_closed_by_register"
	FindingSourceChangedAfter = "recorded_before_source_change"
	FindingHeadNotAncestor    = "checkpoint_head_not_ancestor"
	FindingDuplicate          = "duplicate"
)

// Finding is one thing that deserves pruning, the evidence that says so,
// and the commands that retire it or record that it still holds.
type Finding struct {
	Kind   string `json:"kind"`
	Work   string `json:"work"`
	ID     string `json:"id"`
	Text   string `json:"text,omitempty"`
	Reason string `json:"reason"`
	// Evidence is what contradicts or completes the item, quoted: an
	// event of the log (Seq) or a commit (Commit).
	Evidence *Evidence `json:"evidence,omitempty"`
	Command  string    `json:"command"`
	// Confirm records that the item still holds (`awr context confirm`):
	// the finding is not raised again for this evidence.
	Confirm string `json:"confirm,omitempty"`
}

// Evidence is what a finding stands on, quoted.
type Evidence struct {
	Seq    int64  `json:"seq,omitempty"`
	Commit string `json:"commit,omitempty"`
	Quote  string `json:"quote"`
}

// Report is what `awr context hygiene` lists.
type Report struct {
	Findings []Finding `json:"findings"`
	// Repository says whether the checkpoint heads could be checked
	// against the repository: checked, "unverifiable: REASON", or
	// "not_checked" (a past revision; with a reason when no checkpoint
	// recorded a HEAD).
	Repository      string `json:"repository"`
	ProjectRevision int64  `json:"project_revision"`
}

// SessionDir is the working directory a session started in (dir is the
// project's), "" for a session unknown at rev.
func SessionDir(conn *sqlite.Conn, dir, session string, rev int64) (string, error) {
	s, err := projections.SessionAt(conn, session, rev)
	if err != nil || s == nil {
		return "", err
	}
	start, err := projections.SessionStartOf(conn, s)
	if err != nil || start == nil {
		return "", err
	}
	return filepath.Join(dir, filepath.FromSlash(start.Workdir)), nil
}

// confirmation is the latest knowledge_confirmed of an item.
type confirmation struct {
	seq  int64
	head string
}

// loopCheck is a live loop whose commits since it was opened hygiene
// reads from the repository (at the head only).
type loopCheck struct {
	work, id, text, dir, checkpoint string
	since                           *repo.State
}

// Hygiene is one read of what deserves pruning (`awr context hygiene`),
// each item for evidence that it died or was completed, quoted: a later
// item that answers it, a commit or a ticked register item that closes a
// loop, its work item's own source fields changed after it was recorded,
// a duplicate; and checkpoints whose recorded HEAD is no longer an
// ancestor of the current HEAD. Age alone flags nothing. An item
// confirmed with `awr context confirm` is not flagged again for evidence
// the log held by then, nor for the commits its HEAD then reached. Each
// finding carries the exact command that retires it and the one that
// confirms it. Read gathers from the log; CheckRepository (at the head
// only) reads the repository once the log's read is over; Report orders
// what was found. It holds its report, what it reads from the repository
// (checkpoints' HEADs, loops to compare with the commits since they were
// opened), and the items confirmed (work + "\x00" + id).
type Hygiene struct {
	dir       string // the project's directory
	out       *Report
	heads     []headCheck
	loops     []loopCheck
	confirmed map[string]confirmation
}

// New starts a hygiene read of the project in dir.
func New(dir string) *Hygiene {
	return &Hygiene{dir: dir, out: &Report{Findings: []Finding{}, Repository: "not_checked"}, confirmed: map[string]confirmation{}}
}

// Read gathers the findings of each work item of works from the log at
// rev (head: rev is the log's head) and, when atHead (the read is at the
// head, so the repository will be checked), what to check in the
// repository.
func (h *Hygiene) Read(conn *sqlite.Conn, works []string, rev int64, head, atHead bool) error {
	h.out.ProjectRevision = rev
	ticked, err := tickedItems(conn, rev, head)
	if err != nil {
		return err
	}
	for _, work := range works {
		if err := h.work(conn, work, rev, ticked, atHead); err != nil {
			return err
		}
	}
	return nil
}

// headCheck is a checkpoint whose recorded HEAD must still be an ancestor
// of the repository's HEAD.
type headCheck struct {
	work, session, checkpoint, head, dir string
}

// work gathers the findings of one work item from the log at rev and,
// at the head (atHead), what to check in the repository.
func (h *Hygiene) work(conn *sqlite.Conn, work string, rev int64, ticked []tickedItem, atHead bool) error {
	items, err := projections.KnowledgeAt(conn, work, rev)
	if err != nil {
		return err
	}
	sessions, err := projections.SessionsAt(conn, rev, work)
	if err != nil {
		return err
	}
	if err := confirmationsOf(conn, work, rev, h.confirmed); err != nil {
		return err
	}
	session := "SESSION"
	for _, s := range sessions {
		if s.Status == projections.SessionActive {
			session = s.ID
		}
	}
	checkpoint := fmt.Sprintf("awr session checkpoint --session %s --agent \"$USER\" --digest 'Pruned what died' --next-action 'NEXT'", session)
	found, err := logEvidence(conn, work, rev, items, ticked, checkpoint)
	if err != nil {
		return err
	}
	h.out.Findings = append(h.out.Findings, found...)
	h.out.Findings = append(h.out.Findings, duplicates(work, items, checkpoint)...)
	if !atHead {
		return nil
	}
	flagged := map[string]bool{}
	for _, f := range found {
		c, ok := h.confirmed[work+"\x00"+f.ID]
		flagged[f.ID] = !ok || f.Evidence.Seq > c.seq
	}
	for _, k := range items {
		if !k.Live() || k.Kind != events.KnowledgeLoop || flagged[k.ID] {
			continue
		}
		since, err := recordedAt(conn, k.OpenedSeq)
		if err != nil {
			return err
		}
		if since == nil {
			continue
		}
		dir, err := SessionDir(conn, h.dir, k.OpenedSession, rev)
		if err != nil {
			return err
		}
		h.loops = append(h.loops, loopCheck{work: work, id: k.ID, text: k.Text, dir: cmp.Or(dir, h.dir), since: since, checkpoint: checkpoint})
	}
	// The latest checkpoint of each session on the work that recorded a
	// repository.
	for _, s := range sessions {
		cps, err := projections.SessionCheckpointsAt(conn, s.ID, rev)
		if err != nil {
			return err
		}
		for i := len(cps) - 1; i >= 0; i-- {
			if rr := cps[i].Repo; rr != nil && rr.State != nil && rr.State.Head != "" {
				start, err := projections.SessionStartOf(conn, &s)
				if err != nil {
					return err
				}
				h.heads = append(h.heads, headCheck{work: work, session: session, checkpoint: cps[i].ID, head: rr.State.Head,
					dir: filepath.Join(h.dir, filepath.FromSlash(start.Workdir))})
				break
			}
		}
	}
	return nil
}

// CheckRepository flags the checkpoints whose HEAD is no longer an
// ancestor, and the loops a commit since closes; each directory is
// captured once, and the commits since a HEAD read once for every loop
// opened at it.
func (h *Hygiene) CheckRepository(ctx context.Context) {
	out := h.out
	out.Repository = "checked"
	if len(h.heads) == 0 && len(h.loops) == 0 {
		out.Repository = "not_checked: no checkpoint recorded a repository HEAD"
	}
	captured := map[string]*repo.State{}
	capture := func(dir string) (*repo.State, error) {
		if now, ok := captured[dir]; ok {
			return now, nil
		}
		now, err := repo.Capture(ctx, dir)
		if err != nil {
			return nil, err
		}
		captured[dir] = now
		return now, nil
	}
	for _, hc := range h.heads {
		now, err := capture(hc.dir)
		if err != nil {
			out.Repository = "unverifiable: " + repo.ReasonOf(err)
			continue
		}
		ok, err := repo.IsAncestor(ctx, hc.dir, hc.head, "HEAD")
		if err == nil && ok {
			continue
		}
		reason := fmt.Sprintf("it recorded HEAD %.12s, which is not an ancestor of HEAD %.12s (reset, rebase or another branch)", hc.head, now.Head)
		if err != nil {
			reason = fmt.Sprintf("it recorded HEAD %.12s, which the repository cannot place: %s", hc.head, repo.ReasonOf(err))
		}
		out.Findings = append(out.Findings, Finding{Kind: FindingHeadNotAncestor, Work: hc.work, ID: hc.checkpoint, Reason: reason,
			Command: fmt.Sprintf("awr session checkpoint --session %s --agent \"$USER\" --digest 'Restated against HEAD %.12s' --next-action 'NEXT'", hc.session, now.Head)})
	}
	since := map[string][]repo.Commit{}
	for _, l := range h.loops {
		now, err := capture(l.dir)
		if err != nil {
			out.Repository = "unverifiable: " + repo.ReasonOf(err)
			continue
		}
		key := l.dir + "\x00" + l.since.Head
		commits, ok := since[key]
		if !ok {
			commits = repo.CompareWith(ctx, l.dir, l.since, now).Commits
			since[key] = commits
		}
		if f := commitEvidence(ctx, l, commits, h.confirmed[l.work+"\x00"+l.id].head); f != nil {
			out.Findings = append(out.Findings, *f)
		}
	}
}

// Report drops the findings a confirmation answered, gives the rest
// their confirm command, and orders them by work item.
func (h *Hygiene) Report() *Report {
	out := h.out
	out.Findings = slices.DeleteFunc(out.Findings, func(f Finding) bool {
		c, ok := h.confirmed[f.Work+"\x00"+f.ID]
		return ok && f.Evidence != nil && f.Evidence.Commit == "" && f.Evidence.Seq <= c.seq
	})
	for i := range out.Findings {
		f := &out.Findings[i]
		if f.Kind != FindingHeadNotAncestor && f.Kind != FindingDuplicate {
			f.Confirm = fmt.Sprintf("awr context confirm %s --work %s --agent \"$USER\" --note 'WHAT YOU CHECKED'", f.ID, f.Work)
		}
	}
	sort.SliceStable(out.Findings, func(i, j int) bool { return out.Findings[i].Work < out.Findings[j].Work })
	return out
}

// confirmationsOf adds the latest knowledge_confirmed of each item of
// work at rev to into.
func confirmationsOf(conn *sqlite.Conn, work string, rev int64, into map[string]confirmation) error {
	evs, err := projections.WorkEventsAt(conn, work, events.KindKnowledgeConfirmed, rev, -1)
	if err != nil {
		return err
	}
	for _, e := range evs {
		v, err := events.DecodePayload(e.Kind, e.Payload)
		if err != nil {
			return err
		}
		c := v.(*events.KnowledgeConfirmed)
		key := work + "\x00" + c.ItemID
		if e.Seq > into[key].seq {
			into[key] = confirmation{seq: e.Seq, head: c.Head}
		}
	}
	return nil
}

// recordedAt is the repository state the checkpoint at seq recorded, nil
// when it recorded none.
func recordedAt(conn *sqlite.Conn, seq int64) (*repo.State, error) {
	var st *repo.State
	err := events.ScanEvents(conn, seq, seq, func(e *events.Event) error {
		if e.Kind != events.KindCheckpointRecorded {
			return nil
		}
		v, err := events.DecodePayload(e.Kind, e.Payload)
		if err != nil {
			return err
		}
		if rr := v.(*events.CheckpointRecorded).Repo; rr != nil && rr.State != nil && rr.State.Head != "" {
			st = rr.State
		}
		return nil
	})
	return st, err
}

// duplicates finds the live items of work that repeat an older live item
// of the same kind by projections.MatchText (case, spacing and end
// punctuation aside): a log written before texts were matched that way
// can hold both. Each repeat gets the command that closes it in favour of
// the older one; checkpoint is the checkpoint command without its flags.
func duplicates(work string, items []projections.Knowledge, checkpoint string) []Finding {
	first := map[string]*projections.Knowledge{}
	live := make([]*projections.Knowledge, 0, len(items))
	for i := range items {
		if items[i].Live() {
			live = append(live, &items[i])
		}
	}
	sort.SliceStable(live, func(i, j int) bool { return live[i].OpenedSeq < live[j].OpenedSeq })
	var out []Finding
	for _, k := range live {
		key := k.Kind + "\x00" + projections.MatchText(k.Text)
		orig, seen := first[key]
		if !seen {
			first[key] = k
			continue
		}
		close := fmt.Sprintf("--retract '%s=duplicate of %s'", k.ID, orig.ID)
		if k.Kind == events.KnowledgeLoop {
			close = fmt.Sprintf("--drop-loop '%s=duplicate of %s'", k.ID, orig.ID)
		}
		out = append(out, Finding{Kind: FindingDuplicate, Work: work, ID: k.ID, Text: k.Text,
			Reason:  fmt.Sprintf("the same %s as %s (%q), case, spacing and end punctuation aside", k.Kind, orig.ID, orig.Text),
			Command: checkpoint + " " + close})
	}
	return out
}
