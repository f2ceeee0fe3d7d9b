// Package queries answers awr's read commands (status, log, sessions, ready
// work) from the projections at a chosen revision. Every answer says which
// project_revision it reflects; none of them writes.
package queries
