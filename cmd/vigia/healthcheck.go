package main

import (
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"
)

// healthcheckCommand asks the local server's readiness endpoint; for container health
// checks in images without curl.
func healthcheckCommand() *cobra.Command {
	return &cobra.Command{Use: "healthcheck", Short: "Exit 0 when the local server is ready",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			host, port, err := net.SplitHostPort(cfg.Addr)
			if err != nil {
				return err
			}
			if host == "" || host == "0.0.0.0" || host == "::" {
				host = "127.0.0.1"
			}
			c := http.Client{Timeout: 3 * time.Second}
			res, err := c.Get("http://" + net.JoinHostPort(host, port) + "/api/v1/health/ready")
			if err != nil {
				return err
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				return exitError{code: 1, msg: fmt.Sprintf("not ready: %d", res.StatusCode)}
			}
			return nil
		}}
}
