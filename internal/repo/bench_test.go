package repo

import (
	"context"
	"fmt"
	"testing"
)

// benchFixture is a repository of 2000 committed files in 40 directories
// with 50 of them edited.
func benchFixture(b *testing.B) *fixture {
	f := newFixture(b)
	for i := range 2000 {
		f.write(fmt.Sprintf("d%02d/file%04d.go", i%40, i), fmt.Sprintf("package d\n\n// File %d.\nconst N%d = %d\n", i, i, i))
	}
	f.commit("2000 files")
	for i := range 50 {
		f.write(fmt.Sprintf("d%02d/file%04d.go", i%40, i*41), fmt.Sprintf("package d\n\n// Edited %d.\n", i))
	}
	return f
}

func BenchmarkCapture(b *testing.B) {
	f := benchFixture(b)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		st, err := Capture(ctx, f.dir)
		if err != nil {
			b.Fatal(err)
		}
		if len(st.DirtyFiles) != 50 {
			b.Fatalf("%d dirty files, want 50", len(st.DirtyFiles))
		}
	}
}

func BenchmarkCompare(b *testing.B) {
	f := benchFixture(b)
	ctx := context.Background()
	rec := f.capture()
	f.commit("commit the edits")
	b.ResetTimer()
	for b.Loop() {
		if c := Compare(ctx, f.dir, rec); c.Status != CompareChanged || c.CommitsBetween != 1 {
			b.Fatalf("comparison %+v", c)
		}
	}
}
