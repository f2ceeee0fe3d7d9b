package hygiene

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/repo"
	"github.com/awr-dev/awr/internal/workcontext"
	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
)

// The evidence hygiene reads: what in the log or the repository
// contradicts or completes a loop, decision, fact or hypothesis. Texts
// meet by their words: an evidence text covers an item's text when it
// holds at least three quarters of the item's content words (case, word
// endings and filler words aside), so "Timeouts come from DNS, not the
// pool size" covers the hypothesis "Timeouts come from the pool size",
// and "fix the logout" does not cover the loop "fix the login".

// doneStatuses are the register statuses of a ticked item.
var doneStatuses = map[string]bool{projections.StatusCompleted: true, "cancelled": true}

// tickedItem is a register item ticked done at rev.
type tickedItem struct {
	key, title, status string
}

// tickedItems lists the register items done at rev.
func tickedItems(conn *sqlite.Conn, rev int64, head bool) ([]tickedItem, error) {
	items, err := projections.WorkItemsAt(conn, rev, head)
	if err != nil {
		return nil, err
	}
	var out []tickedItem
	for _, it := range items {
		if doneStatuses[it.Status] {
			out = append(out, tickedItem{key: it.Key, title: it.Title, status: it.Status})
		}
	}
	return out, nil
}

// retireCommand is the checkpoint flag that retires an item of kind k.
func retireCommand(checkpoint string, k *projections.Knowledge) string {
	switch k.Kind {
	case events.KnowledgeLoop:
		return fmt.Sprintf("%s --resolve-loop '%s=HOW' (or --drop-loop '%s=WHY')", checkpoint, k.ID, k.ID)
	case events.KnowledgeHypothesis:
		return fmt.Sprintf("%s --confirm %s (or --retract '%s=WHY')", checkpoint, k.ID, k.ID)
	}
	return fmt.Sprintf("%s --supersede '%s=TEXT' (or --retract '%s=WHY')", checkpoint, k.ID, k.ID)
}

// logEvidence finds, for each live item of work at rev, the first
// evidence in the log that it died or was completed: a later live fact or
// decision that answers it, its loop's work item (or a register item
// covering the loop) ticked done since it was opened, its work item's own
// source fields changed since a fact or decision was recorded.
func logEvidence(conn *sqlite.Conn, work string, rev int64, items []projections.Knowledge, ticked []tickedItem, checkpoint string) ([]Finding, error) {
	var out []Finding
	for i := range items {
		k := &items[i]
		if !k.Live() {
			continue
		}
		if f := answered(work, k, items, checkpoint); f != nil {
			out = append(out, *f)
			continue
		}
		switch k.Kind {
		case events.KnowledgeLoop:
			f, err := tickedEvidence(conn, work, rev, k, ticked)
			if err != nil {
				return nil, err
			}
			if f != nil {
				f.Command = retireCommand(checkpoint, k)
				out = append(out, *f)
			}
		case events.KnowledgeFact, events.KnowledgeDecision:
			// The item's own fields changed in the register after it was
			// recorded (another item's edit in the same file is not).
			changes, err := workcontext.ChangedSince(conn, work, k.OpenedSeq, rev)
			if err != nil {
				return nil, err
			}
			if len(changes) == 0 {
				continue
			}
			c := changes[0]
			for _, x := range changes[1:] {
				if x.Seq < c.Seq {
					c = x
				}
			}
			out = append(out, Finding{Kind: FindingSourceChangedAfter, Work: work, ID: k.ID, Text: k.Text,
				Reason: fmt.Sprintf("recorded at seq %d; %s changed in its source at seq %d: %s was %q, now %q",
					k.OpenedSeq, work, c.Seq, c.Field, c.Then, c.Now),
				Evidence: &Evidence{Seq: c.Seq, Quote: fmt.Sprintf("%s: %q → %q", c.Field, c.Then, c.Now)},
				Command:  retireCommand(checkpoint, k)})
		}
	}
	return out, nil
}

// answered is the finding of k when a live fact or decision recorded
// after it names its id, or, for a hypothesis, a later fact covers its
// words; nil otherwise.
func answered(work string, k *projections.Knowledge, items []projections.Knowledge, checkpoint string) *Finding {
	for j := range items {
		y := &items[j]
		if y.ID == k.ID || !y.Live() || y.OpenedSeq <= k.OpenedSeq || (y.Kind != events.KnowledgeFact && y.Kind != events.KnowledgeDecision) {
			continue
		}
		how := ""
		switch {
		case namesID(y.Text, k.ID):
			how = "names it"
		case k.Kind == events.KnowledgeHypothesis && y.Kind == events.KnowledgeFact && covers(y.Text, k.Text):
			how = "states what it guessed"
		default:
			continue
		}
		return &Finding{Kind: FindingAnswered, Work: work, ID: k.ID, Text: k.Text,
			Reason:   fmt.Sprintf("%s %s, recorded at seq %d after it, %s: %q", y.Kind, y.ID, y.OpenedSeq, how, y.Text),
			Evidence: &Evidence{Seq: y.OpenedSeq, Quote: y.ID + ": " + y.Text},
			Command:  retireCommand(checkpoint, k)}
	}
	return nil
}

// tickedEvidence is the finding of loop k when its work item, or a
// register item whose title covers the loop's words, was ticked done
// after the loop was opened; nil otherwise.
func tickedEvidence(conn *sqlite.Conn, work string, rev int64, k *projections.Knowledge, ticked []tickedItem) (*Finding, error) {
	for _, t := range ticked {
		if t.key != work && !covers(t.title, k.Text) {
			continue
		}
		changes, err := workcontext.ChangedSince(conn, t.key, k.OpenedSeq, rev)
		if err != nil {
			return nil, err
		}
		for _, c := range changes {
			if c.Field != "status" || !doneStatuses[c.Now] {
				continue
			}
			what := "its work item " + work
			if t.key != work {
				what = fmt.Sprintf("register item %s (%q)", t.key, t.title)
			}
			return &Finding{Kind: FindingLoopTicked, Work: work, ID: k.ID, Text: k.Text,
				Reason:   fmt.Sprintf("opened at seq %d; %s was ticked %s in its register at seq %d (status was %q)", k.OpenedSeq, what, c.Now, c.Seq, c.Then),
				Evidence: &Evidence{Seq: c.Seq, Quote: fmt.Sprintf("%s %s: status %q → %q", t.key, t.title, c.Then, c.Now)}}, nil
		}
	}
	return nil, nil
}

// commitEvidence is the finding of loop l when one of commits (those
// between the state its opening checkpoint recorded and now, newest
// first, at most repo.MaxCommits) names it (its id beside its work key)
// or covers its words: the oldest such; nil otherwise. A confirmation
// whose HEAD reaches the commit answered it.
func commitEvidence(ctx context.Context, l loopCheck, commits []repo.Commit, confirmedHead string) *Finding {
	for i := len(commits) - 1; i >= 0; i-- {
		cm := commits[i]
		if !(namesID(cm.Subject, l.id) && namesID(cm.Subject, l.work)) && !covers(cm.Subject, l.text) {
			continue
		}
		if confirmedHead != "" {
			if reached, err := repo.IsAncestor(ctx, l.dir, cm.Sha, confirmedHead); err == nil && reached {
				continue
			}
		}
		by := ""
		if cm.Author != "" {
			by = " by " + cm.Author
		}
		return &Finding{Kind: FindingLoopCommitted, Work: l.work, ID: l.id, Text: l.text,
			Reason:   fmt.Sprintf("commit %s%s, made since the loop was opened, closes it: %q", cm.Sha, by, cm.Subject),
			Evidence: &Evidence{Commit: cm.Sha, Quote: cm.Subject},
			Command:  fmt.Sprintf("%s --resolve-loop '%s=HOW' (or --drop-loop '%s=WHY')", l.checkpoint, l.id, l.id)}
	}
	return nil
}

// namesID reports whether text holds id as a word of its own (case
// aside): "L-2" in "closes L-2." but not in "L-21".
func namesID(text, id string) bool {
	if id == "" {
		return false
	}
	t, n := strings.ToUpper(text), strings.ToUpper(id)
	for from := 0; ; {
		i := strings.Index(t[from:], n)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(n)
		before := i == 0 || !idRune(rune(t[i-1]))
		after := end == len(t) || !idRune(rune(t[end]))
		if before && after {
			return true
		}
		from = i + 1
	}
}

func idRune(r rune) bool { return r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// covers reports whether evidence holds at least three quarters of the
// content words of item (which must have two or more).
func covers(evidence, item string) bool {
	want := contentWords(item)
	if len(want) < 2 {
		return false
	}
	have := contentWords(evidence)
	n := 0
	for w := range want {
		if have[w] {
			n++
		}
	}
	return 4*n >= 3*len(want)
}

// fillerWords carry no subject: they are left out when texts are
// compared by their words.
var fillerWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the of to in on for and or is are was were be been being it its this that these those
		with by at from as into onto we i you he she they them our your their there here not no do does did done should must can
		could will would shall may might has have had if then than so but about after before over under up out what which who whom
		when where why how whether need needs all any some each every more most other only own same too very just now also`) {
		fillerWords[w] = true
	}
}

// contentWords are the words of s that carry its subject, lower-cased
// and stripped of common endings (-s, -ing, -ed, -e).
func contentWords(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if fillerWords[w] {
			continue
		}
		out[stem(w)] = true
	}
	return out
}

func stem(w string) string {
	if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
		w = w[:len(w)-1]
	}
	if len(w) > 5 && strings.HasSuffix(w, "ing") {
		w = w[:len(w)-3]
	} else if len(w) > 4 && strings.HasSuffix(w, "ed") {
		w = w[:len(w)-2]
	}
	if len(w) > 3 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}
