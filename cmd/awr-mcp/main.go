// Command awr-mcp will serve awr's tools over the Model Context Protocol.
// Until the MCP server lands it only reports its version.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"
)

func main() {
	fs := flag.NewFlagSet("awr-mcp", flag.ContinueOnError)
	showVersion := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if *showVersion {
		fmt.Println("awr-mcp", version())
		return
	}
	fmt.Fprintln(os.Stderr, "awr-mcp: the MCP server is not implemented yet; only --version works")
	os.Exit(1)
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
