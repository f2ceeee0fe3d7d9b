package project

import (
	"context"
	"fmt"
	"github.com/awr-dev/awr/commands"
	"path/filepath"
	"sort"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/repo"
	"github.com/awr-dev/awr/internal/workcontext"
	"github.com/awr-dev/awr/projections"
)

// HygieneSessions is how many sessions a loop may stay open, or a
// hypothesis unconfirmed, before hygiene proposes retiring it.
const HygieneSessions = 3

// Kinds of hygiene findings.
const (
	FindingStaleLoop          = "loop_open_long"
	FindingUnconfirmed        = "hypothesis_unconfirmed"
	FindingSourceChangedAfter = "recorded_before_source_change"
	FindingHeadNotAncestor    = "checkpoint_head_not_ancestor"
	FindingDuplicate          = "duplicate"
)

// HygieneRequest is `awr context hygiene` and awr_context_hygiene.
type HygieneRequest struct {
	Work string `name:"work" json:"work,omitempty" help:"Only this work item (default: every work item with loops, decisions, facts or hypotheses)." placeholder:"KEY"`
	Read
}

// Finding is one thing that deserves pruning, with the command that
// retires it.
type Finding struct {
	Kind    string `json:"kind"`
	Work    string `json:"work"`
	ID      string `json:"id"`
	Text    string `json:"text,omitempty"`
	Reason  string `json:"reason"`
	Command string `json:"command"`
}

// HygieneReport is what `awr context hygiene` lists.
type HygieneReport struct {
	Findings []Finding `json:"findings"`
	// Repository says whether the checkpoint heads could be checked
	// against the repository: checked, "unverifiable: REASON", or
	// "not_checked" (a past revision; with a reason when no checkpoint
	// recorded a HEAD).
	Repository      string `json:"repository"`
	ProjectRevision int64  `json:"project_revision"`
}

// ContextHygiene lists what deserves pruning (read-only): loops open for
// HygieneSessions sessions or more, hypotheses never confirmed over as
// many, facts and decisions recorded before a later change to their work
// item's source, and checkpoints whose recorded HEAD is no longer an
// ancestor of the current HEAD. Each finding carries the exact command
// that retires it. The repository is checked at the head only.
func (p *Project) ContextHygiene(ctx context.Context, req HygieneRequest) (*HygieneReport, error) {
	out := &HygieneReport{Findings: []Finding{}, Repository: "not_checked"}
	type headCheck struct {
		work, session, checkpoint, head, dir string
	}
	var heads []headCheck
	err := p.read(ctx, req.Read, func(r *events.Reader, rev, _ int64) error {
		out.ProjectRevision = rev
		works := []string{req.Work}
		if req.Work != "" {
			if err := commands.KnownWork(r.Conn, "context hygiene", req.Work, rev); err != nil {
				return err
			}
		} else {
			all, err := projections.AllKnowledgeWorkAt(r.Conn, rev)
			if err != nil {
				return err
			}
			works = all
		}
		for _, work := range works {
			items, err := projections.KnowledgeAt(r.Conn, work, rev)
			if err != nil {
				return err
			}
			sessions, err := projections.SessionsAt(r.Conn, rev, work)
			if err != nil {
				return err
			}
			session := "SESSION"
			for _, s := range sessions {
				if s.Status == projections.SessionActive {
					session = s.ID
				}
			}
			checkpoint := fmt.Sprintf("awr session checkpoint --session %s --agent \"$USER\" --digest 'Pruned what died' --next-action 'NEXT'", session)
			for _, k := range items {
				if !k.Live() {
					continue
				}
				switch {
				case k.Kind == events.KnowledgeLoop && k.Sessions >= HygieneSessions:
					out.Findings = append(out.Findings, Finding{Kind: FindingStaleLoop, Work: work, ID: k.ID, Text: k.Text,
						Reason:  fmt.Sprintf("open for %d sessions since seq %d", k.Sessions, k.OpenedSeq),
						Command: fmt.Sprintf("%s --resolve-loop '%s=HOW' (or --drop-loop '%s=WHY')", checkpoint, k.ID, k.ID)})
				case k.Kind == events.KnowledgeHypothesis && k.Sessions >= HygieneSessions:
					out.Findings = append(out.Findings, Finding{Kind: FindingUnconfirmed, Work: work, ID: k.ID, Text: k.Text,
						Reason:  fmt.Sprintf("unconfirmed over %d sessions since seq %d", k.Sessions, k.OpenedSeq),
						Command: fmt.Sprintf("%s --confirm %s (or --retract '%s=WHY')", checkpoint, k.ID, k.ID)})
				case k.Kind == events.KnowledgeFact || k.Kind == events.KnowledgeDecision:
					// Evidence, not age: the item's own fields changed in
					// the register after it was recorded (another item's
					// edit in the same file is not).
					changes, err := workcontext.ChangedSince(r.Conn, work, k.OpenedSeq, rev)
					if err != nil {
						return err
					}
					if len(changes) > 0 {
						c := changes[0]
						for _, x := range changes[1:] {
							if x.Seq < c.Seq {
								c = x
							}
						}
						out.Findings = append(out.Findings, Finding{Kind: FindingSourceChangedAfter, Work: work, ID: k.ID, Text: k.Text,
							Reason: fmt.Sprintf("recorded at seq %d; %s changed in its source at seq %d: %s was %q, now %q",
								k.OpenedSeq, work, c.Seq, c.Field, c.Then, c.Now),
							Command: fmt.Sprintf("%s --supersede '%s=TEXT' (or --retract '%s=WHY')", checkpoint, k.ID, k.ID)})
					}
				}
			}
			out.Findings = append(out.Findings, duplicates(work, items, checkpoint)...)
			if req.Past() {
				continue
			}
			// The latest checkpoint of each session on the work that
			// recorded a repository.
			for _, s := range sessions {
				cps, err := projections.SessionCheckpointsAt(r.Conn, s.ID, rev)
				if err != nil {
					return err
				}
				for i := len(cps) - 1; i >= 0; i-- {
					if rr := cps[i].Repo; rr != nil && rr.State != nil && rr.State.Head != "" {
						start, err := projections.SessionStartOf(r.Conn, &s)
						if err != nil {
							return err
						}
						heads = append(heads, headCheck{work: work, session: session, checkpoint: cps[i].ID, head: rr.State.Head,
							dir: filepath.Join(p.dir, filepath.FromSlash(start.Workdir))})
						break
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if req.Past() {
		return out, nil
	}
	out.Repository = "checked"
	if len(heads) == 0 {
		out.Repository = "not_checked: no checkpoint recorded a repository HEAD"
	}
	captured := map[string]*repo.State{}
	for _, h := range heads {
		now, err := captured[h.dir], error(nil)
		if now == nil {
			now, err = repo.Capture(ctx, h.dir)
			captured[h.dir] = now
		}
		if err != nil {
			out.Repository = "unverifiable: " + unverifiableReason(err)
			continue
		}
		ok, err := repo.IsAncestor(ctx, h.dir, h.head, "HEAD")
		if err == nil && ok {
			continue
		}
		reason := fmt.Sprintf("it recorded HEAD %.12s, which is not an ancestor of HEAD %.12s (reset, rebase or another branch)", h.head, now.Head)
		if err != nil {
			reason = fmt.Sprintf("it recorded HEAD %.12s, which the repository cannot place: %s", h.head, unverifiableReason(err))
		}
		out.Findings = append(out.Findings, Finding{Kind: FindingHeadNotAncestor, Work: h.work, ID: h.checkpoint, Reason: reason,
			Command: fmt.Sprintf("awr session checkpoint --session %s --agent \"$USER\" --digest 'Restated against HEAD %.12s' --next-action 'NEXT'", h.session, now.Head)})
	}
	sort.SliceStable(out.Findings, func(i, j int) bool { return out.Findings[i].Work < out.Findings[j].Work })
	return out, nil
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
