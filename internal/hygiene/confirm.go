package hygiene

import (
	"strings"

	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
)

// OpenedDir is the working directory of the session that opened
// knowledge item id of work (dir is the project's), where a confirmation
// of the item reads HEAD; "" when the item, or that session, is unknown
// at rev.
func OpenedDir(conn *sqlite.Conn, dir, work, id string, rev int64) (string, error) {
	items, err := projections.KnowledgeAt(conn, work, rev)
	if err != nil {
		return "", err
	}
	for _, k := range items {
		if strings.EqualFold(k.ID, strings.TrimSpace(id)) {
			if d, err := SessionDir(conn, dir, k.OpenedSession, rev); err != nil || d != "" {
				return d, err
			}
		}
	}
	return "", nil
}
