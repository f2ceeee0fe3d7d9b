package project

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/anchor"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/pathcheck"
	"github.com/awr-dev/awr/internal/shellwords"
	"github.com/awr-dev/awr/replay"
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

// VerifyResult is `awr verify`: the log's own checks, and with the
// request's options the anchors and the expected head.
type VerifyResult = anchor.VerifyResult

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
	w := anchor.Witnesses{Anchors: req.Anchors, ExpectHead: req.ExpectHead}
	return anchor.VerifyLog(ctx, st, w, func(w *anchor.Witnesses) (err error) {
		if w.Source, w.List, w.Malformed, err = p.loadAnchors(ctx, "verify", req.AnchorsFile); err != nil {
			return err
		}
		w.SourceArg = p.anchorSourceArg(req.AnchorsFile)
		return nil
	}, p.progress("verifying"))
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
	cleanup, err := intake.ImportDir(dir)
	if err != nil {
		return nil, err
	}
	defer func() { cleanup(err) }()
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
	im := &intake.Import{Dir: dir, In: bufio.NewReaderSize(pathcheck.Reader(ctx, r, -1, name), 1<<16), Name: name, File: req.File,
		Now: p.opts.Now(), Witness: witness, Progress: progress, LogOf: p.EventLog}
	var imp *replay.ImportResult
	if _, serr := os.Stat(events.DBPath(dir)); serr == nil {
		st, _, oerr := p.open(ctx, true)
		if oerr != nil {
			return nil, oerr
		}
		imp, err = im.InPlace(ctx, st)
	} else {
		imp, err = im.IntoNew(ctx)
	}
	if imp == nil {
		return nil, err
	}
	res.ImportResult = *imp
	return res, err
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
	w := anchor.Witnesses{Source: source, List: anchors, Malformed: malformed, SourceArg: p.anchorSourceArg(anchorsArg)}
	return w.OnImport(name, &res.Anchors), nil
}
