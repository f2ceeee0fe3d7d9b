// Package hosts holds what awr knows about the hosts agents run in (Claude
// Code, OpenAI Codex CLI, Google Gemini CLI): how each delivers a hook event,
// how each wants it answered, and where and how its hooks are configured. It
// is pure host logic: it reads no awr store and decides nothing about the
// work; the CLI's hook command calls it on either side of one project API
// call.
//
// Parse (or Read, bounded at MaxPayload) turns a host's JSON payload into a
// normalized Event: awr's event Name (session_start, before_agent,
// pre_compact, post_compact, stop, session_end) and the fields awr uses,
// checked per host and event; unknown fields are tolerated because hosts add
// them. Event.Key identifies one occurrence, so a repeated delivery (Codex
// runs a hook installed at both scopes twice) is recorded once.
//
// Render writes an Answer (context for the model, a request to keep the
// agent going, a one-line reminder for the user) in the host's own format,
// keeping only what the event can carry and naming the rest in
// Output.Dropped: Claude and Codex read context from hookSpecificOutput,
// Gemini reads only JSON (so its empty answer is "{}"), Codex's compaction
// events and Claude's PreCompact have no context field, and a stop event is
// never blocked while the host reports stop_hook_active. Context is bounded
// by MaxContext; Fit drops whole optional parts first and Truncate, the last
// resort, marks its cut. Every answer exits 0: a hook never breaks its host.
//
// Install and Uninstall merge awr's hooks into a host's settings file bytes,
// keeping every other key and hook in place (key order preserved, awr's
// group appended or replaced in place), idempotently, and recognizing awr's
// handlers by their command (IsAwrCommand). Invalid JSON is refused with the
// line and column. SettingsPath gives each host's file per scope; ReadSettings,
// Fingerprint and Unchanged detect a file that changed since a preview;
// WriteAtomic replaces it safely. ApplyInstall and ApplyUninstall are the
// whole `awr client install|uninstall` of one file (preview, fingerprint
// check, the hook command's doctor check, the atomic write); the project
// door only finds the file and the command line.
//
// PacketLines and PacketUpdate give a conversation that already holds a
// packet only the lines that changed; ForkSources finds the conversation a
// forked one came from; UnsavedSummary says in a line what a stop gate
// found unsaved.
//
// The host facts live in one table (specs in host.go), each group of rows
// naming the host documentation page it follows.
package hosts
