// Package idle finds, as of a revision, the sessions their agent left:
// stale ones (active, holding no live claim, and without an event on
// their stream for a lease: Stale, Latest) and lapsed ones (active, but
// their claim lapsed while nobody else took their work: Lapsed), each
// with the one command that deals with it (end it, resume it, or bring
// its seat's rig up). Nothing is written to make a session idle: like a
// lease's expiry, it is read from the log at the reader's clock. The door
// (internal/project) lists them in awr status and awr session list, and
// internal/doctor reports them.
package idle
