// Package projections folds the event log into read models: sessions,
// claims, checkpoints and compiled contexts, client bindings, and sources
// with their work items, goals and rules. Whether work can be claimed is
// judged at read time, comparing lease expiry with the reader's clock;
// at the head the work projection keeps the rest of the judgement (each
// item's queue and place in ready's order, and the counts: QueuePage,
// QueueCounts), so a page of ready work reads what it lists.
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
