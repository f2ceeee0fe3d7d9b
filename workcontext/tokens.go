package workcontext

import (
	"runtime/debug"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// Tokenizer is the encoding token counts use. Its tables are embedded in
// the binary: nothing is downloaded at run time.
const Tokenizer = "o200k_base"

var (
	encOnce  sync.Once
	enc      tokenizer.Codec
	encErr   error
	saveOnce sync.Once
)

// Count returns the number of o200k_base tokens in text. It uses the rank
// table cached on this machine when there is one; otherwise the tokenizer
// library, and then caches the table for the next process.
func Count(text string) (int, error) {
	if t := loadTable(); t != nil {
		return t.count(text)
	}
	warmLibrary()
	if encErr != nil {
		return 0, encErr
	}
	saveOnce.Do(func() { saveTable(enc) })
	return enc.Count(text)
}

// Warm loads what counting needs (the cached rank table, or else the
// library's tables, about 14 ms) so that a caller can overlap it with other
// start-up work: call `go workcontext.Warm()` early.
func Warm() {
	if loadTable() == nil {
		warmLibrary()
	}
}

func warmLibrary() {
	encOnce.Do(func() {
		// Building the 200,000-entry table allocates a lot at once; a
		// collection in the middle of it only slows a short-lived process.
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
		enc, encErr = tokenizer.Get(tokenizer.O200kBase)
	})
}
