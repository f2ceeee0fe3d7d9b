//go:build awrtest

package pgstore

import (
	"encoding/json"
	"os"
)

// reportTraffic appends the store's Traffic, as one JSON line, to the file
// AWR_TEST_PG_TRAFFIC names, when a binary built with the awrtest tag
// closes the store: how the tests count what one command costs the
// network (cmd/awr's TestShared_RoundTrips).
func (s *Store) reportTraffic() {
	path := os.Getenv("AWR_TEST_PG_TRAFFIC")
	if path == "" {
		return
	}
	line, err := json.Marshal(s.Traffic())
	if err != nil {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	f.Write(append(line, '\n'))
	f.Close()
}
