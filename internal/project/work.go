package project

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/cursor"
	"github.com/awr-dev/awr/internal/exec"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/pathcheck"
	"github.com/awr-dev/awr/internal/repo"
	"github.com/awr-dev/awr/internal/shellwords"
	"github.com/awr-dev/awr/internal/workview"
	"github.com/awr-dev/awr/projections"
)

// The work-item requests whose decisions live in commands, and their
// results.
type (
	// WorkClaimRequest is `awr work claim` and awr_work_claim.
	WorkClaimRequest = commands.WorkClaimRequest
	// WorkReleaseRequest is `awr work release` and awr_work_release.
	WorkReleaseRequest = commands.WorkReleaseRequest
	// WorkHandoffRequest is `awr work handoff` and awr_work_handoff.
	WorkHandoffRequest = commands.WorkHandoffRequest
	// WorkHandoffResult is both ends of a handoff.
	WorkHandoffResult = commands.WorkHandoffResult
	// EvidenceAddRequest is `awr evidence add` and awr_evidence_add.
	EvidenceAddRequest = commands.EvidenceAddRequest
	// EvidenceAddResult is the evidence recorded.
	EvidenceAddResult = commands.EvidenceAddResult
	// WorkCompleteRequest is `awr work complete` and awr_work_complete.
	WorkCompleteRequest = commands.WorkCompleteRequest
	// WorkCompleteResult is the verification recorded.
	WorkCompleteResult = commands.WorkCompleteResult
	// CriterionStatus is one acceptance criterion as completion judges it.
	CriterionStatus = commands.CriterionStatus
	// Completion is whether a work item is done by its evidence.
	Completion = commands.Completion
)

// WorkClaim claims a work item for a session working on it.
// Errors: those of commands.ClaimWork.
func (p *Project) WorkClaim(ctx context.Context, req WorkClaimRequest) (*ClaimResult, error) {
	return claimFresh(ctx, p, commands.ClaimWork, &req, &req.Stale)
}

// WorkRelease releases a work item's claim by its holder.
// Errors: those of commands.ReleaseWork.
func (p *Project) WorkRelease(ctx context.Context, req WorkReleaseRequest) (*ClaimResult, error) {
	return command(ctx, p, commands.ReleaseWork, req)
}

// WorkHandoff moves a work item's live claim to another live session.
// Errors: those of commands.HandoffWork.
func (p *Project) WorkHandoff(ctx context.Context, req WorkHandoffRequest) (*WorkHandoffResult, error) {
	return command(ctx, p, commands.HandoffWork, req)
}

// WorkShowRequest is `awr work show` and awr_work_show.
type WorkShowRequest struct {
	Key string `arg:"" name:"key" json:"key" help:"Work item key." placeholder:"KEY"`
	// KnowledgeCursor, EvidenceCursor, Limit and All select the pages of
	// the item's knowledge in force (open loops, decisions, facts,
	// hypotheses) and of its evidence.
	KnowledgeCursor string `name:"knowledge-cursor" json:"knowledge_cursor,omitempty" help:"List the items in force (open loops, decisions, facts, hypotheses) after this place: the knowledge_next_cursor of the page before." placeholder:"CURSOR"`
	EvidenceCursor  string `name:"evidence-cursor" json:"evidence_cursor,omitempty" help:"List the evidence recorded before that of the page before: its evidence_next_cursor." placeholder:"CURSOR"`
	Limit           *int   `name:"limit" json:"limit,omitempty" help:"At most N items in force and N pieces of evidence (1 to 200; default 50, or all with --all)." placeholder:"N"`
	All             bool   `name:"all" json:"all,omitempty" help:"Every item in force and every piece of evidence (no page)."`
	Read
}

// The answer of `awr work show` (package workview).
type (
	// WorkShowResult is `awr work show`.
	WorkShowResult = workview.Result
	// WorkProvenance is where a work item comes from.
	WorkProvenance = workview.Provenance
	// EvidenceView is one piece of evidence with the seq that recorded it.
	EvidenceView = workview.EvidenceView
)

// WorkShow returns a work item with everything awr knows about it, as of
// the request's revision. At the head its evidence is judged against the
// repository now; at a past revision the repository is not compared
// (repo_compared false). Its knowledge in force is one page (Limit,
// else commands.DefaultPage; every item with All) from the
// KnowledgeCursor on, with knowledge_total and knowledge_next_cursor;
// its evidence the latest page before the EvidenceCursor, oldest first,
// with evidence_total and evidence_next_cursor (the completion is judged
// on every piece).
// Errors: InvalidInput for a bad revision, a limit outside 1 to
// commands.MaxLimit, or a --knowledge-cursor or --evidence-cursor awr
// did not give (or beyond the revision read); NotFound for an unknown
// item.
func (p *Project) WorkShow(ctx context.Context, req WorkShowRequest) (*WorkShowResult, error) {
	first := "awr work show " + shellwords.Quote(req.Key) + atHint(req.Read)
	pg, err := knowledgePage("work show", req.Limit, req.All, req.KnowledgeCursor, first)
	if err != nil {
		return nil, err
	}
	before, err := cursor.DecodeSeq("work show", "--evidence-cursor", req.EvidenceCursor, first)
	if err != nil {
		return nil, err
	}
	var res *WorkShowResult
	var dir string
	var files []string
	err = p.read(ctx, req.Read, func(r *events.Reader, rev, now int64) error {
		var err error
		if before > rev+1 {
			return fault.New(fault.InvalidInput, "work show: --evidence-cursor starts after the revision read (%d): pass the evidence_next_cursor of a page read at it", rev).
				With("flag", "--evidence-cursor").WithHint("%s", first)
		}
		if res, err = workview.At(r.Conn, req.Key, rev, now, !req.Past(), workview.Page{KnowledgeAfter: pg.after, EvidenceBefore: before, Limit: pg.limit}); err != nil {
			return err
		}
		if res.SessionsTotal > len(res.Sessions) {
			res.SessionsNextCursor = cursor.EncodeID(res.Sessions[0].ID)
		}
		dir = p.dir
		if res.Current != "" {
			if s := res.CurrentSession(); s != nil {
				if start, err := projections.SessionStartOf(r.Conn, s); err == nil && start != nil {
					dir = filepath.Join(p.dir, filepath.FromSlash(start.Workdir))
				}
			}
		}
		files = res.EvidenceFiles()
		return nil
	})
	if err != nil {
		return nil, err
	}
	var obs commands.Observed
	if !req.Past() {
		obs = p.observe(ctx, dir, files)
	}
	env, err := p.Env(ctx)
	if err != nil {
		return nil, err
	}
	obs.LevelNeed = env.Policy.EvidenceLevel
	if obs.LevelNeed == "" {
		obs.LevelNeed = commands.DefaultEvidenceLevel
	}
	res.Judge(obs)
	return res, nil
}

// observe reads what evidence is judged against at the head: the
// repository of dir (the project's .awr left out) and the content hash of
// each evidence file.
func (p *Project) observe(ctx context.Context, dir string, files []string) commands.Observed {
	obs := commands.Observed{Compare: true, FileHash: map[string]string{}}
	obs.Repo = p.repoNow(ctx, dir)
	for _, f := range files {
		if h, _, err := hashFile(ctx, filepath.Join(p.dir, filepath.FromSlash(f))); err == nil {
			obs.FileHash[f] = h
		}
	}
	return obs
}

// repoNow is dir's repository as evidence records it, nil outside a git
// work tree.
func (p *Project) repoNow(ctx context.Context, dir string) *events.SeatRepo {
	st, _, err := repo.CaptureWithout(ctx, dir, filepath.Join(p.dir, ".awr"))
	if err != nil {
		return nil
	}
	return &events.SeatRepo{Head: st.Head, Dirty: st.Dirty, DirtyFingerprint: st.DirtyFingerprint}
}

// WorkHistoryRequest is `awr work history` and awr_work_history.
type WorkHistoryRequest struct {
	Key   string   `arg:"" name:"key" json:"key" help:"Work item key." placeholder:"KEY"`
	Since int64    `name:"since" json:"since,omitempty" help:"Only events after seq SEQ (the next_since of the page before)." placeholder:"SEQ"`
	Limit *int     `name:"limit" json:"limit,omitempty" help:"At most N events (1 to 10000; default 100)." placeholder:"N"`
	Kind  []string `name:"kind" json:"kind,omitempty" help:"Only events of this kind (repeatable)." placeholder:"KIND"`
	Read
}

// WorkHistoryResult is one page of a work item's history, oldest first;
// Count is how many events the page holds, NextSince the --since of the
// next page (0 when this page is the last).
type WorkHistoryResult struct {
	Work            string     `json:"work"`
	Events          []LogEvent `json:"events"`
	Count           int        `json:"count"`
	NextSince       int64      `json:"next_since,omitempty"`
	ProjectRevision int64      `json:"project_revision"`
}

// DefaultHistoryLimit is the page size of `awr work history`.
const DefaultHistoryLimit = 100

// WorkHistory returns every event that concerns a work item (its claims,
// its sessions' events, bindings, evidence, and the source_indexed events
// that changed it), oldest first, a page at a time.
// Errors: InvalidInput for a bad limit, kind or revision; NotFound for an
// item the log never knew.
func (p *Project) WorkHistory(ctx context.Context, req WorkHistoryRequest) (*WorkHistoryResult, error) {
	limit := DefaultHistoryLimit
	if req.Limit != nil {
		if *req.Limit < 1 || *req.Limit > 10000 {
			return nil, fault.New(fault.InvalidInput, "work history: --limit %d is not between 1 and 10000", *req.Limit).With("flag", "--limit").
				WithHint("awr work history %s --limit %d", req.Key, DefaultHistoryLimit)
		}
		limit = *req.Limit
	}
	res := &WorkHistoryResult{Work: req.Key}
	var err error
	res.ProjectRevision, res.Events, res.NextSince, err = logPage(limit, func(start func(int64) error, each func(LogEvent) error) error {
		return p.scanWorkHistory(ctx, req, limit, start, each)
	})
	if err != nil {
		return nil, err
	}
	res.Count = len(res.Events)
	return res, nil
}

// WorkHistoryEach calls start with the revision read, then each with
// every event of the item's history, oldest first, one at a time: the
// whole history (`awr work history --all`) in bounded memory. req.Limit
// is ignored.
// Errors: those of WorkHistory, and those start or each return.
func (p *Project) WorkHistoryEach(ctx context.Context, req WorkHistoryRequest, start func(rev int64) error, each func(LogEvent) error) error {
	return p.scanWorkHistory(ctx, req, -1, start, each)
}

// scanWorkHistory checks the request's kinds and revision and scans the
// item's history, at most limit+1 events (-1: all), in one read; each
// may stop it early with errStop.
func (p *Project) scanWorkHistory(ctx context.Context, req WorkHistoryRequest, limit int, start func(rev int64) error, each func(LogEvent) error) error {
	if err := commands.RevisionOf("work history", "--since", req.Since); err != nil {
		return err
	}
	for _, k := range req.Kind {
		if !events.Known(events.Kind(k)) {
			return fault.New(fault.InvalidInput, "work history: --kind %q is not an event kind", k).With("kinds", events.Kinds()).
				WithHint("awr work history %s --kind %s", req.Key, events.KindCheckpointRecorded)
		}
	}
	fetch := limit + 1
	if limit < 0 {
		fetch = -1
	}
	err := p.read(ctx, req.Read, func(r *events.Reader, rev, _ int64) error {
		if err := commands.KnownWork(r.Conn, "work history", req.Key, rev); err != nil {
			return err
		}
		if err := start(rev); err != nil {
			return err
		}
		return projections.ScanWorkHistory(r.Conn, req.Key, req.Since, rev, req.Kind, fetch, eachEvent(each))
	})
	return scanned(err)
}

// EvidenceAdd records evidence against an acceptance criterion. For a
// command without --exit-code, awr runs it (sh -c, in the session's
// working directory or the project's) and records its exit code,
// duration, the sha256 and size of its output (stdout and stderr
// together) and the repository before it ran (and after, when the command
// changed it); a file is recorded by content hash. The criterion is
// checked before anything runs. A project opened OnAgentsWord (the MCP
// server) never runs the command: it records the exit code the caller
// reports (level reported) and refuses a command without one.
// Errors: those of commands.RecordEvidence; InvalidInput for a file
// outside the project or missing, and for a command without an exit code
// OnAgentsWord.
func (p *Project) EvidenceAdd(ctx context.Context, req EvidenceAddRequest) (*EvidenceAddResult, error) {
	if err := commands.CheckEvidence(req); err != nil {
		return nil, err
	}
	hasCommand := strings.TrimSpace(req.Command) != ""
	if p.opts.OnAgentsWord && hasCommand && req.ExitCode == nil {
		return nil, fault.New(fault.InvalidInput, "evidence add: exit_code is required with command: awr runs no command on an agent's word; run it yourself and report its exit code (recorded as level reported)").
			With("field", "exit_code").
			WithHint("awr evidence add --work %s --criterion %s --command %s", shellwords.Quote(req.Work), shellwords.Quote(req.Criterion), shellwords.Quote(req.Command))
	}
	err := p.read(ctx, Read{}, func(r *events.Reader, rev, _ int64) error {
		it, err := commands.WorkItemNow(r.Conn, "evidence add", req.Work, rev)
		if err != nil {
			return err
		}
		if _, _, err := commands.ResolveCriterion("evidence add", it, req.Criterion); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	dir, err := p.sessionWorkdir(ctx, req.SessionID)
	if err != nil {
		return nil, err
	}
	ran := &events.EvidenceRecorded{Repo: p.repoNow(ctx, dir)}
	var tail []string
	switch {
	case hasCommand && req.ExitCode == nil:
		ran.Basis, ran.Level, ran.Command = events.EvidenceCommand, events.LevelObserved, req.Command
		out := exec.RunEvidence(ctx, dir, req.Command)
		ran.ExitCode, ran.DurationMs, ran.OutputHash, ran.OutputSize, ran.Passed = &out.ExitCode, out.DurationMs, out.Hash, out.Size, out.ExitCode == 0
		tail = out.Tail
		if after := p.repoNow(ctx, dir); !sameSeatRepo(after, ran.Repo) {
			ran.RepoAfter = after
		}
	case hasCommand:
		ran.Basis, ran.Level, ran.Command, ran.ExitCode, ran.Passed = events.EvidenceCommand, events.LevelReported, req.Command, req.ExitCode, *req.ExitCode == 0
	case req.File != "":
		rel, abs, err := p.projectFile(req.File, fmt.Sprintf("awr evidence add --work %s --criterion %s --file FILE", shellwords.Quote(req.Work), shellwords.Quote(req.Criterion)))
		if err != nil {
			return nil, err
		}
		h, _, err := hashFile(ctx, abs)
		if err != nil {
			return nil, fault.New(fault.InvalidInput, "evidence add: --file %s: %v", req.File, err).With("flag", "--file")
		}
		ran.Basis, ran.Level, ran.Path, ran.FileHash, ran.Passed = events.EvidenceFile, events.LevelReported, rel, h, true
	default:
		ran.Basis, ran.Level, ran.Note, ran.Passed = events.EvidenceNote, events.LevelNote, req.Note, true
	}
	req.Ran = ran
	res, err := command(ctx, p, commands.RecordEvidence, req)
	if err != nil {
		return nil, err
	}
	res.OutputTail = tail
	return res, nil
}

// projectFile resolves path (relative to the working directory awr runs
// in) to a file of the project: its slash-separated path from the project
// root and its absolute path. Errors: InvalidInput, with hint, outside
// the project (symbolic links followed: pathcheck.Inside).
func (p *Project) projectFile(path, hint string) (rel, abs string, err error) {
	abs, err = pathcheck.Abs(p.dir, p.fromWorkingDir(path))
	if err == nil {
		abs, err = pathcheck.Inside(p.dir, abs)
	}
	if err != nil {
		return "", "", refused("evidence add", "--file", err, hint)
	}
	r, err := filepath.Rel(p.dir, abs)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", "", fault.New(fault.InvalidInput, "evidence add: --file %s is outside the project %s", path, p.dir).With("flag", "--file").
			WithHint("%s", hint)
	}
	return filepath.ToSlash(r), abs, nil
}

// maxEvidenceFile bounds the file an evidence records by content hash.
const maxEvidenceFile = 1 << 30

// hashFile returns the sha256 ("sha256:HEX") and size of a regular file of
// at most maxEvidenceFile bytes (pathcheck.Open: never a FIFO or a
// device), reading until ctx is done.
func hashFile(ctx context.Context, path string) (string, int64, error) {
	f, err := pathcheck.Open(path, maxEvidenceFile)
	if err != nil {
		var pe *pathcheck.Error
		if errors.As(err, &pe) {
			return "", 0, errors.New(pe.Why)
		}
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, pathcheck.Reader(ctx, f, maxEvidenceFile, path))
	if err != nil {
		return "", 0, err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), n, nil
}

func sameSeatRepo(a, b *events.SeatRepo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// WorkComplete records a work item's completion when every acceptance
// criterion has passing evidence at the repository state now.
// Errors: those of commands.CompleteWork.
func (p *Project) WorkComplete(ctx context.Context, req WorkCompleteRequest) (*WorkCompleteResult, error) {
	dir, err := p.sessionWorkdir(ctx, req.SessionID)
	if err != nil {
		return nil, err
	}
	var files []string
	if err := p.read(ctx, Read{}, func(r *events.Reader, rev, _ int64) error {
		evidence, _, err := commands.EvidenceOf(r.Conn, req.Key, rev)
		for _, e := range evidence {
			if e.Basis == events.EvidenceFile {
				files = append(files, e.Path)
			}
		}
		return err
	}); err != nil {
		return nil, err
	}
	obs := p.observe(ctx, dir, files)
	req.Observed = &obs
	return command(ctx, p, commands.CompleteWork, req)
}
