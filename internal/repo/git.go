package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
)

// gitBinary is the git executable the exported functions run; tests build
// their own runner instead of changing it.
const gitBinary = "git"

// runner runs one git executable. The zero value is not usable; use
// defaultRunner or a runner naming another binary.
type runner struct {
	bin string
}

var defaultRunner = runner{bin: gitBinary}

// repoLocationEnv are the variables that would point git at a repository
// other than the one containing the directory given.
var repoLocationEnv = []string{
	"GIT_DIR",
	"GIT_WORK_TREE",
	"GIT_INDEX_FILE",
	"GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES",
	"GIT_COMMON_DIR",
	"GIT_NAMESPACE",
	"GIT_PREFIX",
}

// gitEnv is the environment every git process runs with.
func gitEnv() []string {
	env := os.Environ()
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		drop := name == "GIT_OPTIONAL_LOCKS" || name == "LC_ALL" || name == "GIT_TERMINAL_PROMPT"
		for _, v := range repoLocationEnv {
			if name == v {
				drop = true
			}
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return append(out, "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C", "GIT_TERMINAL_PROMPT=0")
}

// safeConfig overrides, on git's command line (which wins over every
// config file), the settings of a repository's own config that would make
// git run a program of the repository's choosing while awr only reads it:
// core.fsmonitor runs on every status. (Filter drivers, which a
// repository names in its own files, are blanked by filtersOff.) awr
// reads a repository on an agent's word (a checkpoint over MCP), and no
// input may make awr run a command.
var safeConfig = []string{"-c", "core.fsmonitor=false"}

// SafeConfig returns the git options every git awr runs must pass
// (safeConfig), for the packages that start git themselves.
func SafeConfig() []string { return append([]string(nil), safeConfig...) }

// gitError is a git process that ran and exited non-zero.
type gitError struct {
	args   []string
	code   int
	stderr string
}

func (e *gitError) Error() string {
	msg := fmt.Sprintf("git %s: exit status %d", e.args[0], e.code)
	if e.stderr != "" {
		msg += ": " + e.stderr
	}
	return msg
}

// run runs git in dir with args and returns its standard output. A git that
// cannot be started is ErrNoGit; a non-zero exit is a *gitError carrying the
// trimmed standard error; a cancelled context is the context's error.
func (r runner) run(ctx context.Context, dir string, stdin io.Reader, args ...string) ([]byte, error) {
	full := append([]string{"-C", dir}, safeConfig...)
	if len(args) > 0 && readsWorktree[args[0]] {
		off, err := r.filtersOff(ctx, dir)
		if err != nil {
			return nil, err
		}
		full = append(full, off...)
	}
	full = append(append(full, "-c", "core.quotepath=off"), args...)
	return r.exec(ctx, stdin, full, args)
}

// readsWorktree are the git commands awr runs that read files of the
// worktree, where git would run a filter driver the repository's
// .gitattributes and config name (a clean filter, to compare or hash a
// changed file).
var readsWorktree = map[string]bool{"status": true, "hash-object": true}

// filtersOff returns the options that blank every filter driver the
// repository's config defines (filter.NAME.clean, .smudge, .process): git
// then reads the files as they are. Reading the config runs nothing.
func (r runner) filtersOff(ctx context.Context, dir string) ([]string, error) {
	full := append(append([]string{"-C", dir}, safeConfig...), "config", "--null", "--get-regexp", `^filter\..*\.(clean|smudge|process)$`)
	out, err := r.exec(ctx, nil, full, []string{"config"})
	var ge *gitError
	if errors.As(err, &ge) && ge.code == 1 {
		return nil, nil // no filter defined
	}
	if err != nil {
		return nil, err
	}
	var off []string
	for _, entry := range strings.Split(string(out), "\x00") {
		key, _, _ := strings.Cut(entry, "\n")
		if key == "" {
			continue
		}
		name := strings.TrimPrefix(key[:strings.LastIndexByte(key, '.')], "filter.")
		off = append(off, "-c", "filter."+name+".clean=", "-c", "filter."+name+".smudge=", "-c", "filter."+name+".process=", "-c", "filter."+name+".required=false")
	}
	return off, nil
}

// exec runs git with the full command line; args (the command's own
// arguments) name it in errors.
func (r runner) exec(ctx context.Context, stdin io.Reader, full, args []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, r.bin, full...)
	cmd.Env = gitEnv()
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil {
		return stdout.Bytes(), nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, ctxErr
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return stdout.Bytes(), &gitError{args: args, code: exitErr.ExitCode(), stderr: strings.TrimSpace(stderr.String())}
	}
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return nil, fmt.Errorf("%w: %s", ErrNoGit, err)
	}
	return nil, err
}

// exitCode reports the exit code of a *gitError, or -1 for any other error.
func exitCode(err error) int {
	var ge *gitError
	if errors.As(err, &ge) {
		return ge.code
	}
	return -1
}

// unverifiable turns err into an *Unverifiable prefixed with op, keeping an
// existing *Unverifiable's cause.
func unverifiable(op string, err error) *Unverifiable {
	var u *Unverifiable
	if errors.As(err, &u) {
		return u
	}
	var cause error
	switch {
	case errors.Is(err, ErrNoGit):
		cause = ErrNoGit
	case errors.Is(err, ErrNotRepo):
		cause = ErrNotRepo
	case errors.Is(err, context.Canceled):
		cause = context.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		cause = context.DeadlineExceeded
	}
	return &Unverifiable{Reason: op + ": " + err.Error(), Err: cause}
}

// splitNUL splits NUL-terminated records, dropping the empty tail.
func splitNUL(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\x00")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")
}

// isHexID reports whether s is a full object id (sha1 or sha256).
func isHexID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
