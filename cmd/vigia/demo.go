package main

import (
	"context"
	"fmt"
	"io"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
)

// seedDemo makes sure a demo workspace exists and prints a fresh token for it.
func seedDemo(ctx context.Context, a *app.App, out io.Writer) error {
	const name = "demo"
	if _, err := a.Identity.Workspace(ctx, name); vigia.IsKind(err, vigia.KindNotFound) {
		if _, err := a.Identity.CreateWorkspace(ctx, name, "PT"); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	_, token, err := a.Identity.CreateAPIToken(ctx, name, "demo", "demo")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "demo workspace %q ready\ntoken: %s\n", name, token)
	return nil
}
