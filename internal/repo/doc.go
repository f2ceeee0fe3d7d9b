// Package repo records the state of the git repository an agent works in, so
// that a checkpoint can say where the work stood and a successor can see what
// moved since.
//
// Capture reads a repository into a State: the HEAD commit, the branch, and
// every dirty file (staged or unstaged tracked changes and untracked,
// non-ignored files) with its status and the git blob id of its working-tree
// content. A sha256 fingerprint over all dirty files tells one dirty work tree
// from another even when the file list is capped at MaxFiles. Changes lists
// the files that differ between two states; Compare and CompareWith compare a
// recorded state with the repository now, reporting moved or rewritten heads,
// the commits in between, a changed branch and a changed work tree.
//
// The package drives the git binary, never a library, and never modifies the
// repository: every command runs with GIT_OPTIONAL_LOCKS=0 so that git status
// does not refresh (and lock) the index, with LC_ALL=C, with
// core.quotepath=off and with NUL-separated (-z) output so that paths with
// spaces, unicode or newlines survive. The repository-location variables
// (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE and their kin) are dropped from the
// environment, so the repository read is always the one containing the
// directory given. A capture costs three git processes (rev-parse and status,
// run side by side, then one hash-object for all dirty files); a comparison
// adds at most four (rev-list, log, diff-tree, and rev-parse when a recorded
// head turns out unknown).
//
// Blob ids are computed as git add would store them: git hash-object runs
// with the repository's filters (core.autocrlf, .gitattributes eol and clean
// filters), so a staged file's blob equals its index entry. Symbolic links are
// hashed as git stores them, over the link target. Directories (submodules,
// nested repositories) are reported with their status and no blob.
//
// A state that cannot be read is an *Unverifiable error, never a pass:
// git missing (ErrNoGit), a directory outside any work tree (ErrNotRepo), a
// commit the repository does not know, or git failing. Compare never fails; it
// reports such a state as status "unverifiable" with the reason.
package repo
