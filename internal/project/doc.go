// Package project is the one door every front end goes through: the CLI,
// the MCP server, the demo and the benchmarks. Open is the only
// constructor of a Project; a Project has one method per operation (each
// CLI command, each MCP tool), each taking that operation's request type,
// declared once with the tags both front ends need. Writes are commands of
// the commands package, one transaction each; reads answer from the
// projections at the revision their request names (commands.Read). The
// door is also where the file system is consulted before a command (the
// manifest, the freshness of the team's source files).
package project
