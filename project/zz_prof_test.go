package project_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/awr-dev/awr/project"
)

func TestZZProf(t *testing.T) {
	dir := os.Getenv("ZZ_DIR")
	if dir == "" {
		t.Skip()
	}
	n, _ := strconv.Atoi(os.Getenv("ZZ_N"))
	ctx := context.Background()
	start := time.Now()
	for range n {
		p, err := project.Open(ctx, dir, project.Options{})
		if err != nil {
			t.Fatal(err)
		}
		switch os.Getenv("ZZ_CMD") {
		case "status":
			_, err = p.Status(ctx, project.StatusRequest{})
		case "ready":
			_, err = p.Ready(ctx, project.ReadyRequest{})
		}
		if err != nil {
			t.Fatal(err)
		}
		p.Close()
	}
	t.Logf("%v per op", time.Since(start)/time.Duration(n))
}
