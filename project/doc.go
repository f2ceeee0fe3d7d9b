// Package service is the one layer the CLI and the MCP server both call:
// it binds a project directory to its event log, checks the team's source
// files where a command relies on them being current, and combines
// commands (writes) and queries (reads) into the answers the handoff
// needs: start, compile, checkpoint, resume, recovery.
package project
