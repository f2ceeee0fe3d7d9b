package project_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/project"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// TestInit_RerunFinishesAnInterruptedInit: an init killed after it wrote
// the manifest and the log's schema but before its first event leaves a
// project that a rerun of `init --accept` finishes (issue #13, row 1:
// before, the rerun said "already initialized (project_revision 0)" and
// nothing could recover the project).
func TestInit_RerunFinishesAnInterruptedInit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	todo := []byte("# TODO\n\n- [ ] W-1: Work\n")
	// The manifest a complete init writes for a project named proj.
	done := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(done, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(done, "TODO.md"), todo, 0o644))
	p, err := project.Open(ctx, done, project.Options{})
	require.NoError(t, err)
	_, err = p.Init(ctx, project.InitRequest{Accept: true})
	require.NoError(t, err)
	p.Close()
	manifest := mustReadFile(t, intake.ManifestPath(done))

	// The interrupted one: the same files, the manifest, a log with its
	// schema and no event.
	dir := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".awr"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"), todo, 0o644))
	require.NoError(t, os.WriteFile(intake.ManifestPath(dir), manifest, 0o644))
	st, err := events.Open(ctx, events.DBPath(dir), events.Options{Create: true, Projectors: projections.Projectors()})
	require.NoError(t, err)
	require.NoError(t, st.Close())

	p, err = project.Open(ctx, dir, project.Options{})
	require.NoError(t, err)
	defer p.Close()
	res, err := p.Init(ctx, project.InitRequest{Accept: true})
	require.NoError(t, err)
	require.Equal(t, "initialized", res.Status)
	require.Positive(t, res.ProjectRevision)
	require.NotEmpty(t, res.ProjectID)
	ready, err := p.Ready(ctx, project.ReadyRequest{})
	require.NoError(t, err)
	require.Len(t, ready.Ready, 1)
	again, err := p.Init(ctx, project.InitRequest{Accept: true})
	require.NoError(t, err)
	require.Equal(t, "unchanged", again.Status, "a complete project is left as it is")
}

// initialized makes a project named proj from todo with a complete init
// and returns its directory.
func initialized(t *testing.T, todo []byte) string {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"), todo, 0o644))
	p := opened(t, dir, project.Options{})
	_, err := p.Init(ctx, project.InitRequest{Accept: true})
	require.NoError(t, err)
	return dir
}

// entries lists the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, de := range des {
		out = append(out, de.Name())
	}
	return out
}

// TestInit_LeftoversAreNotAProject: what an init or import interrupted
// before its commit point leaves in .awr/ (a log being built, the files
// staged for publication) never makes the directory a project; the next
// init removes it and takes nothing from it.
func TestInit_LeftoversAreNotAProject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "proj")
	staged := filepath.Join(dir, ".awr", "init-pending", ".awr", "project.toml")
	require.NoError(t, os.MkdirAll(filepath.Dir(staged), 0o700))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".awr", "init-pending.tmp-1"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"), []byte("# TODO\n\n- [ ] W-1: Work\n"), 0o644))
	require.NoError(t, os.WriteFile(staged, []byte("version = 1\nname = \"stale\"\n"), 0o644))
	tmp, err := events.Open(ctx, filepath.Join(dir, ".awr", ".awr.db.tmp-X"), events.Options{Create: true, Projectors: projections.Projectors()})
	require.NoError(t, err)
	require.NoError(t, tmp.Close())

	p := opened(t, dir, project.Options{})
	_, err = p.Status(ctx, project.StatusRequest{})
	require.True(t, fault.Is(err, fault.NotFound), "%v", err)
	res, err := p.Init(ctx, project.InitRequest{Accept: true})
	require.NoError(t, err)
	require.Equal(t, "initialized", res.Status)
	require.Equal(t, "proj", res.Name, "nothing is taken from the staged manifest")
	require.Subset(t, []string{"awr.db", "awr.db-shm", "awr.db-wal", "project-id", "project.toml"}, entries(t, filepath.Join(dir, ".awr")), "the leftovers are gone")
	m, ok, err := intake.ReadManifest(dir)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "proj", m.Name)
}

// TestInit_CommittedButUnpublished: an init killed after its log was
// linked into place but before its staged manifest was published leaves a
// whole project: the next open of the log publishes the manifest.
func TestInit_CommittedButUnpublished(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := initialized(t, []byte("# TODO\n\n- [ ] W-1: Work\n"))
	staged := filepath.Join(dir, ".awr", "init-pending", ".awr", "project.toml")
	require.NoError(t, os.MkdirAll(filepath.Dir(staged), 0o700))
	require.NoError(t, os.Rename(intake.ManifestPath(dir), staged))

	p := opened(t, dir, project.Options{})
	st, err := p.Status(ctx, project.StatusRequest{})
	require.NoError(t, err)
	require.EqualValues(t, 2, st.ProjectRevision)
	_, ok, err := intake.ReadManifest(dir)
	require.NoError(t, err)
	require.True(t, ok, "the staged manifest is published")
	require.NoDirExists(t, filepath.Join(dir, ".awr", "init-pending"))
	_, err = p.SourceReindex(ctx, project.SourceReindexRequest{})
	require.NoError(t, err)
}

// TestInit_LogWithoutEventsIsNotAProject: a log with the schema and no
// event (what an older awr left when interrupted, or one made by hand) is
// reported as an interrupted init by status, verify and source reindex,
// with the command that finishes it, instead of a healthy empty project;
// the preview of init says it will finish it.
func TestInit_LogWithoutEventsIsNotAProject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"), []byte("# TODO\n\n- [ ] W-1: Work\n"), 0o644))
	st, err := events.Open(ctx, events.DBPath(dir), events.Options{Create: true, Projectors: projections.Projectors()})
	require.NoError(t, err)
	require.NoError(t, st.Close())

	p := opened(t, dir, project.Options{})
	for name, op := range map[string]func() error{
		"status":         func() error { _, err := p.Status(ctx, project.StatusRequest{}); return err },
		"verify":         func() error { _, err := p.Verify(ctx, project.VerifyRequest{}); return err },
		"source reindex": func() error { _, err := p.SourceReindex(ctx, project.SourceReindexRequest{}); return err },
	} {
		err := op()
		require.True(t, fault.Is(err, fault.NotFound), "%s: %v", name, err)
		require.Contains(t, err.Error(), "interrupted", name)
		require.Equal(t, "awr init --accept", fault.As(err).Hint, name)
	}
	preview, err := p.Init(ctx, project.InitRequest{})
	require.NoError(t, err)
	require.Equal(t, "preview", preview.Status)
	require.Contains(t, preview.Writes, intake.Write{Path: ".awr/awr.db", Action: "finish: the log an interrupted init left has no event; add project_initialized and 1 source_indexed"})
	res, err := p.Init(ctx, project.InitRequest{Accept: true})
	require.NoError(t, err)
	require.Equal(t, "initialized", res.Status)
	_, err = p.Verify(ctx, project.VerifyRequest{})
	require.NoError(t, err)
}

// TestInit_CancelledBeforeTheCommitLeavesNothing: an init cancelled
// (Ctrl-C, SIGTERM) while it builds the log stops there and leaves the
// directory as it was.
func TestInit_CancelledBeforeTheCommitLeavesNothing(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"), []byte("# TODO\n\n- [ ] W-1: Work\n"), 0o644))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The clock is read inside the initializing transaction: cancel there.
	p := opened(t, dir, project.Options{Now: func() time.Time { cancel(); return time.Now() }})
	_, err := p.Init(ctx, project.InitRequest{Accept: true})
	require.Error(t, err)
	require.Contains(t, err.Error(), "interrupted before it committed")
	require.Equal(t, []string{"TODO.md"}, entries(t, dir), "nothing is left")

	p2, err := project.Open(context.Background(), dir, project.Options{})
	require.NoError(t, err)
	defer p2.Close()
	res, err := p2.Init(context.Background(), project.InitRequest{Accept: true})
	require.NoError(t, err)
	require.Equal(t, "initialized", res.Status)
}

// cancelAfter cancels its context once n bytes have been read through it.
type cancelAfter struct {
	r      io.Reader
	n      int
	cancel func()
}

func (c *cancelAfter) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	if c.n -= n; c.n <= 0 {
		c.cancel()
	}
	return n, err
}

// TestImport_Atomic: an import into a new project cancelled midway leaves
// no log behind (before, a log with the schema and no event, which status
// and verify called a healthy project); one into a directory an
// interrupted init left staged files in does not adopt them.
func TestImport_Atomic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := initialized(t, []byte("# TODO\n\n- [ ] W-1: Work\n- [ ] W-2: More\n"))
	p, err := project.Open(ctx, src, project.Options{})
	require.NoError(t, err)
	var export bytes.Buffer
	_, err = p.Export(ctx, project.ExportRequest{}, &export)
	require.NoError(t, err)
	p.Close()

	t.Run("Cancelled", func(t *testing.T) {
		dir := t.TempDir()
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		q, err := project.Open(cctx, dir, project.Options{})
		require.NoError(t, err)
		defer q.Close()
		_, err = q.Import(cctx, project.ImportRequest{File: "-"}, &cancelAfter{r: bytes.NewReader(export.Bytes()), n: 10, cancel: cancel})
		require.Error(t, err)
		require.Empty(t, entries(t, dir), "nothing is left")
		res, err := q.Import(ctx, project.ImportRequest{File: "-"}, bytes.NewReader(export.Bytes()))
		require.NoError(t, err)
		require.EqualValues(t, 2, res.ProjectRevision)
	})
	t.Run("IgnoresAnInterruptedInit", func(t *testing.T) {
		dir := t.TempDir()
		staged := filepath.Join(dir, ".awr", "init-pending", ".awr", "project.toml")
		require.NoError(t, os.MkdirAll(filepath.Dir(staged), 0o700))
		require.NoError(t, os.WriteFile(staged, []byte("version = 1\nname = \"stale\"\n"), 0o644))
		q := opened(t, dir, project.Options{})
		_, err = q.Import(ctx, project.ImportRequest{File: "-"}, bytes.NewReader(export.Bytes()))
		require.NoError(t, err)
		st, err := q.Status(ctx, project.StatusRequest{})
		require.NoError(t, err)
		require.EqualValues(t, 2, st.ProjectRevision)
		require.NoFileExists(t, intake.ManifestPath(dir), "the staged manifest is not this project's")
		require.NoDirExists(t, filepath.Join(dir, ".awr", "init-pending"))
	})
}

// TestIdentity_ForeignDatabaseIsRefused: another project's database put
// in .awr/ is noticed at open, and an export of another project is not
// imported where a project id is recorded (issue #13, row 15).
func TestIdentity_ForeignDatabaseIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mine := initialized(t, []byte("# TODO\n\n- [ ] W-1: Mine\n"))
	theirs := initialized(t, []byte("# TODO\n\n- [ ] W-1: Theirs\n"))
	require.NotEmpty(t, intake.RecordedProjectID(mine))

	var export bytes.Buffer
	p, err := project.Open(ctx, theirs, project.Options{})
	require.NoError(t, err)
	_, err = p.Export(ctx, project.ExportRequest{}, &export)
	require.NoError(t, err)
	p.Close()

	t.Run("ErrSwappedDatabase", func(t *testing.T) {
		dir := t.TempDir()
		copyTree(t, mine, dir)
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(events.DBPath(dir) + suffix)
		}
		b := mustReadFile(t, events.DBPath(theirs))
		require.NoError(t, os.WriteFile(events.DBPath(dir), b, 0o600))
		p := opened(t, dir, project.Options{})
		_, err = p.Status(ctx, project.StatusRequest{})
		fe := fault.As(err)
		require.Equal(t, fault.Storage, fe.Code, "%v", err)
		require.Contains(t, fe.Message, "the database is another project's")
		require.Equal(t, intake.RecordedProjectID(mine), fe.Details["recorded_project_id"])
		require.Equal(t, intake.RecordedProjectID(theirs), fe.Details["project_id"])
	})
	t.Run("ErrImportOfAnotherProject", func(t *testing.T) {
		dir := t.TempDir()
		copyTree(t, mine, dir)
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(events.DBPath(dir) + suffix)
		}
		p := opened(t, dir, project.Options{})
		_, err = p.Import(ctx, project.ImportRequest{File: "-"}, bytes.NewReader(export.Bytes()))
		require.True(t, fault.Is(err, fault.Storage), "%v", err)
		_, statErr := os.Stat(events.DBPath(dir))
		require.True(t, os.IsNotExist(statErr), "nothing linked in")
	})
	t.Run("OK_ImportOfItsOwnExport", func(t *testing.T) {
		dir := t.TempDir()
		var own bytes.Buffer
		p, err := project.Open(ctx, mine, project.Options{})
		require.NoError(t, err)
		_, err = p.Export(ctx, project.ExportRequest{}, &own)
		require.NoError(t, err)
		p.Close()
		q := opened(t, dir, project.Options{})
		_, err = q.Import(ctx, project.ImportRequest{File: "-"}, bytes.NewReader(own.Bytes()))
		require.NoError(t, err)
		require.Equal(t, intake.RecordedProjectID(mine), intake.RecordedProjectID(dir), "an import records its project")
	})
}

// copyTree copies the regular files below src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, filepath.Walk(src, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o600)
	}))
}
