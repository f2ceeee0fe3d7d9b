package project

import (
	"embed"

	"github.com/awr-dev/awr/events"
	"zombiezen.com/go/sqlite"
)

//go:embed sql/*.sql
var sqlFiles embed.FS

var statements = events.NewSQLSet(sqlFiles, "sql")

func prep(conn *sqlite.Conn, name string) *sqlite.Stmt {
	return events.PrepNamed(conn, statements, name)
}
