// Package pathcheck is the one place where awr checks a path that a person
// or an agent names, and reads a file within bounds. Every front end's
// path goes through it, by way of the project door:
//
//   - An output (a file awr creates or replaces: export, audit) never lands
//     in a .awr directory, is a regular file or nothing, and is never
//     replaced without --force (Output).
//   - A file awr appends to (an anchors file, .awr/hooks.log) is opened
//     without following a symbolic link, must be a regular file with no
//     other hard link, and never lies in .awr unless awr names it itself
//     (Append).
//   - Over MCP every path resolves inside the project (Inside).
//   - A working directory (--cwd, --workdir) is inside the project or in a
//     git worktree of the project's repository (WorkDir).
//   - A file awr reads is a regular file (never a FIFO, a device or a
//     directory: it is opened non-blocking and checked before a byte is
//     read) of at most a cap per kind of input, checked before opening and
//     enforced while reading; the read observes its context (Open,
//     ReadFile, ReadAll).
//   - A hint names a path only when it is inside the project (Shown).
//
// Paths are resolved as the kernel resolves them: every symbolic link of
// the longest existing prefix is followed, and ".." is applied after the
// link it follows (Resolve). A path is refused by a rule as an *Error;
// Fault turns it into the InvalidInput error the front ends show.
package pathcheck
