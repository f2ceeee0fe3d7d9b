// Package hook answers the hooks of agent hosts (`awr client hook`): one
// event of Claude Code, Codex, Gemini CLI or awr's OpenCode plugin, read
// from its JSON (internal/hosts parses and renders it), recorded in the
// project's log and answered with what the conversation needs: an
// orientation, its session's packet, an update of the packet it holds,
// or nothing; a stop with unsaved work is asked for a checkpoint once.
// It reaches the project only through the door (Door, implemented by
// internal/project), and never fails its host: whatever goes wrong is a
// line in .awr/hooks.log and the host's empty answer.
package hook
