// Package anchor keeps a project's witnesses outside its database: an
// anchor is the head of a project's log (project id, seq, hash, time)
// recorded where a rewrite of the database cannot reach it, a git note on
// the project's repository or a line in a file the user keeps elsewhere,
// and the checks of `awr verify` that read them back (Judge, Witnesses),
// with those of a replica's recorded origin and an expected head.
package anchor
