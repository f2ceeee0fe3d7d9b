package pathcheck

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/awr-dev/awr/internal/fault"
)

// StateDir is the name of the directory where a project keeps awr's own
// state (its log, manifest, locks and logs). No path a person or an agent
// names is written there.
const StateDir = ".awr"

// Rule names the rule a path broke; rules are stable (they are the
// details' "rule" of the errors the front ends show).
type Rule string

// The rules a path can break.
const (
	// RuleState: the path resolves into a .awr directory.
	RuleState Rule = "inside_awr_state"
	// RuleExists: an output exists and --force was not given.
	RuleExists Rule = "exists"
	// RuleNotRegular: not a regular file (a FIFO, a device, a directory,
	// a socket, or a symbolic link where none is followed).
	RuleNotRegular Rule = "not_regular"
	// RuleHardLink: a file awr appends to has another hard link.
	RuleHardLink Rule = "hard_link"
	// RuleOutside: the path resolves outside the project.
	RuleOutside Rule = "outside_project"
	// RuleNotDir: a working directory that is not a directory.
	RuleNotDir Rule = "not_directory"
	// RuleTooLarge: a file or stream beyond its kind's cap.
	RuleTooLarge Rule = "too_large"
)

// Error is a path refused by a rule.
type Error struct {
	Path string
	Rule Rule
	// Why says what the rule means for this path, in words.
	Why string
}

// Error returns the path and why it was refused.
func (e *Error) Error() string { return e.Path + ": " + e.Why }

func refuse(path string, rule Rule, format string, args ...any) *Error {
	return &Error{Path: path, Rule: rule, Why: fmt.Sprintf(format, args...)}
}

// RuleOf returns the rule err broke, or "" when err is not an *Error.
func RuleOf(err error) Rule {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Rule
	}
	return ""
}

// Fault returns err as the error a front end shows, its message prefixed
// with op and flag ("export: --output .awr/awr.db: ..."): InvalidInput
// with the details flag, path and rule for a refused path or a file that
// cannot be opened; Storage for any other failure. The caller adds the
// hint.
func Fault(op, flag string, err error) *fault.Error {
	prefix := op + ": "
	if flag != "" {
		prefix += flag + " "
	}
	var fe *fault.Error
	var pe *Error
	var pathErr *fs.PathError
	switch {
	case errors.As(err, &pe):
		fe = fault.New(fault.InvalidInput, "%s%s", prefix, pe.Error()).With("path", pe.Path).With("rule", string(pe.Rule))
	case errors.As(err, &pathErr):
		fe = fault.New(fault.InvalidInput, "%s%s: %v", prefix, pathErr.Path, pathErr.Err).With("path", pathErr.Path)
	default:
		return fault.Wrap(fault.Storage, err, "%s", strings.TrimSuffix(prefix, " "))
	}
	if flag != "" {
		fe.With("flag", flag)
	}
	return fe
}

// Abs returns path made absolute against base (the working directory when
// base is ""), without cleaning it: "link/.." stays for Resolve to follow
// as the kernel would.
func Abs(base, path string) (string, error) {
	if filepath.IsAbs(path) {
		return path, nil
	}
	if base == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		base = wd
	}
	return base + string(filepath.Separator) + path, nil
}

// Resolve returns the absolute, clean path that path (relative to the
// working directory) designates: every symbolic link of its longest
// existing prefix followed, ".." applied after the links before it, and
// the part that does not exist yet appended as written (cleaned), and
// resolved again when cleaning its ".." lands on what exists. Its
// result for a path that exists is filepath.EvalSymlinks'.
func Resolve(path string) (string, error) {
	real, _, err := resolve(path)
	return real, err
}

// resolve is Resolve, with where the path's longest existing prefix
// resolves to ("" when no prefix but the root exists): the last place
// the kernel reaches before the missing part, which a path such as
// "../missing/../p" passes through (creating its missing part there)
// although it ends back in p.
func resolve(path string) (real, reached string, err error) {
	abs, err := Abs("", path)
	if err != nil {
		return "", "", err
	}
	parts := strings.Split(abs, string(filepath.Separator))
	for i := len(parts); i > 1; i-- {
		prefix := strings.Join(parts[:i], string(filepath.Separator))
		got, err := filepath.EvalSymlinks(prefix)
		if err != nil {
			continue
		}
		joined := filepath.Clean(strings.Join(append([]string{got}, parts[i:]...), string(filepath.Separator)))
		if slices.Contains(parts[i:], "..") {
			// "missing/../link": cleaning the missing part away may
			// land on a link that exists; follow it too (joined is
			// clean, so this recurses once).
			real, _, err := resolve(joined)
			return real, got, err
		}
		return joined, got, nil
	}
	if slices.Contains(parts, "..") {
		real, _, err := resolve(filepath.Clean(abs))
		return real, "", err
	}
	return filepath.Clean(abs), "", nil
}

// InState reports whether path (absolute) has a .awr component, as
// written or once resolved: it is, or is under, a project's state
// directory.
func InState(path string) bool {
	if hasStateComponent(filepath.Clean(path)) {
		return true
	}
	real, err := Resolve(path)
	return err == nil && hasStateComponent(real)
}

func hasStateComponent(clean string) bool {
	for _, c := range strings.Split(clean, string(filepath.Separator)) {
		if c == StateDir {
			return true
		}
	}
	return false
}

// within reports whether path (absolute, clean) is root or under it.
func within(root, path string) bool {
	if path == root {
		return true
	}
	if root == string(filepath.Separator) {
		return true
	}
	return strings.HasPrefix(path, root+string(filepath.Separator))
}

// passesWithin reports whether reached (where a path's longest existing
// prefix resolves to, "" for none) is in realRoot.
func passesWithin(realRoot, reached string) bool {
	return reached == "" || within(realRoot, reached)
}

// Inside checks that path (relative to root when not absolute) resolves
// inside root, symbolic links followed, and returns where it resolves to,
// spelled under root.
// Errors: *Error RuleOutside.
func Inside(root, path string) (string, error) {
	abs, err := Abs(root, path)
	if err != nil {
		return "", err
	}
	realRoot, err := Resolve(root)
	if err != nil {
		return "", err
	}
	real, reached, err := resolve(abs)
	if err != nil {
		return "", err
	}
	if !within(realRoot, real) || !passesWithin(realRoot, reached) {
		return "", refuse(path, RuleOutside, "is outside the project %s", root)
	}
	return underRoot(root, realRoot, real), nil
}

// underRoot returns real (resolved, inside realRoot, the resolved root)
// as a path under root as the caller spelled it.
func underRoot(root, realRoot, real string) string {
	rel, err := filepath.Rel(realRoot, real)
	if err != nil {
		return real
	}
	return filepath.Join(root, rel)
}

// Output checks path (absolute, or relative to the working directory) as
// a file awr is about to create or to replace whole (by renaming a
// temporary file over it): not in a .awr directory, and either missing or
// a regular file (never a symbolic link, a device or a directory, which
// would be replaced or written through), replaced only with force.
// Errors: *Error RuleState, RuleNotRegular or RuleExists.
func Output(path string, force bool) error {
	abs, err := Abs("", path)
	if err != nil {
		return err
	}
	if InState(abs) {
		return refuse(path, RuleState, "is inside %s/, where only awr writes its own state; write the file elsewhere", StateDir)
	}
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return refuse(path, RuleNotRegular, "is not a regular file (%s); awr writes only regular files", typeName(fi.Mode()))
	case !force:
		return refuse(path, RuleExists, "exists; awr replaces a file only with --force")
	}
	return nil
}

// Append opens path (absolute, or relative to the working directory) for
// appending, creating it with perm when missing, without following a
// symbolic link as its last component. The file must be regular (a FIFO
// is never waited on: it is opened non-blocking) and have no other hard
// link, so an append can reach no other file. Unless state is true (awr
// names one of its own files), a path in a .awr directory is refused.
// Errors: *Error RuleState, RuleNotRegular or RuleHardLink; the
// *fs.PathError of the open.
func Append(path string, perm os.FileMode, state bool) (*os.File, error) {
	abs, err := Abs("", path)
	if err != nil {
		return nil, err
	}
	if !state && InState(abs) {
		return nil, refuse(path, RuleState, "is inside %s/, where only awr writes its own state; name a file elsewhere", StateDir)
	}
	f, err := os.OpenFile(abs, os.O_APPEND|os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, perm)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, refuse(path, RuleNotRegular, "is a symbolic link; awr never appends through one")
		}
		if fi, lerr := os.Lstat(abs); lerr == nil && !fi.Mode().IsRegular() {
			return nil, refuse(path, RuleNotRegular, "is not a regular file (%s); awr appends only to regular files", typeName(fi.Mode()))
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, refuse(path, RuleNotRegular, "is not a regular file (%s); awr appends only to regular files", typeName(fi.Mode()))
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		f.Close()
		return nil, refuse(path, RuleHardLink, "has %d hard links; awr appends only to a file with one name", st.Nlink)
	}
	return f, nil
}

// WorkDir checks a working directory (--cwd, --workdir), relative to
// root when not absolute: once symbolic links are followed it must lie
// inside root, or inside a git worktree of the repository that holds root
// (the same common git directory; found by reading .git files, without
// running git), and be a directory (or, unless exist, not be there yet:
// a seat's directory may be made before its rig comes up). It returns
// where the directory resolves to (spelled under root when inside it).
// Errors: *Error RuleOutside or RuleNotDir.
func WorkDir(root, path string, exist bool) (string, error) {
	abs, err := Abs(root, path)
	if err != nil {
		return "", err
	}
	real, reached, err := resolve(abs)
	if err != nil {
		return "", err
	}
	realRoot, err := Resolve(root)
	if err != nil {
		return "", err
	}
	if !within(realRoot, real) || !passesWithin(realRoot, reached) {
		common := commonGitDir(realRoot)
		if common == "" || commonGitDir(real) != common || (reached != "" && commonGitDir(reached) != common) {
			return "", refuse(path, RuleOutside, "is outside the project %s and its git worktrees", root)
		}
	} else {
		real = underRoot(root, realRoot, real)
	}
	fi, err := os.Stat(real)
	if !exist && errors.Is(err, fs.ErrNotExist) {
		return real, nil
	}
	if err != nil || !fi.IsDir() {
		return "", refuse(path, RuleNotDir, "is not a directory")
	}
	return real, nil
}

// gitFileCap bounds a .git file and a commondir file.
const gitFileCap = 4096

// commonGitDir returns the resolved common git directory of the
// repository holding dir (absolute, resolved), "" when there is none: a
// .git directory is its own; a .git file (a linked worktree) names its
// git directory, whose commondir file names the common one.
func commonGitDir(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		dotGit := filepath.Join(d, ".git")
		fi, err := os.Lstat(dotGit)
		switch {
		case err == nil && fi.IsDir():
			real, err := filepath.EvalSymlinks(dotGit)
			if err != nil {
				return ""
			}
			return real
		case err == nil && fi.Mode().IsRegular():
			b, err := ReadFile(context.Background(), dotGit, gitFileCap)
			if err != nil {
				return ""
			}
			gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
			if !ok {
				return ""
			}
			gitdir = strings.TrimSpace(gitdir)
			if !filepath.IsAbs(gitdir) {
				gitdir = filepath.Join(d, gitdir)
			}
			common := gitdir
			if c, err := ReadFile(context.Background(), filepath.Join(gitdir, "commondir"), gitFileCap); err == nil {
				common = strings.TrimSpace(string(c))
				if !filepath.IsAbs(common) {
					common = filepath.Join(gitdir, common)
				}
			}
			real, err := filepath.EvalSymlinks(common)
			if err != nil {
				return ""
			}
			return real
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// Shown returns path, as given, for a hint when it resolves inside root
// and outside .awr, and placeholder otherwise: a hint never names a path
// outside the project.
func Shown(root, path, placeholder string) string {
	abs, err := Inside(root, path)
	if err != nil || abs == filepath.Clean(root) || InState(abs) {
		return placeholder
	}
	return path
}

// typeName names a file mode's type in words.
func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// Place puts the finished temporary file tmp at path (in the same
// directory): renamed over it with force, otherwise linked there, which
// fails if a file appeared at path since Output looked (the temporary
// name is then removed by the caller, as after any failure).
// Errors: *Error RuleExists; the *os.LinkError of the link or rename.
func Place(tmp, path string, force bool) error {
	if force {
		return os.Rename(tmp, path)
	}
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return refuse(path, RuleExists, "exists; awr replaces a file only with --force")
		}
		return err
	}
	return nil
}
