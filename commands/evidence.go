package commands

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/shellwords"
	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
)

// EvidenceAddRequest records evidence against one acceptance criterion of
// a work item: a command awr runs (or whose reported result it takes), a
// file, or a note. Exactly one of Command, File and Note is given.
type EvidenceAddRequest struct {
	Work      string `name:"work" required:"" json:"work" help:"Work item key." placeholder:"KEY"`
	Criterion string `name:"criterion" required:"" json:"criterion" help:"The acceptance criterion: its number (1 is the first) or its text." placeholder:"N|TEXT"`
	Command   string `name:"command" json:"command,omitempty" help:"Run this command (sh -c, in the session's working directory) and record its exit code, duration, output hash and the repository state (level observed); with --exit-code, record that reported result without running it (level reported)." placeholder:"CMD"`
	ExitCode  *int   `name:"exit-code" json:"exit_code,omitempty" help:"With --command: the exit code someone else observed; the command is not run." placeholder:"C"`
	File      string `name:"file" json:"file,omitempty" help:"A file of the project that shows the criterion met (recorded by content hash; level reported)." placeholder:"PATH"`
	Note      string `name:"note" json:"note,omitempty" help:"A statement that the criterion is met (level note)." placeholder:"TEXT"`
	SessionID string `name:"session" json:"session,omitempty" help:"The session the evidence belongs to (its working directory is where the command runs)." placeholder:"ID"`
	Agent     string `name:"agent" json:"agent,omitempty" help:"Who records it (a label)." placeholder:"LABEL"`
	WriteMeta
	// Ran is what the door observed (a command it ran, a file it hashed)
	// and the repository then; front ends never set it.
	Ran *events.EvidenceRecorded `kong:"-" json:"-"`
}

// EvidenceAddResult is the evidence recorded.
type EvidenceAddResult struct {
	Replay
	Evidence events.EvidenceRecorded `json:"evidence"`
	Seq      int64                   `json:"seq"`
	// OutputTail is the last lines of a command's output (lines that look
	// like a credential withheld); it is not recorded, only its hash.
	OutputTail      []string `json:"output_tail,omitempty"`
	ProjectRevision int64    `json:"project_revision"`
}

// CheckEvidence checks req's shape before anything runs: one of command,
// file and note; --exit-code only with --command; no secret in what would
// be recorded. Errors: InvalidInput; RuleViolation.
func CheckEvidence(req EvidenceAddRequest) error {
	if err := required("work", req.Work); err != nil {
		return err
	}
	if err := required("criterion", req.Criterion); err != nil {
		return err
	}
	if req.ExitCode != nil && strings.TrimSpace(req.Command) == "" {
		return fault.New(fault.InvalidInput, "evidence add: --exit-code reports a command's result and needs --command").With("field", "exit_code").
			WithHint("awr evidence add --help")
	}
	n := 0
	for _, v := range []string{req.Command, req.File, req.Note} {
		if strings.TrimSpace(v) != "" {
			n++
		}
	}
	if n != 1 {
		return fault.New(fault.InvalidInput, "evidence add: give exactly one of --command, --file and --note (%d given)", n).With("field", "command").
			WithHint("awr evidence add --work %s --criterion %s --note 'WHAT YOU CHECKED'", req.Work, shellwords.Quote(req.Criterion))
	}
	return refuseSecrets("evidence add", [2]string{"command", req.Command}, [2]string{"file", req.File}, [2]string{"note", req.Note},
		[2]string{"agent", req.Agent}, [2]string{"criterion", req.Criterion})
}

// ResolveCriterion finds the criterion of item that spec names: a number
// (1-based) or the criterion's text (spacing and case aside). It returns
// the criterion as the source states it and its number.
// Errors: InvalidInput naming the item's criteria; InvalidTransition for
// an item without acceptance criteria.
func ResolveCriterion(op string, it *events.WorkItem, spec string) (string, int, error) {
	if len(it.Acceptance) == 0 {
		return "", 0, fault.New(fault.InvalidTransition, "%s: %s has no acceptance criteria, so nothing can be verified against it: add acceptance criteria to it in %s, then reindex", op, it.Key, it.Source.Path).
			With("work", it.Key).WithHint("awr source reindex")
	}
	if n, err := strconv.Atoi(strings.TrimSpace(spec)); err == nil {
		if n >= 1 && n <= len(it.Acceptance) {
			return it.Acceptance[n-1], n, nil
		}
		return "", 0, fault.New(fault.InvalidInput, "%s: --criterion %d: %s has criteria 1 to %d", op, n, it.Key, len(it.Acceptance)).
			With("field", "criterion").With("criteria", it.Acceptance).WithHint("awr work show %s", it.Key)
	}
	want := strings.ToLower(projections.NormalizeText(spec))
	for i, c := range it.Acceptance {
		if strings.ToLower(projections.NormalizeText(c)) == want {
			return c, i + 1, nil
		}
	}
	return "", 0, fault.New(fault.InvalidInput, "%s: --criterion %q is not a criterion of %s (%s)", op, spec, it.Key, strings.Join(numbered(it.Acceptance), "; ")).
		With("field", "criterion").With("criteria", it.Acceptance).WithHint("awr work show %s", it.Key)
}

func numbered(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = fmt.Sprintf("%d. %s", i+1, s)
	}
	return out
}

// WorkItemNow returns the work item key at rev (the first source's when
// several declare it). Errors: NotFound.
func WorkItemNow(conn *sqlite.Conn, op, key string, rev int64) (*events.WorkItem, error) {
	items, err := projections.WorkItemAt(conn, key, rev)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, fault.New(fault.NotFound, "%s: work item %q not found at revision %d", op, key, rev).With("work", key).WithHint("awr ready --all")
	}
	return &items[0].WorkItem, nil
}

// RecordEvidence appends evidence_recorded for what the door observed
// (req.Ran: the command's result or the file's hash, and the repository),
// against the criterion req.Criterion names in the item as it is now.
// Errors: those of CheckEvidence and ResolveCriterion; NotFound for an
// unknown item or session; InvalidInput for a session on another item;
// InvalidTransition for an ended session.
func RecordEvidence(ctx context.Context, env *Env, req EvidenceAddRequest) (*EvidenceAddResult, error) {
	if err := CheckEvidence(req); err != nil {
		return nil, err
	}
	if req.Ran == nil {
		return nil, fault.New(fault.Internal, "evidence add: nothing observed to record")
	}
	actor := orDefault(req.Agent, "awr")
	return write(ctx, env, actor, req.WriteMeta, []string{"evidence/" + req.Work}, req, func(tx *events.Tx) (*EvidenceAddResult, error) {
		it, err := WorkItemNow(tx.Conn, "evidence add", req.Work, tx.Head())
		if err != nil {
			return nil, err
		}
		text, n, err := ResolveCriterion("evidence add", it, req.Criterion)
		if err != nil {
			return nil, err
		}
		if req.SessionID != "" {
			s, err := activeSession(tx, "evidence add", req.SessionID)
			if err != nil {
				return nil, err
			}
			if err := onWork("evidence add", req.Work, s); err != nil {
				return nil, err
			}
		}
		ev := *req.Ran
		ev.EvidenceID, ev.Work, ev.Criterion, ev.Index, ev.SessionID, ev.Agent = tx.NewID(), req.Work, text, n, req.SessionID, req.Agent
		e, err := tx.Append(events.NewEvent{Stream: "evidence/" + req.Work, Payload: ev})
		if err != nil {
			return nil, err
		}
		return &EvidenceAddResult{Evidence: ev, Seq: e.Seq, ProjectRevision: tx.Head()}, nil
	})
}

// levelRank orders evidence levels: a higher rank is stronger.
var levelRank = map[string]int{events.LevelNote: 1, events.LevelReported: 2, events.LevelObserved: 3}

// LevelMeets reports whether level is at least required.
func LevelMeets(level, required string) bool { return levelRank[level] >= levelRank[required] }

// Criterion states, as completion judges them.
const (
	CriterionPassing    = "passing"     // passing evidence at the current repository state and level
	CriterionStale      = "stale"       // passing evidence, but recorded at another repository state (or the file changed)
	CriterionFailing    = "failing"     // its newest evidence at this state failed
	CriterionBelowLevel = "below_level" // passing evidence, but weaker than the project requires
	CriterionMissing    = "missing"     // no evidence
)

// CriterionStatus is one acceptance criterion as completion judges it:
// its state, the evidence that decides it, and what it lacks.
type CriterionStatus struct {
	Index     int    `json:"index"`
	Criterion string `json:"criterion"`
	State     string `json:"state"`
	// Evidence is the evidence that decides the state (the passing one,
	// or the newest one otherwise); nil when there is none.
	Evidence *events.EvidenceRecorded `json:"evidence,omitempty"`
	Seq      int64                    `json:"seq,omitempty"`
	Lacks    string                   `json:"lacks,omitempty"`
}

// EvidenceOf returns the evidence recorded for work at rev, newest first.
func EvidenceOf(conn *sqlite.Conn, work string, rev int64) ([]*events.EvidenceRecorded, []int64, error) {
	evs, err := projections.WorkEventsAt(conn, work, events.KindEvidenceRecorded, rev, -1)
	if err != nil {
		return nil, nil, err
	}
	out, seqs := make([]*events.EvidenceRecorded, 0, len(evs)), make([]int64, 0, len(evs))
	for _, e := range evs {
		v, err := events.Decode(e)
		if err != nil {
			return nil, nil, err
		}
		pl, ok := v.(*events.EvidenceRecorded)
		if !ok {
			return nil, nil, fault.New(fault.Storage, "evidence of %s: event %d is a %s", work, e.Seq, e.Kind)
		}
		out, seqs = append(out, pl), append(seqs, e.Seq)
	}
	return out, seqs, nil
}

// Observed is the state evidence is judged against: the repository now
// (nil outside a git work tree, or at a past revision, where it is not
// compared) and the current content hash of each evidence file.
type Observed struct {
	Repo      *events.SeatRepo
	Compare   bool
	FileHash  map[string]string
	LevelNeed string
}

// JudgeCriteria says, for each acceptance criterion of it, whether its
// evidence (newest first) carries it at the observed state and level.
func JudgeCriteria(it *events.WorkItem, evidence []*events.EvidenceRecorded, seqs []int64, obs Observed) []CriterionStatus {
	out := make([]CriterionStatus, 0, len(it.Acceptance))
	for i, c := range it.Acceptance {
		st := CriterionStatus{Index: i + 1, Criterion: c, State: CriterionMissing, Lacks: "no evidence"}
		key := strings.ToLower(projections.NormalizeText(c))
		for j, ev := range evidence {
			if strings.ToLower(projections.NormalizeText(ev.Criterion)) != key {
				continue
			}
			state, lacks := judge(ev, obs)
			if st.State == CriterionMissing || state == CriterionPassing {
				st.State, st.Lacks, st.Evidence, st.Seq = state, lacks, ev, seqs[j]
			}
			if state == CriterionPassing || state == CriterionFailing {
				// The newest evidence at this state decides; older
				// evidence cannot revive a criterion it failed.
				break
			}
		}
		out = append(out, st)
	}
	return out
}

func judge(ev *events.EvidenceRecorded, obs Observed) (state, lacks string) {
	if obs.Compare && !sameRepo(ev.Repo, obs.Repo) {
		return CriterionStale, fmt.Sprintf("its evidence %s was recorded at %s, and the repository is now at %s", ev.EvidenceID, repoWords(ev.Repo), repoWords(obs.Repo))
	}
	if obs.Compare && ev.Basis == events.EvidenceFile && obs.FileHash[ev.Path] != ev.FileHash {
		return CriterionStale, fmt.Sprintf("file %s changed since its evidence %s", ev.Path, ev.EvidenceID)
	}
	if !ev.Passed {
		code := "?"
		if ev.ExitCode != nil {
			code = strconv.Itoa(*ev.ExitCode)
		}
		return CriterionFailing, fmt.Sprintf("its newest evidence %s failed (exit %s)", ev.EvidenceID, code)
	}
	if !LevelMeets(ev.Level, obs.LevelNeed) {
		return CriterionBelowLevel, fmt.Sprintf("its evidence %s is %s, and the project requires %s", ev.EvidenceID, ev.Level, obs.LevelNeed)
	}
	return CriterionPassing, ""
}

func sameRepo(a, b *events.SeatRepo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Head == b.Head && a.Dirty == b.Dirty && a.DirtyFingerprint == b.DirtyFingerprint
}

func repoWords(r *events.SeatRepo) string {
	switch {
	case r == nil:
		return "no git work tree"
	case r.Dirty:
		return fmt.Sprintf("HEAD %s with uncommitted changes %s", shortID(r.Head), shortID(r.DirtyFingerprint))
	}
	return fmt.Sprintf("HEAD %s, clean", shortID(r.Head))
}

func shortID(h string) string {
	h = strings.TrimPrefix(h, "sha256:")
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// WorkCompleteRequest records a work item's completion, once every
// acceptance criterion has passing evidence at the current repository
// state.
type WorkCompleteRequest struct {
	Key       string `arg:"" name:"key" json:"key" help:"Work item key." placeholder:"KEY"`
	SessionID string `name:"session" required:"" json:"session" help:"The session holding the item's live claim." placeholder:"ID"`
	WriteMeta
	// Observed is the repository and the evidence files now, read by the
	// door; front ends never set it.
	Observed *Observed `kong:"-" json:"-"`
}

// WorkCompleteResult is the verification recorded.
type WorkCompleteResult struct {
	Replay
	Verified        events.WorkVerified `json:"verified"`
	Seq             int64               `json:"seq"`
	Criteria        []CriterionStatus   `json:"criteria"`
	ProjectRevision int64               `json:"project_revision"`
}

// CompleteWork records work_verified for req.Key when every acceptance
// criterion has passing evidence at the observed repository state and the
// project's evidence level. awr never edits the team's source: the log is
// where completion is recorded.
// Errors: InvalidInput for missing fields or a session on another item;
// NotFound for an unknown item or session; InvalidTransition for an ended
// session or one without the item's live claim; EvidenceMissing listing
// each criterion that lacks evidence and what it lacks (details
// criteria), and for an item without acceptance criteria.
func CompleteWork(ctx context.Context, env *Env, req WorkCompleteRequest) (*WorkCompleteResult, error) {
	if err := required("key", req.Key); err != nil {
		return nil, err
	}
	if err := required("session", req.SessionID); err != nil {
		return nil, err
	}
	obs := Observed{LevelNeed: env.policy().EvidenceLevel}
	if req.Observed != nil {
		obs.Repo, obs.FileHash, obs.Compare = req.Observed.Repo, req.Observed.FileHash, true
	}
	const op = "work complete"
	return sessionWrite(ctx, env, "awr", op, req.SessionID, req.WriteMeta, req, func(tx *events.Tx) (*WorkCompleteResult, error) {
		if err := tx.Guard("evidence/"+req.Key, "work/"+req.Key); err != nil {
			return nil, err
		}
		it, err := WorkItemNow(tx.Conn, op, req.Key, tx.Head())
		if err != nil {
			return nil, err
		}
		s, err := activeSession(tx, op, req.SessionID)
		if err != nil {
			return nil, err
		}
		if err := onWork(op, req.Key, s); err != nil {
			return nil, err
		}
		if live, err := holdsLive(tx, s.ID); err != nil {
			return nil, err
		} else if !live {
			return nil, fault.New(fault.InvalidTransition, "%s: session %s holds no live claim on %s", op, s.ID, req.Key).
				With("session_id", s.ID).WithHint("awr work claim %s --session %s", req.Key, s.ID)
		}
		if err := fence(tx, op, s); err != nil {
			return nil, err
		}
		if len(it.Acceptance) == 0 {
			return nil, fault.New(fault.EvidenceMissing, "%s: %s has no acceptance criteria, so nothing can verify it", op, req.Key).
				With("work", req.Key).WithHint("awr work show %s", req.Key)
		}
		evidence, seqs, err := EvidenceOf(tx.Conn, req.Key, tx.Head())
		if err != nil {
			return nil, err
		}
		criteria := JudgeCriteria(it, evidence, seqs, obs)
		var lacking []string
		hint := ""
		for _, c := range criteria {
			if c.State == CriterionPassing {
				continue
			}
			lacking = append(lacking, fmt.Sprintf("%d. %s: %s", c.Index, c.Criterion, c.Lacks))
			if hint == "" {
				hint = EvidenceHint(req.Key, s.ID, c, obs.LevelNeed)
			}
			if hint == evidenceHelp {
				// No command to give: the item's criteria, each with
				// what it lacks, are the next thing to read.
				hint = "awr work show " + shellwords.Quote(req.Key)
			}
		}
		if len(lacking) > 0 {
			return nil, fault.New(fault.EvidenceMissing, "%s: %s lacks passing evidence (level %s or stronger, at the current repository state) for %d of %d criteria: %s",
				op, req.Key, obs.LevelNeed, len(lacking), len(criteria), strings.Join(lacking, "; ")).
				With("work", req.Key).With("criteria", criteria).With("level", obs.LevelNeed).WithHint("%s", hint)
		}
		v := events.WorkVerified{Work: req.Key, SessionID: s.ID, Level: obs.LevelNeed, Repo: obs.Repo}
		for _, c := range criteria {
			v.Criteria = append(v.Criteria, events.VerifiedCriterion{Criterion: c.Criterion, EvidenceID: c.Evidence.EvidenceID, Level: c.Evidence.Level})
		}
		prev := tx.SetActor(s.Agent)
		defer tx.SetActor(prev)
		e, err := tx.Append(events.NewEvent{Stream: "evidence/" + req.Key, Payload: v})
		if err != nil {
			return nil, err
		}
		return &WorkCompleteResult{Verified: v, Seq: e.Seq, Criteria: criteria, ProjectRevision: tx.Head()}, nil
	})
}

// EvidenceHint is the command that would give criterion c of work item
// key the evidence it lacks: rerun its command when it had one (in session
// when given), a note when notes are enough (level), else the help of
// evidence add.
func EvidenceHint(key, session string, c CriterionStatus, level string) string {
	if ev := c.Evidence; ev != nil && ev.Basis == events.EvidenceCommand && ev.Command != "" {
		in := ""
		if session != "" {
			in = " --session " + session
		}
		return fmt.Sprintf("awr evidence add --work %s --criterion %d%s --command %s", key, c.Index, in, shellwords.Quote(ev.Command))
	}
	if level == events.LevelNote {
		return fmt.Sprintf("awr evidence add --work %s --criterion %d --note 'WHAT YOU CHECKED'", key, c.Index)
	}
	return evidenceHelp
}

// evidenceHelp is EvidenceHint when no command can give the evidence.
const evidenceHelp = "awr evidence add --help"
