package secret_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/awr-dev/awr/internal/secret"
)

// BenchmarkFindJSON is the seal's check on a checkpoint-sized payload
// and on a source_indexed payload of 1,000 items.
func BenchmarkFindJSON(b *testing.B) {
	checkpoint, _ := json.Marshal(map[string]any{"checkpoint_id": "01M94M0WXQ8EP208HE7QD0HST6", "session_id": "01M94M0WXQGHP6D1MC9SW07W4R", "work": "CART-1",
		"agent": "builder", "digest": "Added the carts table migration; tests written, not yet run.", "next_action": "Run the migration tests and fix what fails",
		"repo": map[string]any{"state": map[string]any{"head": "4479fce126b685e22012cbf0d76d531840447ce0", "branch": "main", "dirty": true,
			"dirty_files": []map[string]string{{"path": "internal/cart/store.go", "status": "modified"}}}}})
	items := make([]map[string]any, 1000)
	for i := range items {
		items[i] = map[string]any{"key": fmt.Sprintf("T-%d", i), "title": "Persist the cart server-side so a reload keeps it", "status": "planned",
			"depends_on": []map[string]any{{"key": fmt.Sprintf("T-%d", i/2), "required": true}}, "source": map[string]any{"path": "TODO.md", "line_start": i + 3}}
	}
	source, _ := json.Marshal(map[string]any{"path": "TODO.md", "items": items})
	for _, c := range []struct {
		name string
		doc  []byte
	}{{"checkpoint", checkpoint}, {"source_1k_items", source}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.doc)))
			for range b.N {
				if _, _, ok := secret.FindJSON(c.doc); ok {
					b.Fatal("found a secret")
				}
			}
		})
	}
}
