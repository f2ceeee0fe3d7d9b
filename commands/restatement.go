package commands

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/repo"
	"github.com/awr-dev/awr/internal/workcontext"
	"github.com/awr-dev/awr/projections"
)

// Restatement is a successor's account of the handoff it received: what
// it will do next, the open loops and decisions it inherited (ids or
// texts), the files the work touched and the check that remains.
type Restatement struct {
	NextAction     string   `json:"next_action"`
	OpenLoops      []string `json:"open_loops"`
	Decisions      []string `json:"decisions"`
	FilesTouched   []string `json:"files_touched"`
	RemainingCheck string   `json:"remaining_check"`
}

// Restatement verdicts and item statuses.
const (
	VerdictVerified          = "verified"
	VerdictAttentionRequired = "attention_required"

	ItemMatch        = "match"
	ItemMissing      = "missing"
	ItemExtra        = "extra"
	ItemMismatch     = "mismatch"
	ItemUnverifiable = "unverifiable"
	// ItemClosed is a loop, decision, fact or hypothesis stated as in
	// force that was closed (resolved, dropped, retracted, superseded):
	// Expected names the closing event.
	ItemClosed = "closed"
)

// VerifyRestatementRequest is `awr recovery verify` and
// awr_recovery_verify: a session's restatement, from a file or standard
// input on the CLI (--input), inline over MCP (restatement).
type VerifyRestatementRequest struct {
	Session     string       `name:"session" required:"" json:"session" help:"The successor session whose handoff is checked." placeholder:"ID"`
	Input       string       `name:"input" json:"input,omitempty" help:"The restatement as JSON (next_action, open_loops, decisions, files_touched, remaining_check): a file, or - for standard input." placeholder:"FILE|-"`
	Restatement *Restatement `kong:"-" json:"restatement,omitempty" help:"The restatement itself (instead of input): next_action, open_loops and decisions (ids or texts), files_touched, remaining_check."`
	// Repo is the door's comparison of the latest checkpoint's repository
	// with the repository now. No front end sets it.
	Repo *workcontext.RepoCheck `kong:"-" json:"-"`
	WriteMeta
}

// RestatementResult is the verdict and the field-by-field comparison.
type RestatementResult struct {
	Replay
	Session         string                   `json:"session"`
	Work            string                   `json:"work"`
	Checkpoint      string                   `json:"checkpoint"`
	Verdict         string                   `json:"verdict"`
	Items           []events.RestatementItem `json:"items"`
	Seq             int64                    `json:"seq"`
	ProjectRevision int64                    `json:"project_revision"`
}

// VerifyRestatement compares a successor's restatement with the recorded
// state of its session's chain (latest checkpoint, open loops and
// decisions of the work item, files recorded as changed, acceptance
// criteria) and the repository now, and appends restatement_checked with
// the verdict. Ids match exactly (case aside); texts, next actions and
// file paths match after normalizing (case, white space, trailing
// punctuation; "./" and trailing slashes in paths). The event is written
// whatever the verdict; a verdict other than verified is returned with a
// RestatementMismatch error, after the result.
// Errors: InvalidInput without a restatement; NotFound for an unknown
// session; InvalidTransition when its chain recorded no checkpoint.
func VerifyRestatement(ctx context.Context, env *Env, req VerifyRestatementRequest) (*RestatementResult, error) {
	if err := required("session", req.Session); err != nil {
		return nil, err
	}
	rs := req.Restatement
	if rs == nil {
		return nil, fault.New(fault.Usage, "recovery verify: no restatement given: --input FILE or - is required").With("flag", "--input").
			WithHint("awr recovery verify --session %s --input restatement.json", req.Session)
	}
	fields := [][2]string{{"next_action", rs.NextAction}, {"remaining_check", rs.RemainingCheck}}
	for i, s := range rs.OpenLoops {
		fields = append(fields, [2]string{fmt.Sprintf("open_loops[%d]", i), s})
	}
	for i, s := range rs.Decisions {
		fields = append(fields, [2]string{fmt.Sprintf("decisions[%d]", i), s})
	}
	if err := refuseSecrets("recovery verify", fields...); err != nil {
		return nil, err
	}
	res, err := write(ctx, env, "awr", req.WriteMeta, []string{"session/" + req.Session}, req, func(tx *events.Tx) (*RestatementResult, error) {
		s, err := projections.SessionAt(tx.Conn, req.Session, tx.Head())
		if err != nil {
			return nil, err
		}
		if s == nil {
			return nil, fault.New(fault.NotFound, "recovery verify: session %s not found", req.Session).With("session_id", req.Session).WithHint("awr session list")
		}
		in, err := workcontext.Gather(tx.Conn, tx.Head(), true, s.Work, s.ID)
		if err != nil {
			return nil, err
		}
		if in.Latest == nil {
			return nil, fault.New(fault.InvalidTransition, "recovery verify: session %s and its predecessors recorded no checkpoint: there is no handoff to restate", s.ID).
				With("session_id", s.ID).WithHint("awr recovery inspect --session %s", s.ID)
		}
		touched, recorded, err := filesTouched(tx, s)
		if err != nil {
			return nil, err
		}
		// Every item the work ever closed, not only those closed since
		// the previous checkpoint: a successor stating a long-resolved
		// loop as open is told when and how it closed.
		ever, err := projections.KnowledgeStateAt(tx.Conn, s.Work, tx.Head(), 0)
		if err != nil {
			return nil, err
		}
		items := compareRestatement(rs, &in, ever.Closed, touched, recorded, req.Repo)
		verdict := VerdictVerified
		for _, it := range items {
			if it.Status != ItemMatch {
				verdict = VerdictAttentionRequired
			}
		}
		e, err := tx.Append(events.NewEvent{Stream: "session/" + s.ID, Payload: events.RestatementChecked{
			SessionID: s.ID, Work: s.Work, CheckpointID: in.Latest.ID, Verdict: verdict, Items: items,
		}})
		if err != nil {
			return nil, err
		}
		return &RestatementResult{Session: s.ID, Work: s.Work, Checkpoint: in.Latest.ID, Verdict: verdict, Items: items, Seq: e.Seq, ProjectRevision: tx.Head()}, nil
	})
	if err != nil {
		return nil, err
	}
	if res.Verdict != VerdictVerified {
		var off []string
		for _, it := range res.Items {
			if it.Status != ItemMatch {
				off = append(off, it.Field+" "+it.Status)
			}
		}
		return res, fault.New(fault.RestatementMismatch, "recovery verify: the restatement of session %s does not match the recorded state: %s", res.Session, strings.Join(off, ", ")).
			With("session_id", res.Session).With("verdict", res.Verdict).WithHint("awr recovery inspect --session %s", res.Session)
	}
	return res, nil
}

// touchedFiles is what a chain's checkpoints recorded of the files its
// sessions touched: dirty, the files seen uncommitted at some checkpoint
// (the sessions' own work); committed, the files recorded as changed
// between checkpoints, which commits by others may have changed too.
type touchedFiles struct {
	dirty, committed map[string]bool
}

// filesTouched reads the files the chain's checkpoints recorded; recorded
// says whether any checkpoint of the chain recorded a readable
// repository.
func filesTouched(tx *events.Tx, s *projections.Session) (*touchedFiles, bool, error) {
	files := &touchedFiles{dirty: map[string]bool{}, committed: map[string]bool{}}
	recorded := false
	seen := map[string]bool{}
	for id := s.ID; id != "" && !seen[id]; {
		seen[id] = true
		cur, err := projections.SessionAt(tx.Conn, id, tx.Head())
		if err != nil {
			return nil, false, err
		}
		if cur == nil {
			break
		}
		cps, err := projections.SessionCheckpointsAt(tx.Conn, cur.ID, tx.Head())
		if err != nil {
			return nil, false, err
		}
		for i := len(cps) - 1; i >= 0; i-- {
			r := cps[i].Repo
			if r == nil || r.State == nil {
				continue
			}
			recorded = true
			for _, f := range r.State.DirtyFiles {
				files.dirty[normPath(f.Path)] = true
			}
			for _, f := range r.FilesChanged {
				files.committed[normPath(f.Path)] = true
			}
		}
		id = cur.PredecessorID
	}
	return files, recorded, nil
}

// compareRestatement compares each field of rs with the recorded state.
func compareRestatement(rs *Restatement, in *workcontext.Input, closed []projections.Knowledge, touched *touchedFiles, recorded bool, check *workcontext.RepoCheck) []events.RestatementItem {
	items := []events.RestatementItem{compareNextAction(rs, in)}
	var loops, decisions, all []projections.Knowledge
	if in.Knowledge != nil {
		loops, decisions = in.Knowledge.OpenLoops, in.Knowledge.Decisions
		all = append(append(append(append(all, in.Knowledge.OpenLoops...), in.Knowledge.Decisions...), in.Knowledge.Facts...), in.Knowledge.Hypotheses...)
	}
	all = append(all, closed...)
	items = append(items, compareKnowledge("open_loops", rs.OpenLoops, loops, all)...)
	items = append(items, compareKnowledge("decisions", rs.Decisions, decisions, all)...)
	items = append(items, compareFiles(rs, touched, recorded, check)...)
	return append(items, compareRemainingCheck(rs, in))
}

func restatementItem(field, status, expected, stated string) events.RestatementItem {
	return events.RestatementItem{Field: field, Status: status, Expected: expected, Stated: stated}
}

// compareNextAction: the next action stated must be the latest
// checkpoint's, or the register's when it changed after the checkpoint
// (the newer intent).
func compareNextAction(rs *Restatement, in *workcontext.Input) events.RestatementItem {
	na := workcontext.NextActionOf(in)
	switch {
	case strings.TrimSpace(rs.NextAction) == "":
		return restatementItem("next_action", ItemMissing, na.Checkpoint, "")
	case projections.MatchText(rs.NextAction) == projections.MatchText(na.Checkpoint):
		return restatementItem("next_action", ItemMatch, na.Checkpoint, rs.NextAction)
	case na.SourceChangedSeq > 0 && projections.MatchText(rs.NextAction) == projections.MatchText(na.Source):
		return restatementItem("next_action", ItemMatch, na.Source, rs.NextAction)
	}
	return restatementItem("next_action", ItemMismatch, na.Checkpoint, rs.NextAction)
}

// compareFiles compares the files stated as touched with the
// predecessor's. Required are the files the chain's checkpoints saw
// uncommitted and the worktree's unrecorded work now; files the
// checkpoints recorded as changed by commits, and the files of the
// commits made since the latest checkpoint, may be stated (the
// predecessor may have made them) but are not required: they may be
// other agents' work. The repository's own item comes first.
func compareFiles(rs *Restatement, touched *touchedFiles, recorded bool, check *workcontext.RepoCheck) []events.RestatementItem {
	var items []events.RestatementItem
	add := func(field, status, expected, stated string) {
		items = append(items, restatementItem(field, status, expected, stated))
	}
	required, allowed := map[string]bool{}, map[string]string{}
	if touched != nil {
		for f := range touched.dirty {
			required[f] = true
		}
		for f := range touched.committed {
			allowed[f] = "recorded as changed by a checkpoint of the chain"
		}
	}
	repoKnown := recorded
	if check != nil {
		switch {
		case check.Status == repo.CompareUnverifiable:
			repoKnown = false
			add("repository", ItemUnverifiable, "the repository checkpoint "+check.Checkpoint+" recorded", check.Reason)
		case check.HeadRewritten:
			add("repository", ItemMismatch, "HEAD "+check.RecordedHead+" or a descendant", "HEAD "+check.CurrentHead+": the recorded commit is not an ancestor")
		default:
			add("repository", ItemMatch, "HEAD "+check.RecordedHead+" or a descendant", "HEAD "+check.CurrentHead)
		}
		for _, d := range check.Unrecorded {
			required[normPath(d.Path)] = true
		}
		for _, f := range check.FilesChanged {
			// Not every unrecorded file is known when the list was cut:
			// any changed one may be.
			if _, ok := allowed[normPath(f.Path)]; !ok || check.UnrecordedTruncated {
				allowed[normPath(f.Path)] = "changed since the checkpoint"
			}
		}
	}
	if !repoKnown {
		add("files_touched", ItemUnverifiable, "no repository recorded by the chain's checkpoints", strings.Join(rs.FilesTouched, ", "))
		return items
	}
	stated := map[string]string{}
	for _, f := range rs.FilesTouched {
		if n := normPath(f); n != "" {
			stated[n] = f
		}
	}
	for _, f := range slices.Sorted(maps.Keys(required)) {
		if raw, ok := stated[f]; ok {
			add("files_touched", ItemMatch, f, raw)
		} else {
			add("files_touched", ItemMissing, f, "")
		}
	}
	for _, f := range slices.Sorted(maps.Keys(stated)) {
		switch why, ok := allowed[f]; {
		case required[f]:
		case ok:
			add("files_touched", ItemMatch, f+" ("+why+")", stated[f])
		default:
			add("files_touched", ItemExtra, "", stated[f])
		}
	}
	return items
}

// compareRemainingCheck: the remaining check stated must be one of the
// acceptance criteria, or a sentence that contains one whole.
func compareRemainingCheck(rs *Restatement, in *workcontext.Input) events.RestatementItem {
	var acc []string
	if in.Item != nil {
		acc = in.Item.Acceptance
	}
	switch {
	case len(acc) == 0:
		return restatementItem("remaining_check", ItemUnverifiable, "the work item has no acceptance criteria", rs.RemainingCheck)
	case strings.TrimSpace(rs.RemainingCheck) == "":
		return restatementItem("remaining_check", ItemMissing, strings.Join(acc, "; "), "")
	}
	st := ItemMismatch
	for _, a := range acc {
		if x, y := projections.MatchText(a), projections.MatchText(rs.RemainingCheck); x != "" && (x == y || strings.Contains(y, x)) {
			st = ItemMatch
		}
	}
	return restatementItem("remaining_check", st, strings.Join(acc, "; "), rs.RemainingCheck)
}

// compareKnowledge matches stated ids or texts with the live items of a
// field: each live item stated is a match, each not stated is missing; a
// stated id or text of a closed item is closed, with its closing event; a
// live item of another kind is a mismatch; anything else stated is extra.
func compareKnowledge(field string, stated []string, live, all []projections.Knowledge) []events.RestatementItem {
	var items []events.RestatementItem
	found := map[string]bool{}
	for _, raw := range stated {
		s := strings.TrimSpace(raw)
		if s == "" {
			continue
		}
		var hit *projections.Knowledge
		for i := range live {
			if strings.EqualFold(live[i].ID, s) || projections.MatchText(live[i].Text) == projections.MatchText(s) {
				hit = &live[i]
				break
			}
		}
		switch {
		case hit != nil && !found[hit.ID]:
			found[hit.ID] = true
			items = append(items, events.RestatementItem{Field: field, Status: ItemMatch, Expected: hit.ID + ": " + hit.Text, Stated: raw})
		case hit != nil:
			// stated twice: the second adds nothing
		default:
			item := events.RestatementItem{Field: field, Status: ItemExtra, Stated: raw}
			for i := range all {
				k := &all[i]
				if !strings.EqualFold(k.ID, s) && projections.MatchText(k.Text) != projections.MatchText(s) {
					continue
				}
				if k.Live() {
					item.Status, item.Expected = ItemMismatch, fmt.Sprintf("%s is a %s, not one of the %s", k.ID, k.Kind, strings.ReplaceAll(field, "_", " "))
					break
				}
				item.Status, item.Expected = ItemClosed, closedText(k)
			}
			items = append(items, item)
		}
	}
	for i := range live {
		if !found[live[i].ID] {
			items = append(items, events.RestatementItem{Field: field, Status: ItemMissing, Expected: live[i].ID + ": " + live[i].Text})
		}
	}
	return items
}

// closedText says how a closed item closed: "L-2 (text) was resolved at
// seq 14 in session S: note", "D-1 (text) was superseded by D-2 at seq 8
// in session S".
func closedText(k *projections.Knowledge) string {
	out := fmt.Sprintf("%s (%s) was %s", k.ID, k.Text, k.State)
	if k.SupersededBy != "" {
		out += " by " + k.SupersededBy
	}
	out += fmt.Sprintf(" at seq %d", k.ClosedSeq)
	if k.ClosedSession != "" {
		out += " in session " + k.ClosedSession
	}
	if k.Note != "" {
		out += ": " + k.Note
	}
	return out
}

// normPath is how file paths compare: slash-separated, without "./" or a
// trailing slash.
func normPath(p string) string {
	p = strings.TrimSpace(strings.ReplaceAll(p, "\\", "/"))
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	return strings.TrimRight(p, "/")
}
