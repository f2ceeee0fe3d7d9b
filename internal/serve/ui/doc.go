// Package ui is the web page of `awr ui`: a local, read-only view of one
// project's log served by the binary. The page (one HTML file, one
// script, one stylesheet, embedded) draws a timeline per work item, a
// revision slider showing the state as of a revision, each event's
// envelope, payload and hash, filters, and the chain's verification, and
// follows the log by polling its head. Its JSON API under /api/ reads only
// through package project, with the CLI's `--at` semantics. The server
// answers GET and HEAD only, and only for the Host it listens on (a
// defence against DNS rebinding); Listen serves loopback unless an
// interface's address is named in full.
package ui
