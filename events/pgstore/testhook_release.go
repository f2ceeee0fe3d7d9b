//go:build !awrtest

package pgstore

// reportTraffic does nothing in a release build: only a binary built with
// the awrtest tag reports a store's traffic (testhook_awrtest.go).
func (s *Store) reportTraffic() {}
