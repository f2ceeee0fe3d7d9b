// Package storehold keeps a user's connections to a shared PostgreSQL
// store open between awr commands: a small resident process per user and
// per store (the holder), started on demand by the CLI, that answers the
// CLI's connections on a Unix socket in a directory only that user can
// enter and hands each one a server connection it keeps, already started
// and authenticated. A new PostgreSQL connection costs the server a
// backend (a fork, its catalog caches warmed by the first statements, the
// authentication): tens of milliseconds on a busy box, more than every
// statement of a command. Through the holder a command pays a local
// socket instead.
//
// The holder relays PostgreSQL's wire protocol unchanged between one
// client and one server connection at a time (a session pooler, as
// PgBouncer's session mode): transactions, locks, fencing and every other
// guarantee of the store are the server's, exactly as on a direct
// connection. A server connection goes back to the pool only when its
// client left it idle (no transaction open, no answer pending), and is
// reset (DISCARD ALL) first; any other ending closes it, so the server
// rolls back whatever the client left.
//
// It adds no way in: the socket's directory is the user's alone (0700,
// checked), the socket refuses a peer of another user (SO_PEERCRED, on
// Linux), and the holder connects only to the store whose URL (and PG*
// environment) its directory is named after, with the credentials the
// user's own command had. It exits after Idle without a client. The CLI
// falls back to a direct connection whenever the holder is absent or
// fails, so a command never depends on it. AWR_STORE_HOLD=off turns it
// off.
package storehold
