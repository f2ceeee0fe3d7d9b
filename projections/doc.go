// Package projections folds the event log into read models: sessions,
// claims, checkpoints and compiled contexts, client bindings, and sources
// with their work items, goals and rules. The ready set is derived from
// these at read time, comparing lease expiry with the reader's clock.
//
// Every mutable read model is revision-stamped: each row version carries
// valid_from (the seq that created it) and valid_to (the seq that replaced
// it, NULL while current). A read at revision R selects the versions with
// valid_from <= R < valid_to. Point reads seek the row's identity; the
// sets a status needs at R (active sessions, held claims) go through a
// dyadic interval index (see interval) whose cost does not depend on R.
// docs/architecture.md lists the reads that still scan. Projections never
// read the clock; expiry is data compared with the reader's now.
package projections
