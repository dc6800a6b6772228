package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/connection"
	"github.com/vigia-data/vigia/i18n"
	"github.com/vigia-data/vigia/plan"
	"github.com/vigia-data/vigia/rest"
)

// run executes the command line and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := rootCommand(stdout, stderr)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(stderr, "vigia:", userMessage(err))
		var ex exitError
		if errors.As(err, &ex) {
			return ex.code
		}
		return 1
	}
	return 0
}

// exitError carries a specific exit status.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

// objectError names the object a command failed on (a workspace, a connection ...).
type objectError struct {
	what string
	err  error
}

func (e *objectError) Error() string { return e.what + ": " + e.err.Error() }
func (e *objectError) Unwrap() error { return e.err }

// about names the object err is about; nil stays nil. what must never hold a secret.
func about(what string, err error) error {
	if err == nil {
		return nil
	}
	return &objectError{what: what, err: err}
}

// cliLang is the language of messages on the terminal: LC_ALL, LC_MESSAGES or LANG,
// else the product's default (pt-PT).
func cliLang() string {
	for _, v := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if l := i18n.Normalize(os.Getenv(v)); l != "" {
			return l
		}
	}
	return i18n.PT
}

// userMessage renders an error for a terminal: the object it is about, the localized
// reason and its stable code, never internal causes of Vigia errors that could carry
// secrets.
func userMessage(err error) string {
	var prefix []string
	for e := err; e != nil; {
		var oe *objectError
		if !errors.As(e, &oe) {
			break
		}
		prefix = append(prefix, oe.what)
		e = oe.err
	}
	msg := reasonText(err)
	if len(prefix) > 0 {
		return strings.Join(prefix, ": ") + ": " + msg
	}
	return msg
}

func reasonText(err error) string {
	var e *vigia.Error
	if !errors.As(err, &e) {
		var oe *objectError
		if errors.As(err, &oe) {
			return oe.err.Error()
		}
		return err.Error()
	}
	if e.Kind == vigia.KindInternal && e.Err != nil {
		return e.Err.Error()
	}
	msgs, lerr := i18n.New()
	if lerr != nil {
		return e.Code
	}
	lang := cliLang()
	if e.Kind == vigia.KindInvalid && len(e.Fields) > 0 {
		parts := make([]string, 0, len(e.Fields))
		for _, f := range e.Fields {
			where := strings.Join(f.Loc, ".")
			if len(f.Loc) > 1 && (f.Loc[0] == "body" || f.Loc[0] == "query") {
				where = strings.Join(f.Loc[1:], ".")
			}
			text := fmt.Sprintf("%s: %s (%s)", where, msgs.FieldMessage(lang, f.Type, f.Ctx), f.Type)
			if reason, ok := f.Ctx["reason"].(string); ok && reason != "" {
				text = fmt.Sprintf("%s: %s (%s: %s)", where, msgs.FieldMessage(lang, f.Type, f.Ctx), f.Type, reason)
			}
			if f.Type == "dsn_invalid" {
				text += "; accepted: " + connection.DSNForms
			}
			parts = append(parts, text)
		}
		return strings.Join(parts, "; ")
	}
	return fmt.Sprintf("%s (%s)", msgs.Message(lang, e.Key, e.Params), e.Code)
}

func rootCommand(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{Use: "vigia", Short: "Vigia: data quality and lineage", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(serveCommand(stderr), migrateCommand(stderr), workspaceCommand(stdout, stderr), userCommand(stdout, stderr),
		tokenCommand(stdout, stderr), openapiCommand(stdout), healthcheckCommand(), connectionCommand(stdout, stderr),
		scanCommand(stdout, stderr), demoCommand(stdout, stderr), trustCommand(stdout, stderr),
		datasetsCommand(stdout, stderr))
	root.AddCommand(graphCommand(stdout, stderr), lineageCommand(stdout, stderr), rulesCommand(stdout, stderr), benchCommand(stdout, stderr),
		diffCommand(stdout, stderr))
	root.AddCommand(applyCommand(stdout, stderr), exportConfigCommand(stdout, stderr))
	root.AddCommand(syntheticCommand(stdout, stderr), biCommand(stdout, stderr), orchestratorCommand(stdout, stderr), fxCommand(stdout, stderr))
	return root
}

// withApp loads the configuration and opens the app for a subcommand.
func withApp(ctx context.Context, logOut io.Writer, fn func(a *app.App) error) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	a, err := openCLIApp(ctx, cfg, logOut)
	if err != nil {
		return err
	}
	defer a.DB.Close()
	defer func() { _ = a.Close(context.WithoutCancel(ctx)) }()
	return fn(a)
}

func serveCommand(stderr io.Writer) *cobra.Command {
	var addr string
	var demo bool
	cmd := &cobra.Command{Use: "serve", Short: "Serve the API, GraphQL and workers",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			if addr != "" {
				cfg.Addr = addr
			}
			return serve(cmd.Context(), cfg, demo, cmd.OutOrStdout(), stderr)
		}}
	cmd.Flags().StringVar(&addr, "addr", "", "listen address (default $VIGIA_ADDR or 127.0.0.1:8080)")
	cmd.Flags().BoolVar(&demo, "demo", false, "seed a demo workspace first")
	return cmd
}

// serve runs the HTTP server until ctx ends, then fails readiness, drains and exits.
func serve(ctx context.Context, cfg config, demo bool, stdout, logOut io.Writer) error {
	a, err := openApp(ctx, cfg, logOut)
	if err != nil {
		return err
	}
	defer a.DB.Close()
	defer func() { _ = a.Close(context.WithoutCancel(ctx)) }()
	if demo {
		if err := runDemo(ctx, a, cfg, nil, "", "", stdout, true); err != nil {
			return err
		}
	}
	srv := a.Server()
	wctx, stopWorkers := context.WithCancel(context.WithoutCancel(ctx))
	workersDone := make(chan struct{})
	go func() {
		defer close(workersDone)
		if err := a.RunWorkers(wctx); err != nil {
			a.Log.Error("workers stopped", "cause", err.Error())
		}
	}()
	defer func() { stopWorkers(); <-workersDone }()
	go a.RunTokenCache(wctx)
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 90 * time.Second, IdleTimeout: 120 * time.Second, MaxHeaderBytes: 1 << 20}
	a.Log.Info("vigia listening", "addr", ln.Addr().String(), "version", version, "build_sha", sha(), "config", cfg.String())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	a.Log.Info("shutting down: readiness fails, draining requests", "drain_delay_s", cfg.DrainDelay.Seconds())
	srv.Drain()
	time.Sleep(cfg.DrainDelay)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	a.Log.Info("stopped")
	return nil
}

func migrateCommand(stderr io.Writer) *cobra.Command {
	return &cobra.Command{Use: "migrate", Short: "Apply database migrations and exit",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withApp(cmd.Context(), stderr, func(a *app.App) error {
				fmt.Fprintln(cmd.OutOrStdout(), "migrations applied")
				return nil
			})
		}}
}

func workspaceCommand(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "workspace", Short: "Manage workspaces"}
	var country string
	create := &cobra.Command{Use: "create NAME", Short: "Create a workspace; prints its id", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return withApp(c.Context(), stderr, func(a *app.App) error {
				w, err := a.Identity.CreateWorkspace(c.Context(), args[0], country)
				if err != nil {
					return about(fmt.Sprintf("workspace %q", args[0]), err)
				}
				fmt.Fprintln(stdout, w.ID)
				return nil
			})
		}}
	create.Flags().StringVar(&country, "country", "PT", "default data country (ISO 3166-1 alpha-2)")
	cmd.AddCommand(create, workspaceSetCommand(stdout, stderr))
	return cmd
}

// workspaceSetCommand is `vigia workspace set NAME --plan free|team|business`: the
// operator chooses a workspace's plan (business unless chosen).
func workspaceSetCommand(stdout, stderr io.Writer) *cobra.Command {
	var planName string
	set := &cobra.Command{Use: "set NAME", Short: "Change a workspace's settings (its plan)", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return withApp(c.Context(), stderr, func(a *app.App) error {
				w, err := a.Identity.SetPlan(c.Context(), args[0], plan.Plan(planName))
				if err != nil {
					return about(fmt.Sprintf("workspace %q", args[0]), err)
				}
				fmt.Fprintf(stdout, "%s plan=%s\n", w.ID, w.Plan)
				return nil
			})
		}}
	set.Flags().StringVar(&planName, "plan", "", "free, team or business (a self-hosted workspace is business unless set)")
	_ = set.MarkFlagRequired("plan")
	return set
}

func userCommand(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "user", Short: "Manage people"}
	var ws, email, role string
	create := &cobra.Command{Use: "create", Short: "Add a person; prints a session token",
		RunE: func(c *cobra.Command, _ []string) error {
			return withApp(c.Context(), stderr, func(a *app.App) error {
				_, secret, err := a.Identity.CreateUser(c.Context(), ws, email, vigia.Role(role))
				if err != nil {
					return about(fmt.Sprintf("user %q in workspace %q", email, ws), err)
				}
				fmt.Fprintln(stdout, secret)
				return nil
			})
		}}
	create.Flags().StringVar(&ws, "workspace", "", "workspace name or id")
	create.Flags().StringVar(&email, "email", "", "email address")
	create.Flags().StringVar(&role, "role", "member", "admin, member or viewer")
	_ = create.MarkFlagRequired("workspace")
	_ = create.MarkFlagRequired("email")
	cmd.AddCommand(create)
	return cmd
}

func tokenCommand(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "token", Short: "Manage API tokens"}
	var ws, name, secret, expiresIn string
	create := &cobra.Command{Use: "create", Short: "Create an API token; prints it once",
		RunE: func(c *cobra.Command, _ []string) error {
			var expiresAt *time.Time
			if expiresIn != "" {
				d, err := parseLifetime(expiresIn)
				if err != nil {
					return err
				}
				end := time.Now().Add(d)
				expiresAt = &end
			}
			return withApp(c.Context(), stderr, func(a *app.App) error {
				_, s, err := a.Identity.CreateAPIToken(c.Context(), ws, name, "cli", expiresAt)
				if err != nil {
					return about(fmt.Sprintf("token %q in workspace %q", name, ws), err)
				}
				fmt.Fprintln(stdout, s)
				return nil
			})
		}}
	create.Flags().StringVar(&ws, "workspace", "", "workspace name or id")
	create.Flags().StringVar(&name, "name", "", "a name to recognise the token by")
	create.Flags().StringVar(&expiresIn, "expires-in", "", "end the token's validity after this long: 90d, 12h, 1h30m (default: until revoked)")
	_ = create.MarkFlagRequired("workspace")
	revoke := &cobra.Command{Use: "revoke", Short: "Revoke an API token at once",
		RunE: func(c *cobra.Command, _ []string) error {
			return withApp(c.Context(), stderr, func(a *app.App) error {
				t, err := a.Identity.RevokeAPIToken(c.Context(), ws, secret, "cli")
				if err != nil {
					return about(fmt.Sprintf("the token given in workspace %q", ws), err)
				}
				fmt.Fprintf(stdout, "revoked token %s (%s)\n", t.ID, t.Name)
				return nil
			})
		}}
	revoke.Flags().StringVar(&ws, "workspace", "", "workspace name or id")
	revoke.Flags().StringVar(&secret, "token", "", "the token (svc_…)")
	_ = revoke.MarkFlagRequired("workspace")
	_ = revoke.MarkFlagRequired("token")
	cmd.AddCommand(create, revoke)
	return cmd
}

// parseLifetime reads a token lifetime: a Go duration (12h, 1h30m) or a number of days
// (90d).
func parseLifetime(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("--expires-in %q: want a positive number of days (90d) or a duration (12h)", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("--expires-in %q: want a positive number of days (90d) or a duration (12h)", s)
	}
	return d, nil
}

func openapiCommand(stdout io.Writer) *cobra.Command {
	var indent bool
	cmd := &cobra.Command{Use: "openapi", Short: "Print the OpenAPI 3.1 document",
		RunE: func(c *cobra.Command, _ []string) error {
			doc, err := rest.New(rest.Config{Version: version, BuildSHA: sha()}, rest.Deps{}, nil).OpenAPI()
			if err != nil {
				return err
			}
			if indent {
				var b bytes.Buffer
				if err := json.Indent(&b, doc, "", "  "); err != nil {
					return err
				}
				doc = b.Bytes()
			}
			_, err = stdout.Write(append(doc, '\n'))
			return err
		}}
	cmd.Flags().BoolVar(&indent, "indent", false, "one member per line (the copy kept in client/openapi.json, for readable diffs)")
	return cmd
}
