// Package bench builds synthetic but realistic workloads for measuring awr:
// a project's parsed task register and a history of agent sessions
// (claims, context compiles, checkpoints with open loops, renewals, lease
// expiries, resumes, client binds, ends) appended through the same command
// code the CLI uses, batched into large transactions.
package bench
