package pathcheck

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
)

func TestOutput(t *testing.T) {
	tr := newTree(t, t.TempDir())
	for path, want := range map[string]Rule{
		".awr/awr.db":                       RuleState,
		".awr/new.md":                       RuleState,
		"state/awr.db":                      RuleState,
		"sub/state/project.toml":            RuleState,
		"sub/up/.awr/awr.db":                RuleState,
		"sub/../.awr/x":                     RuleState,
		"out/../p/.awr/awr.db":              RuleState,
		"db":                                RuleState, // a link to the log: where it leads counts
		"out/link-db":                       RuleState,
		"fifo":                              RuleNotRegular,
		"sub":                               RuleNotRegular,
		"notes.md":                          RuleExists,
		"report.md":                         "",
		"out/report.md":                     "",
		"sub/up/report.md":                  "",
		"dangling":                          RuleNotRegular,
		"nonexistent/../x.md":               "",
		"nonexistent/../.awr/x":             RuleState,
		"/dev/null":                         RuleNotRegular,
		"etc/../" + tr.root[1:] + "/new.md": "", // /etc/.. is /: the root's own path again
		"../p/.awr/project.toml":            RuleState,
		"../outside/secret.txt":             RuleExists,
		"../outside/new.jsonl":              "",
		"loop":                              RuleNotRegular,
		"loop/x":                            "", // the open fails later, with the kernel's ELOOP
		"out/../p/state/../x.md":            "",
		"state/../.awr/../n.md":             "", // .awr/.. is the root
		".awr/../report.md":                 "",
		"./sub/../sub/state/x.db":           RuleState,
	} {
		t.Run(path, func(t *testing.T) {
			err := Output(rawJoin(tr.root, path), false)
			require.Equal(t, want, RuleOf(err), "%v", err)
		})
	}
	t.Run("Force", func(t *testing.T) {
		require.NoError(t, Output(filepath.Join(tr.root, "notes.md"), true))
		require.Equal(t, RuleState, RuleOf(Output(filepath.Join(tr.root, ".awr/awr.db"), true)))
		require.Equal(t, RuleNotRegular, RuleOf(Output(filepath.Join(tr.root, "dangling"), true)))
	})
}

func TestAppend(t *testing.T) {
	tr := newTree(t, t.TempDir())
	for path, want := range map[string]Rule{
		".awr/awr.db":       RuleState,
		".awr/project.toml": RuleState,
		"state/anchors":     RuleState,
		"db":                RuleState,
		"dangling":          RuleNotRegular,
		"fifo":              RuleNotRegular,
		"hard":              RuleHardLink,
		"sub":               RuleNotRegular,
		"anchors":           "",
		"out/anchors":       "",
		"notes.md":          "",
	} {
		t.Run(path, func(t *testing.T) {
			f, err := Append(rawJoin(tr.root, path), 0o644, false)
			require.Equal(t, want, RuleOf(err), "%v", err)
			if err == nil {
				f.Close()
			}
		})
	}
	t.Run("StateFileOfAwr", func(t *testing.T) {
		f, err := Append(filepath.Join(tr.root, ".awr/hooks.log"), 0o600, true)
		require.NoError(t, err)
		f.Close()
		require.NoError(t, os.Remove(filepath.Join(tr.root, ".awr/hooks.log")))
		require.NoError(t, os.Symlink(filepath.Join(tr.outside, "secret.txt"), filepath.Join(tr.root, ".awr/hooks.log")))
		_, err = Append(filepath.Join(tr.root, ".awr/hooks.log"), 0o600, true)
		require.Equal(t, RuleNotRegular, RuleOf(err), "%v", err)
		b, err := os.ReadFile(filepath.Join(tr.outside, "secret.txt"))
		require.NoError(t, err)
		require.Equal(t, "x\n", string(b), "nothing appended through the link")
	})
}

func TestInside(t *testing.T) {
	tr := newTree(t, t.TempDir())
	for path, ok := range map[string]bool{
		"notes.md": true, "new/file": true, "sub/up/notes.md": true, ".awr/awr.db": true,
		"../x": false, "/etc/passwd": false, "out/secret.txt": false, "out/../p/notes.md": true,
		"sub/../../x": false, "etc/passwd": false, "sub/up/../x": false, tr.root + "/notes.md": true,
		"dangling": true, // nowhere/x under the root
	} {
		t.Run(path, func(t *testing.T) {
			_, err := Inside(tr.root, path)
			if ok {
				require.NoError(t, err)
			} else {
				require.Equal(t, RuleOutside, RuleOf(err), "%v", err)
			}
		})
	}
}

func TestWorkDir(t *testing.T) {
	dir := t.TempDir()
	tr := newTree(t, dir)
	for path, want := range map[string]Rule{
		"sub": "", ".": "", "": "", "/etc": RuleOutside, "etc": RuleOutside, "out": RuleOutside, "../outside": RuleOutside,
		"notes.md": RuleNotDir, "missing": RuleNotDir, "sub/up": "",
	} {
		t.Run(path, func(t *testing.T) {
			_, err := WorkDir(tr.root, path, true)
			require.Equal(t, want, RuleOf(err), "%v", err)
		})
	}
	t.Run("NotYetMade", func(t *testing.T) {
		_, err := WorkDir(tr.root, "later/sub", false)
		require.NoError(t, err)
		_, err = WorkDir(tr.root, "out/later", false)
		require.Equal(t, RuleOutside, RuleOf(err))
		_, err = WorkDir(tr.root, "notes.md", false)
		require.Equal(t, RuleNotDir, RuleOf(err))
	})
	t.Run("GitWorktree", func(t *testing.T) {
		// A repository at the root and a linked worktree of it beside,
		// laid out as git lays them out; another repository's worktree
		// is refused.
		gitDir := filepath.Join(tr.root, ".git")
		require.NoError(t, os.MkdirAll(filepath.Join(gitDir, "worktrees", "wt"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(gitDir, "worktrees", "wt", "commondir"), []byte("../..\n"), 0o644))
		wt := filepath.Join(dir, "wt")
		require.NoError(t, os.MkdirAll(filepath.Join(wt, "pkg"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+filepath.Join(gitDir, "worktrees", "wt")+"\n"), 0o644))
		got, err := WorkDir(tr.root, "../wt/pkg", true)
		require.NoError(t, err)
		require.Equal(t, filepath.Join(wt, "pkg"), got)

		other := filepath.Join(dir, "other")
		require.NoError(t, os.MkdirAll(filepath.Join(other, ".git"), 0o755))
		_, err = WorkDir(tr.root, other, true)
		require.Equal(t, RuleOutside, RuleOf(err))
		// A .git file may not make /etc a worktree by naming the project's
		// git directory: it must be the worktree's own; /etc has none.
		_, err = WorkDir(tr.root, "/etc", true)
		require.Equal(t, RuleOutside, RuleOf(err))
	})
}

func TestShown(t *testing.T) {
	tr := newTree(t, t.TempDir())
	require.Equal(t, "notes.md", Shown(tr.root, "notes.md", "FILE"))
	require.Equal(t, filepath.Join(tr.root, "sub/anchors"), Shown(tr.root, filepath.Join(tr.root, "sub/anchors"), "FILE"))
	for _, p := range []string{"/etc/passwd", "../x", "out/x", ".awr/awr.db", "state/x", "."} {
		require.Equal(t, "FILE", Shown(tr.root, p, "FILE"), p)
	}
}

func TestOpen(t *testing.T) {
	tr := newTree(t, t.TempDir())
	t.Run("FIFO", func(t *testing.T) {
		// No writer: a blocking open would wait forever.
		_, err := Open(filepath.Join(tr.root, "fifo"), 100)
		require.Equal(t, RuleNotRegular, RuleOf(err), "%v", err)
	})
	for _, p := range []string{"/dev/zero", "/dev/null", tr.root} {
		_, err := ReadFile(context.Background(), p, 100)
		require.Equal(t, RuleNotRegular, RuleOf(err), "%s: %v", p, err)
	}
	t.Run("TooLarge", func(t *testing.T) {
		p := filepath.Join(tr.root, "big")
		require.NoError(t, os.WriteFile(p, make([]byte, 101), 0o644))
		_, err := ReadFile(context.Background(), p, 100)
		require.Equal(t, RuleTooLarge, RuleOf(err))
		b, err := ReadFile(context.Background(), p, 101)
		require.NoError(t, err)
		require.Len(t, b, 101)
	})
	t.Run("Missing", func(t *testing.T) {
		_, err := Open(filepath.Join(tr.root, "missing"), 100)
		require.ErrorIs(t, err, os.ErrNotExist)
		fe := Fault("verify", "--anchors", err)
		require.Equal(t, fault.InvalidInput, fe.Code)
	})
}

func TestReader(t *testing.T) {
	t.Run("DevZero", func(t *testing.T) {
		f, err := os.Open("/dev/zero")
		require.NoError(t, err)
		defer f.Close()
		b, err := ReadAll(context.Background(), f, 1<<20, "/dev/zero")
		require.Equal(t, RuleTooLarge, RuleOf(err))
		require.Len(t, b, 1<<20)
	})
	t.Run("Cancelled", func(t *testing.T) {
		f, err := os.Open("/dev/zero")
		require.NoError(t, err)
		defer f.Close()
		ctx, cancel := context.WithCancel(context.Background())
		r := Reader(ctx, f, -1, "/dev/zero")
		_, err = io.ReadFull(r, make([]byte, 1<<20))
		require.NoError(t, err)
		cancel()
		_, err = io.ReadAll(r)
		require.ErrorIs(t, err, context.Canceled)
	})
	t.Run("Exact", func(t *testing.T) {
		b, err := ReadAll(context.Background(), strings.NewReader("abc"), 3, "x")
		require.NoError(t, err)
		require.Equal(t, "abc", string(b))
		_, err = ReadAll(context.Background(), strings.NewReader("abcd"), 3, "x")
		require.Equal(t, RuleTooLarge, RuleOf(err))
	})
}

func TestFault(t *testing.T) {
	err := Output("/x/.awr/awr.db", false)
	fe := Fault("export", "--output", err)
	require.Equal(t, fault.InvalidInput, fe.Code)
	require.Equal(t, "export: --output /x/.awr/awr.db: is inside .awr/, where only awr writes its own state; write the file elsewhere", fe.Message)
	require.Equal(t, string(RuleState), fe.Details["rule"])
	require.Equal(t, fault.Storage, Fault("x", "", errors.New("boom")).Code)
}

// TestOpen_FIFONeverBlocks: a FIFO swapped in after the look still never
// blocks the open (non-blocking) and is refused on the open file.
func TestOpen_FIFONeverBlocks(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, syscall.Mkfifo(p, 0o644))
	done := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			fi, _ := f.Stat()
			err = checkRead(p, fi, 10)
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		require.Equal(t, RuleNotRegular, RuleOf(err))
	case <-time.After(10 * time.Second):
		t.Fatal("the open of a FIFO blocked")
	}
}
