// Package hygiene finds what in a project's context deserves pruning
// (`awr context hygiene`): live loops, decisions, facts and hypotheses the
// log or the repository shows died or were completed (a later item that
// answers one, a commit or a ticked register item that closes a loop, a
// source changed under a fact, a duplicate), and checkpoints whose
// recorded HEAD left the history; each finding quotes its evidence and
// carries the command that retires it and the one that confirms it.
package hygiene
