package project

import (
	"bufio"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/anchor"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/pathcheck"
	"github.com/awr-dev/awr/internal/shellwords"
	"github.com/awr-dev/awr/replay"
	"zombiezen.com/go/sqlite"
)

// The results of the log's own operations.
type (
	// RebuildResult is `awr replay`.
	RebuildResult = replay.RebuildResult
	// ExportResult is `awr export`.
	ExportResult = replay.ExportResult
)

// ImportResult is `awr import`: what was imported and, with --anchors, the
// anchor check the imported log passed.
type ImportResult struct {
	replay.ImportResult
	Anchors *AnchorCheck `json:"anchors,omitempty"`
}

// VerifyRequest is `awr verify` and awr_verify.
type VerifyRequest struct {
	Anchors     bool   `name:"anchors" json:"anchors,omitempty" help:"Also check every anchor of this project (awr anchor) against the chain: those in FILE, or without FILE every git note under refs/notes/awr of the project's repository."`
	AnchorsFile string `arg:"" optional:"" name:"file" type:"path" json:"anchors_file,omitempty" help:"The anchor file --anchors reads (without it, the git notes)." placeholder:"FILE"`
	ExpectHead  string `name:"expect-head" json:"expect_head,omitempty" help:"Also check that the head event's hash is HASH (64 hex digits, as awr status prints it)." placeholder:"HASH"`
}

// VerifyResult is `awr verify`: the log's own checks, and with the request's
// options the anchors and the expected head.
type VerifyResult struct {
	replay.VerifyResult
	// Anchors is the anchor check (--anchors).
	Anchors *AnchorCheck `json:"anchors,omitempty"`
	// ExpectHead is the head check (--expect-head).
	ExpectHead *HeadCheck `json:"expect_head,omitempty"`
	// Anchored counts the anchors of this project (and of the project it
	// was forked from, up to the fork) the chain was checked against and
	// that hold: 0 without --anchors. A chain checked against no anchor
	// proves only that it is self-consistent: a history rewritten and
	// re-hashed from its first changed event would pass as well.
	Anchored int `json:"anchored"`
	// Verdict is the one sentence that says what passed, and what a pass
	// proves (anchor.VerdictOf); empty when the verification failed.
	Verdict string `json:"verdict,omitempty"`
}

// Verify checks seq continuity, the hash chain, the domain's rules and the
// projection checksums; on a replica, that the origin's head it recorded
// is in the chain; with req.Anchors, every anchor of this project (see
// judgeAnchors: an anchor of the project whose seq the log holds must
// match, whatever the origin recorded beside it or a fork says); with
// req.ExpectHead, the head's hash. A failed check returns the result
// together with a VerifyFailed error; a broken anchor is the error even
// when the log's own checks failed too (details seq, anchored_hash,
// found_hash, where, anchor).
// Errors: also InvalidInput for FILE without --anchors, an anchor file
// that cannot be read, --anchors without FILE outside a git repository,
// and an --expect-head that is not a hash.
func (p *Project) Verify(ctx context.Context, req VerifyRequest) (*VerifyResult, error) {
	if req.AnchorsFile != "" && !req.Anchors {
		// The hint names the file only where it lies in the project.
		shown := "anchors.txt"
		if abs, err := pathcheck.Abs(p.dir, p.fromWorkingDir(req.AnchorsFile)); err == nil && p.shown(abs, "") != "" {
			shown = shellwords.Quote(req.AnchorsFile)
		}
		return nil, fault.New(fault.InvalidInput, "verify: %s names an anchor file, which needs --anchors", req.AnchorsFile).
			With("path", req.AnchorsFile).WithHint("awr verify --anchors %s", shown)
	}
	if req.ExpectHead != "" {
		if err := anchor.CheckHash("--expect-head", req.ExpectHead); err != nil {
			return nil, err
		}
	}
	st, err := p.EventLog(ctx)
	if err != nil {
		return nil, err
	}
	base, err := replay.Verify(ctx, st, p.progress("verifying"))
	if base == nil {
		return nil, err
	}
	res := &VerifyResult{VerifyResult: *base}
	if err != nil && !req.Anchors {
		return res, err
	}
	// A log that fails its own checks is still held to its anchors: a
	// forger's edit breaks a domain rule and, re-hashed, the anchors after
	// it, and the broken anchor is the refusal that names the rewrite.
	werr := p.verifyWitnesses(ctx, st, req, res)
	if err == nil && werr != nil && !fault.Is(werr, fault.VerifyFailed) {
		// The anchors could not be read (a FIFO, a directory, a file too
		// large): nothing was checked against them, and no report says
		// the log verified.
		return nil, werr
	}
	if err != nil && (res.Anchors == nil || res.Anchors.Broken == nil) {
		return res, err
	}
	if err == nil && werr == nil && res.OK {
		if res.Anchors != nil && res.Anchors.OK {
			res.Anchored = res.Anchors.Checked
		}
		res.Verdict = anchor.VerdictOf(res.Anchored)
	}
	return res, werr
}

// ReplayRequest is `awr replay`.
type ReplayRequest struct {
	Verify bool `name:"verify" json:"verify,omitempty" help:"Rebuild into a scratch copy and compare checksums with the live projections, changing nothing."`
}

// Replay drops and rebuilds every projection from the log, or with Verify
// compares a scratch rebuild with the live projections (a mismatch returns
// the result with a VerifyFailed error).
func (p *Project) Replay(ctx context.Context, req ReplayRequest) (*RebuildResult, error) {
	st, err := p.EventLog(ctx)
	if err != nil {
		return nil, err
	}
	progress := p.progress("replaying")
	if req.Verify {
		return replay.RebuildAndVerify(ctx, st, progress)
	}
	return replay.Rebuild(ctx, st, progress)
}

// ExportRequest is `awr export`.
type ExportRequest struct {
	Read
	Output string `name:"output" short:"o" type:"path" json:"output,omitempty" help:"Write to FILE instead of stdout (written to a temporary file, then renamed); FILE must not exist unless --force." placeholder:"FILE"`
	Force  bool   `name:"force" json:"force,omitempty" help:"Replace an existing regular FILE."`
}

// Export writes the log up to the request's revision as JSONL, one
// envelope per line: to req.Output (atomically: a temporary file, synced,
// then renamed) or, without one, to w.
// Errors: Storage when the file cannot be written; InvalidInput for an at
// revision beyond the head, for an output that exists (unless Force) and
// for one that is not a regular file (a device, a directory, a symbolic
// link: never replaced or written through) and for one in .awr/
// (pathcheck.Output).
func (p *Project) Export(ctx context.Context, req ExportRequest, w io.Writer) (*ExportResult, error) {
	st, err := p.EventLog(ctx)
	if err != nil {
		return nil, err
	}
	upTo := int64(-1)
	if req.At != nil {
		if upTo = *req.At; upTo < 0 {
			return nil, fault.New(fault.InvalidInput, "--at %d: a revision is 0 or more", upTo).With("at", upTo).WithHint("awr status")
		}
	}
	if req.Output == "" {
		bw := bufio.NewWriter(w)
		res, err := replay.ExportWith(ctx, st, bw, upTo, p.progress("exporting"))
		if err != nil {
			return nil, err
		}
		return res, bw.Flush()
	}
	if err := pathcheck.Output(req.Output, req.Force); err != nil {
		return nil, refused("export", "--output", err, p.outputHint(err, "awr export", req.Output, "NEW_FILE.jsonl"))
	}
	// The export keeps the mode it always had: 0600, the log is the
	// project's own.
	var res *ExportResult
	var exportErr error
	err = pathcheck.WriteWith(req.Output, 0o600, req.Force, func(w io.Writer) error {
		res, exportErr = replay.ExportWith(ctx, st, w, upTo, p.progress("exporting"))
		return exportErr
	})
	switch {
	case exportErr != nil:
		return nil, exportErr
	case pathcheck.RuleOf(err) != "":
		return nil, refused("export", "--output", err, p.outputHint(err, "awr export", req.Output, "NEW_FILE.jsonl"))
	case err != nil:
		return nil, fault.Wrap(fault.Storage, err, "export: write %s", req.Output)
	}
	res.Output = req.Output
	return res, nil
}

// ImportRequest is `awr import`.
type ImportRequest struct {
	File    string `arg:"" name:"file" type:"path" json:"file" help:"JSONL export to import ('-' for stdin)."`
	Anchors string `name:"anchors" json:"anchors,omitempty" help:"Check the export against anchors (awr anchor) before anything is imported: those of FILE, or with git the notes under refs/notes/awr of the repository holding --project. An anchor the export does not hold refuses the import." placeholder:"FILE|git"`
}

// Import imports a JSONL export into a project without events, verifying
// the chain and the domain's rules as it goes; stdin is read for File "-".
// A project directory that does not exist, in one that does, is created
// (and removed again if the import fails).
// It is atomic: into a new project, the log is built whole at a temporary
// path and only then linked to .awr/awr.db (intake.BuildLog), so an
// interrupted or failed import leaves no log behind (and removes a .awr
// directory it created); into a log with no event, it is one transaction.
// Errors: InvalidInput for an unreadable file, a project directory that
// is not one and cannot be made, or a log that does not verify (naming the line);
// InvalidTransition for a project that has events. With req.Anchors, the
// imported log is held to the anchors as verify --anchors holds a log
// (judgeAnchors) inside the import's transaction: a broken anchor is
// VerifyFailed naming its seq and line (also when the log breaks a domain
// rule too), and nothing is imported; so is an export with no anchor of
// its project.
func (p *Project) Import(ctx context.Context, req ImportRequest, stdin io.Reader) (_ *ImportResult, err error) {
	r, name, total, closeSource, err := p.importSource(req.File, stdin)
	if err != nil {
		return nil, err
	}
	defer closeSource()
	var progress func(done int64)
	if bar := p.progress("importing"); bar != nil && total > 0 {
		progress = func(done int64) { bar(done, max(done, total)) }
	}
	dir := p.dir
	fi, statErr := os.Stat(dir)
	if errors.Is(statErr, fs.ErrNotExist) && os.Mkdir(dir, 0o755) == nil {
		// A new directory (its parent exists), as the hints that name
		// NEW_DIR say: made here, and removed again unless the import
		// leaves a log in it.
		fi, statErr = os.Stat(dir)
		defer func() {
			if _, serr := os.Stat(events.DBPath(dir)); err != nil && serr != nil {
				os.RemoveAll(dir)
			}
		}()
	}
	if statErr != nil || !fi.IsDir() {
		return nil, fault.New(fault.InvalidInput, "import: --project %s is not a directory", dir).With("path", dir)
	}
	res := &ImportResult{}
	witness, err := p.importWitness(ctx, req.Anchors, name, res)
	if err != nil {
		return nil, err
	}
	unlock, err := pathcheck.LockDir(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	// Each line is bounded by replay's own cap; the read stops when the
	// command is interrupted.
	in := bufio.NewReaderSize(pathcheck.Reader(ctx, r, -1, name), 1<<16)
	if _, err := os.Stat(events.DBPath(dir)); err == nil {
		return p.importInPlace(ctx, req, in, name, witness, progress, res)
	}
	_, dirErr := os.Stat(filepath.Join(dir, ".awr"))
	newDir := os.IsNotExist(dirErr)
	if !newDir {
		intake.RemoveLeftovers(dir)
	}
	err = intake.BuildLog(ctx, dir, nil, func(st *events.Store) error {
		imp, err := replay.ImportWitnessed(ctx, st, in, name, p.opts.Now(), witness, progress)
		if err != nil {
			return err
		}
		res.ImportResult = *imp
		// Not linked in where another project's id is recorded: every
		// open would then refuse it.
		return intake.IdentityAgrees(ctx, dir, st, "import")
	})
	if err == nil {
		// Past the commit point: nothing is removed any more, and a
		// signal no longer stops what is left (recording the id).
		if rerr := recordImportedID(context.WithoutCancel(ctx), dir, p); rerr != nil {
			return res, fault.Wrap(fault.Storage, rerr, "import: the log was imported (%d events, project_revision %d), but its project id could not be recorded in %s", res.Events, res.ProjectRevision, intake.ProjectIDPath(dir)).
				WithHint("awr verify")
		}
		return res, nil
	}
	if err != nil {
		if newDir {
			os.RemoveAll(filepath.Join(dir, ".awr"))
		}
		if ctx.Err() != nil {
			return nil, intake.Interrupted("import", "awr import "+req.File)
		}
		return nil, err
	}
	return res, nil
}

// importSource opens what an import reads: the file (checked as a
// path the project may read) or stdin for "-" and "", its name, and the
// events a regular file holds (the seq of its last line: the total of
// the import's progress; stdin has none, and shows none).
func (p *Project) importSource(file string, stdin io.Reader) (io.Reader, string, int64, func(), error) {
	if file == "-" || file == "" {
		return stdin, "stdin", 0, func() {}, nil
	}
	path, err := p.namedPath("import", "", file, "awr export --project SOURCE_DIR --output FILE")
	if err != nil {
		return nil, "", 0, nil, err
	}
	f, err := pathcheck.Open(path, -1)
	if err != nil {
		if pathcheck.RuleOf(err) != "" {
			return nil, "", 0, nil, refused("import", "", err, "awr export --project SOURCE_DIR --output FILE")
		}
		return nil, "", 0, nil, fault.New(fault.InvalidInput, "import: cannot read %s: %v", file, errors.Unwrap(err)).With("path", file).WithHint("awr export --project SOURCE_DIR --output FILE")
	}
	var total int64
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		total, _ = replay.LastSeq(f, fi.Size())
	}
	return f, file, total, func() { f.Close() }, nil
}

// importWitness is the check of the imported log against the anchors of
// anchorsArg (nil without): it records their judgement in res.
func (p *Project) importWitness(ctx context.Context, anchorsArg, name string, res *ImportResult) (replay.Witness, error) {
	if anchorsArg == "" {
		return nil, nil
	}
	source, anchors, malformed, err := p.loadAnchors(ctx, "import", anchorsArg)
	if err != nil {
		return nil, err
	}
	return func(conn *sqlite.Conn, head int64) error {
		ac, err := anchor.Judge(conn, head, source, anchors, malformed)
		if err != nil {
			return err
		}
		res.Anchors = ac
		if e := ac.Failure("import", p.anchorSourceArg(anchorsArg)); e != nil {
			return e.With("path", name)
		}
		return nil
	}, nil
}

// importInPlace imports into the project's log, which exists and must
// hold no event (an older awr left it empty), in one transaction; the
// identity is checked, and recorded where none is.
func (p *Project) importInPlace(ctx context.Context, req ImportRequest, in io.Reader, name string, witness replay.Witness, progress func(int64), res *ImportResult) (*ImportResult, error) {
	dir := p.dir
	st, _, err := p.open(ctx, true)
	if err != nil {
		return nil, err
	}
	var head int64
	if err := st.Read(ctx, func(r *events.Reader) error {
		head = r.Head
		return nil
	}); err != nil {
		return nil, err
	}
	if head > 0 {
		// Refused before the store would refuse a replica's write.
		return nil, fault.New(fault.InvalidTransition, "import: project already has %d events; import needs an empty project", head).
			With("project_revision", head).WithHint("awr import FILE --project EMPTY_DIR")
	}
	// What an interrupted init staged must not become this project's.
	intake.RemoveLeftovers(dir)
	imp, err := replay.ImportWitnessed(ctx, st, in, name, p.opts.Now(), witness, progress)
	if err != nil && ctx.Err() != nil {
		return nil, intake.Interrupted("import", "awr import "+req.File)
	}
	if err != nil {
		return nil, err
	}
	res.ImportResult = *imp
	// Imported in place (into a log an older awr left empty): the
	// identity is checked, and recorded where none is.
	bg := context.WithoutCancel(ctx)
	if err := intake.IdentityAgrees(bg, dir, st, "import"); err != nil {
		return res, err
	}
	if intake.RecordedProjectID(dir) == "" {
		if err := recordImportedID(bg, dir, p); err != nil {
			return res, err
		}
	}
	return res, nil
}

// recordImportedID records the project id of the log an import linked in
// (see intake.RecordProjectID).
func recordImportedID(ctx context.Context, dir string, p *Project) error {
	st, err := p.EventLog(ctx)
	if err != nil {
		return err
	}
	id, _, err := intake.ProjectOf(ctx, st)
	if err != nil {
		return err
	}
	return intake.RecordProjectID(dir, id)
}
