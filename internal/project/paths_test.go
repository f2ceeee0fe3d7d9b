package project_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/pathcheck"
	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

// refusedBy asserts err is InvalidInput for rule, naming path in its
// message, with a hint that is an awr command naming no path outside
// dir (the project).
func refusedBy(t *testing.T, err error, rule pathcheck.Rule, path, dir string) *fault.Error {
	t.Helper()
	require.Error(t, err)
	fe := fault.As(err)
	require.Equal(t, fault.InvalidInput, fe.Code, "%v", err)
	require.Equal(t, string(rule), fe.Details["rule"], "%v", err)
	require.Contains(t, fe.Message, path)
	require.True(t, strings.HasPrefix(fe.Hint, "awr "), "hint %q", fe.Hint)
	hintNamesNoOutsidePath(t, fe.Hint, dir)
	return fe
}

// hintNamesNoOutsidePath: every absolute path in hint lies in dir.
func hintNamesNoOutsidePath(t *testing.T, hint, dir string) {
	t.Helper()
	for _, w := range strings.Fields(hint) {
		if filepath.IsAbs(w) {
			require.True(t, w == dir || strings.HasPrefix(w, dir+"/"), "hint %q names %s, outside the project", hint, w)
		}
	}
}

// unchanged returns a check that the files keep the bytes they have now.
func unchanged(t *testing.T, paths ...string) func() {
	t.Helper()
	before := map[string][]byte{}
	for _, p := range paths {
		b := mustReadFile(t, p)
		before[p] = b
	}
	return func() {
		t.Helper()
		for p, b := range before {
			now := mustReadFile(t, p)
			require.True(t, bytes.Equal(b, now), "%s changed", p)
		}
	}
}

// intact asserts the project still verifies.
func intact(t *testing.T, p *project.Project) {
	t.Helper()
	res, err := p.Verify(context.Background(), project.VerifyRequest{})
	require.NoError(t, err)
	require.True(t, res.OK)
}

// TestPaths_OutputsNeverInState: audit and export never write into .awr
// (named directly, through "..", or through a link), with or without
// --force, and replace an existing file only with --force.
func TestPaths_OutputsNeverInState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, p := checkoutProject(t, project.Options{})
	db, manifest := events.DBPath(dir), intake.ManifestPath(dir)
	same := unchanged(t, db, manifest)
	require.NoError(t, os.Symlink(".awr", filepath.Join(dir, "state")))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	for _, out := range []string{db, manifest, filepath.Join(dir, ".awr", "report.md"), filepath.Join(dir, "state", "awr.db"), dir + "/sub/../.awr/awr.db"} {
		for _, force := range []bool{false, true} {
			_, err := p.Audit(ctx, project.AuditRequest{Work: "CART-1", Output: out, Force: force})
			refusedBy(t, err, pathcheck.RuleState, out, dir)
			_, err = p.Export(ctx, project.ExportRequest{Output: out, Force: force}, nil)
			refusedBy(t, err, pathcheck.RuleState, out, dir)
		}
	}
	same()
	intact(t, p)

	report := filepath.Join(dir, "report.md")
	res, err := p.Audit(ctx, project.AuditRequest{Work: "CART-1", Output: report})
	require.NoError(t, err)
	require.Equal(t, report, res.Output)
	_, err = p.Audit(ctx, project.AuditRequest{Work: "CART-1", Output: report})
	fe := refusedBy(t, err, pathcheck.RuleExists, report, dir)
	require.Equal(t, "awr audit --work CART-1 --output "+report+" --force", fe.Hint)
	_, err = p.Audit(ctx, project.AuditRequest{Work: "CART-1", Output: report, Force: true})
	require.NoError(t, err)
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".awr-audit-*"))
	require.Empty(t, leftovers)

	// An existing file outside the project: refused, and the hint does
	// not name it.
	elsewhere := filepath.Join(t.TempDir(), "log.jsonl")
	require.NoError(t, os.WriteFile(elsewhere, []byte("keep\n"), 0o644))
	_, err = p.Export(ctx, project.ExportRequest{Output: elsewhere}, nil)
	fe = refusedBy(t, err, pathcheck.RuleExists, elsewhere, dir)
	require.Equal(t, "awr export --output NEW_FILE.jsonl", fe.Hint)
	_, err = p.Export(ctx, project.ExportRequest{Output: elsewhere, Force: true}, nil)
	require.NoError(t, err)
}

// TestPaths_AnchorAppendsInItsLane: anchor --to never appends to awr's
// own files (the log, the manifest), never through a symbolic link, and
// never to a FIFO, a device or a file with another name; over MCP (a
// Confined project) never outside the project. verify --anchors of a
// file outside the project hints no command naming it.
func TestPaths_AnchorAppendsInItsLane(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, p := checkoutProject(t, project.Options{})
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim.txt")
	require.NoError(t, os.WriteFile(victim, []byte("keep\n"), 0o644))
	db, manifest := events.DBPath(dir), intake.ManifestPath(dir)
	same := unchanged(t, db, manifest, victim)
	require.NoError(t, os.Symlink(victim, filepath.Join(dir, "link.txt")))
	require.NoError(t, os.Link(victim, filepath.Join(dir, "hard.txt")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	for to, rule := range map[string]pathcheck.Rule{
		".awr/awr.db": pathcheck.RuleState, ".awr/project.toml": pathcheck.RuleState,
		"link.txt": pathcheck.RuleNotRegular, "hard.txt": pathcheck.RuleHardLink, "fifo": pathcheck.RuleNotRegular,
		"/dev/null": pathcheck.RuleNotRegular,
	} {
		_, err := p.Anchor(ctx, project.AnchorRequest{To: to})
		refusedBy(t, err, rule, filepath.Base(to), dir)
	}
	same()
	intact(t, p)
	_, err := p.Anchor(ctx, project.AnchorRequest{To: "anchors.txt"})
	require.NoError(t, err)
	_, err = p.Verify(ctx, project.VerifyRequest{Anchors: true, AnchorsFile: "anchors.txt"})
	require.NoError(t, err)

	// Over MCP: nothing outside the project, whatever the spelling.
	mcp := opened(t, dir, project.Options{Confined: true})
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "out")))
	for _, to := range []string{"../x", victim, "out/new.txt", filepath.Join(outside, "new.txt")} {
		_, err := mcp.Anchor(ctx, project.AnchorRequest{To: to})
		refusedBy(t, err, pathcheck.RuleOutside, to, dir)
	}
	_, err = os.Stat(filepath.Join(outside, "new.txt"))
	require.ErrorIs(t, err, os.ErrNotExist)
	same()
	_, err = mcp.Verify(ctx, project.VerifyRequest{Anchors: true, AnchorsFile: "/etc/passwd"})
	refusedBy(t, err, pathcheck.RuleOutside, "/etc/passwd", dir)
	_, err = mcp.Anchor(ctx, project.AnchorRequest{To: "anchors.txt"})
	require.NoError(t, err)

	// The CLI may read a file outside; its hint never names it.
	_, err = p.Verify(ctx, project.VerifyRequest{Anchors: true, AnchorsFile: "/etc/passwd"})
	fe := fault.As(err)
	require.Equal(t, fault.VerifyFailed, fe.Code, "%v", err)
	require.NotContains(t, fe.Hint, "/etc/passwd")
	require.True(t, strings.HasPrefix(fe.Hint, "awr anchor --to "), fe.Hint)
	_, err = p.Verify(ctx, project.VerifyRequest{Anchors: true, AnchorsFile: filepath.Join(outside, "missing")})
	require.Equal(t, fault.InvalidInput, fault.CodeOf(err))
	require.NotContains(t, fault.As(err).Hint, outside)
}

// TestPaths_WorkingDirectories: --cwd and --workdir resolve, links
// followed, in the project (or a git worktree of it); /etc and a link to
// it are refused; a rig spec's cwd too, naming the spec's line.
func TestPaths_WorkingDirectories(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, p := checkoutProject(t, project.Options{})
	require.NoError(t, os.Symlink("/etc", filepath.Join(dir, "etc")))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "svc"), 0o755))
	for _, cwd := range []string{"/etc", "etc", "../", "svc/../.."} {
		_, err := p.SeatAdd(ctx, project.SeatAddRequest{Address: "build@portal", Runtime: "generic", Command: "true", Cwd: cwd})
		fe := refusedBy(t, err, pathcheck.RuleOutside, cwd, dir)
		require.Equal(t, "awr seat add build@portal --runtime generic --cwd .", fe.Hint)
		_, err = p.SessionStart(ctx, project.SessionStartRequest{Work: "CART-1", Agent: "a", Workdir: cwd})
		fe = refusedBy(t, err, pathcheck.RuleOutside, cwd, dir)
		require.Equal(t, "awr session start --work CART-1 --agent a --workdir .", fe.Hint)
	}
	_, err := p.SeatAdd(ctx, project.SeatAddRequest{Address: "build@portal", Runtime: "generic", Command: "true", Cwd: "svc/later"})
	require.NoError(t, err, "a seat's directory may be made before its rig comes up")
	_, err = p.SessionStart(ctx, project.SessionStartRequest{Work: "CART-1", Agent: "a", Workdir: "svc"})
	require.NoError(t, err)

	spec := filepath.Join(dir, "rig.yaml")
	require.NoError(t, os.WriteFile(spec, []byte("rig: portal\nseats:\n  - role: build\n    runtime: generic\n    command: \"true\"\n    cwd: /etc\n"), 0o644))
	_, err = p.RigApply(ctx, project.RigApplyRequest{File: spec})
	fe := fault.As(err)
	require.Equal(t, fault.InvalidInput, fe.Code, "%v", err)
	require.Equal(t, string(pathcheck.RuleOutside), fe.Details["rule"])
	require.Contains(t, fe.Message, spec+":3: cwd /etc")
	intact(t, p)
}

// TestPaths_HooksLogNeverFollowsALink: .awr/hooks.log replaced by a link
// to a file elsewhere gets no line, and the file keeps its bytes.
func TestPaths_HooksLogNeverFollowsALink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, _ := checkoutProject(t, project.Options{})
	victim := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep\n"), 0o644))
	same := unchanged(t, victim)
	log := filepath.Join(dir, ".awr", "hooks.log")
	require.NoError(t, os.Symlink(victim, log))
	res := project.AnswerHook(ctx, dir, project.HookRequest{Client: "claude"}, strings.NewReader("{"), project.Options{})
	require.Len(t, res.Log, 1, "the malformed payload was to be logged")
	same()
	fi, err := os.Lstat(log)
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&os.ModeSymlink)

	// A regular hooks.log gets the line.
	require.NoError(t, os.Remove(log))
	project.AnswerHook(ctx, dir, project.HookRequest{Client: "claude"}, strings.NewReader("{"), project.Options{})
	b := mustReadFile(t, log)
	require.Equal(t, 1, bytes.Count(b, []byte("\n")))
}

// TestPaths_SourceAndEvidence: a source in .awr is refused; evidence of a
// file outside the project is refused with a hint that is a whole
// command.
func TestPaths_SourceAndEvidence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, p := checkoutProject(t, project.Options{})
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".awr", "x.md"), []byte("- [ ] a task\n"), 0o644))
	_, err := p.SourceAdd(ctx, project.SourceAddRequest{Path: ".awr/x.md"})
	fe := fault.As(err)
	require.Equal(t, fault.InvalidInput, fe.Code, "%v", err)
	require.Equal(t, string(pathcheck.RuleState), fe.Details["rule"])

	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(dir, "passwd")))
	for _, file := range []string{"/etc/passwd", "passwd", "../x"} {
		_, err = p.EvidenceAdd(ctx, project.EvidenceAddRequest{Work: "CART-1", Criterion: "1", File: file})
		fe = refusedBy(t, err, pathcheck.RuleOutside, file, dir)
		require.Equal(t, "awr evidence add --work CART-1 --criterion 1 --file FILE", fe.Hint)
	}
	intact(t, p)
}

// withinTime runs f and fails the test if it has not returned after a
// long grace: the reads below must never block (a FIFO without a writer
// would block an open forever).
func withinTime(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s blocked", what)
	}
}

// TestReads_Bounded: every file a request names is read only when it is
// a regular file (never /dev/zero, a FIFO or a directory, which would
// grow or block forever) under its kind's cap: the restatement (1 MiB),
// the import, the anchors file, the rig spec, and the project's own
// .awr/project-id.
func TestReads_Bounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, p := checkoutProject(t, project.Options{})
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	start, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "CART-1", Agent: "a", Claim: true})
	require.NoError(t, err)
	for _, special := range []string{"/dev/zero", fifo, dir} {
		withinTime(t, special, func() {
			_, err := p.RecoveryVerify(ctx, project.RecoveryVerifyRequest{Session: start.Session.ID, Input: special}, nil)
			refusedBy(t, err, pathcheck.RuleNotRegular, special, dir)
			_, err = p.Verify(ctx, project.VerifyRequest{Anchors: true, AnchorsFile: special})
			refusedBy(t, err, pathcheck.RuleNotRegular, special, dir)
			_, err = p.RigApply(ctx, project.RigApplyRequest{File: special})
			refusedBy(t, err, pathcheck.RuleNotRegular, special, dir)
			empty := opened(t, t.TempDir(), project.Options{})
			_, err = empty.Import(ctx, project.ImportRequest{File: special}, nil)
			refusedBy(t, err, pathcheck.RuleNotRegular, special, dir)
		})
	}
	// The restatement's documented cap, from a file and from stdin.
	big := filepath.Join(dir, "big.json")
	require.NoError(t, os.WriteFile(big, bytes.Repeat([]byte(" "), 1<<20+1), 0o644))
	_, err = p.RecoveryVerify(ctx, project.RecoveryVerifyRequest{Session: start.Session.ID, Input: big}, nil)
	refusedBy(t, err, pathcheck.RuleTooLarge, big, dir)
	zero, err := os.Open("/dev/zero")
	require.NoError(t, err)
	defer zero.Close()
	_, err = p.RecoveryVerify(ctx, project.RecoveryVerifyRequest{Session: start.Session.ID, Input: "-"}, zero)
	refusedBy(t, err, pathcheck.RuleTooLarge, "stdin", dir)

	// .awr/project-id replaced by a FIFO: opening the project does not
	// block on it.
	id := intake.ProjectIDPath(dir)
	require.NoError(t, os.Remove(id))
	require.NoError(t, syscall.Mkfifo(id, 0o644))
	withinTime(t, "a FIFO as .awr/project-id", func() {
		q := opened(t, dir, project.Options{})
		_, _ = q.Status(ctx, project.StatusRequest{})
	})
	intact(t, p)
}
