package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/client"
)

// decisionLine is one dataset's trust decision as `vigia trust decide` prints it.
type decisionLine struct {
	DatasetID, Decision, Verdict string
	Reasons                      []string
}

func printDecisions(out io.Writer, lines []decisionLine, notFound []string) error {
	for _, l := range lines {
		reasons := "-"
		if len(l.Reasons) > 0 {
			reasons = strings.Join(l.Reasons, ",")
		}
		fmt.Fprintf(out, "%s %s verdict=%s reasons=%s\n", l.DatasetID, l.Decision, l.Verdict, reasons)
	}
	if len(notFound) > 0 {
		return fmt.Errorf("datasets not found or not visible: %s", strings.Join(notFound, ", "))
	}
	return nil
}

func trustCommand(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "trust", Short: "Trust decisions on datasets"}
	var ws, purpose, server string
	decide := &cobra.Command{Use: "decide DATASET_ID...", Short: "Print the trust decision of each dataset (trusted, caution, untrusted, unknown)",
		Long: "Print the trust decision of each dataset. Locally (DATABASE_URL) with --workspace; against a running server\n" +
			"with --server URL (or VIGIA_URL) and an API token in VIGIA_TOKEN. Exits 1 when a dataset is not found.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, ids []string) error {
			return localOrRemote(c, stderr, ws, server, func() error {
				return remoteDecide(c.Context(), server, ids, purpose, stdout)
			}, func(ctx context.Context, a *app.App) error {
				b, err := a.Trust.DecideBatch(ctx, ids, purpose)
				if err != nil {
					return about("trust decisions", err)
				}
				lines := make([]decisionLine, 0, len(b.Decisions))
				for _, d := range b.Decisions {
					l := decisionLine{DatasetID: d.DatasetID, Decision: d.Decision, Verdict: d.Verdict}
					for _, r := range d.Reasons {
						l.Reasons = append(l.Reasons, r.Code)
					}
					lines = append(lines, l)
				}
				return printDecisions(stdout, lines, b.NotFound)
			})
		}}
	decide.Flags().StringVar(&ws, "workspace", "", "workspace name or id (local only; required there)")
	decide.Flags().StringVar(&purpose, "purpose", "", "rag, ml, agente, bi or treino (default the service's)")
	serverFlag(decide, &server)
	cmd.AddCommand(decide)
	return cmd
}

// remoteDecide asks a running server for the decisions (POST /trust-decisions, a write an
// API token may make).
func remoteDecide(ctx context.Context, server string, ids []string, purpose string, out io.Writer) error {
	c, err := remoteClient(server)
	if err != nil {
		return err
	}
	in := client.TrustDecisionsIn{DatasetIds: &ids}
	if purpose != "" {
		in.Purpose = &purpose
	}
	r, err := c.TrustDecisionsWithResponse(ctx, in)
	if err != nil {
		return err
	}
	if r.JSON200 == nil {
		if r.JSON422 != nil {
			return remoteInvalid("trust decisions", r.JSON422)
		}
		return remoteError("trust decisions", r.StatusCode(), firstError(r.JSON401, r.JSON403, r.JSON404, r.JSON429))
	}
	var lines []decisionLine
	if r.JSON200.Decisions != nil {
		for _, d := range *r.JSON200.Decisions {
			l := decisionLine{DatasetID: d.DatasetId, Decision: string(d.Decision), Verdict: string(d.Verdict)}
			if d.Reasons != nil {
				for _, reason := range *d.Reasons {
					l.Reasons = append(l.Reasons, reason.Code)
				}
			}
			lines = append(lines, l)
		}
	}
	var notFound []string
	if r.JSON200.NotFound != nil {
		notFound = *r.JSON200.NotFound
	}
	return printDecisions(out, lines, notFound)
}
