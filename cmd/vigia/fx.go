package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/finops"
)

// fxCommand is `vigia fx load FILE`: the operator loads the exchange rates that money in
// a workspace's currency is converted with (Vigia never fetches a rate itself).
func fxCommand(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "fx", Short: "Exchange rates for workspace currencies"}
	load := &cobra.Command{Use: "load FILE", Args: cobra.ExactArgs(1),
		Short: "Load exchange rates from a CSV file (currency,date,per_eur; - reads standard input)",
		Long: "Loads reference rates: lines currency,date,per_eur such as USD,2026-10-31,1.0832 (US dollars for one euro on that\n" +
			"day, the ECB's convention); currencies USD, GBP, CHF, BRL. A rate of the same currency and day is replaced.\n" +
			"Amounts of a month use the latest rate on or before its last day.",
		RunE: func(c *cobra.Command, args []string) error {
			in := io.Reader(os.Stdin)
			if args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return fmt.Errorf("rates file: %w", err)
				}
				defer f.Close()
				in = f
			}
			rates, err := finops.ParseRates(in)
			if err != nil {
				return about("rates file", err)
			}
			return withApp(c.Context(), stderr, func(a *app.App) error {
				if err := a.Finops.LoadRates(c.Context(), rates); err != nil {
					return about("rates", err)
				}
				fmt.Fprintf(stdout, "%d rates loaded\n", len(rates))
				return nil
			})
		}}
	cmd.AddCommand(load)
	return cmd
}
