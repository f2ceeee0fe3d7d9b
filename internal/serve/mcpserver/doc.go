// Package mcpserver is awr's Model Context Protocol server: it exposes the
// same operations as the awr CLI as flat MCP tools (awr_status,
// awr_session_start, awr_context_compile, ...) over any transport of the
// official Go SDK. Each tool decodes its input into the request type of a
// project door operation, makes the same call as the matching CLI command
// and returns the same JSON object
// the command prints with --json, as structured content and as text;
// every tool declares its outputSchema (outputschema.go), with no union
// with null. Domain errors become tool errors whose text carries the
// CLI's code, message, details and hint; protocol errors are left to
// protocol faults.
//
// It also serves read-only resources (resources.go: the status, and the
// context packets of sessions and work items, compiled through the door
// without recording them) and the resume_work prompt (prompts.go). Their
// errors are JSON-RPC errors whose data is the CLI's error object.
//
// The shared service (shared.go, registry.go) serves the same tools for
// several projects over Streamable HTTP: a registry lists the projects
// and the clients with their bearer tokens and grants; each request is
// checked (Host and Origin, token, grant) before the SDK sees it, every
// project tool takes project, and each project's door stays open.
package mcpserver
