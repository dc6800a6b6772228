package rest

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/i18n"
)

var requestIDRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// withRequestID keeps the caller's X-Request-ID when it is 1-64 characters of
// A-Z a-z 0-9 . _ -, otherwise makes a UUID; the id is on every response.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-ID")
		if !requestIDRE.MatchString(id) {
			id = vigia.NewUUID()
		}
		w.Header().Set("X-Request-ID", id)
		ctx := vigia.WithRequestID(r.Context(), id)
		ctx = vigia.WithLang(ctx, i18n.Resolve("", "", r.Header.Get("Accept-Language")))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// accessLog logs one line per request: route pattern (never the raw path or query,
// which may carry values), status, duration and request id; and turns panics into a
// fixed 500.
func (s *Server) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		defer func() {
			if rec := recover(); rec != nil {
				if rec == http.ErrAbortHandler {
					panic(rec)
				}
				s.log.ErrorContext(r.Context(), "panic", "request_id", vigia.RequestID(r.Context()), "route", routePattern(r), "panic", fmt.Sprint(rec))
				if ww.Status() == 0 {
					s.writeError(ww, r, vigia.Internal(fmt.Errorf("panic")))
				}
			}
			route := routePattern(r)
			status := ww.Status()
			switch {
			case status == 0 && vigia.ClientClosed(r.Context(), r.Context().Err()):
				// Nothing was answered: the client went away (nginx's 499).
				status = statusClientClosed
			case status == 0:
				status = http.StatusOK
			}
			d := time.Since(start)
			s.metrics.observe(r.Method, route, status, d)
			s.log.InfoContext(r.Context(), "request", "request_id", vigia.RequestID(r.Context()),
				"method", r.Method, "route", route, "status", status, "duration_ms", d.Milliseconds())
		}()
		next.ServeHTTP(ww, r)
	})
}

// statusClientClosed marks, in logs and metrics only, a request whose client
// disconnected before the answer.
const statusClientClosed = 499

func routePattern(r *http.Request) string {
	if rc := chi.RouteContext(r.Context()); rc != nil {
		if p := rc.RoutePattern(); p != "" {
			return p
		}
	}
	return "unmatched"
}

// guard authenticates, rate-limits, picks the response language and enforces the
// read-only rule of API tokens, in front of both /api/v1 and /graphql.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/api/") && !strings.HasPrefix(r.URL.Path, "/graphql") {
			next.ServeHTTP(w, r)
			return
		}
		op := s.lookup(r)
		if op != nil && op.Deprecated != nil {
			// Every answer of a deprecated operation says so, refusals included (the
			// document declares the headers on all of its responses).
			setDeprecation(w, op.Deprecated)
		}
		ipLimiter := s.ipLimiter
		if op != nil && op.Probe {
			ipLimiter = s.probeLimiter
		}
		ipq := ipLimiter.take("ip:" + s.clientAddr.of(r))
		setRateHeaders(w, ipq)
		if !ipq.Allowed {
			s.writeError(w, r, vigia.RateLimited(vigia.CodeRateLimited, secondsUntil(ipq.Reset, s.now())))
			return
		}
		if op != nil && op.Public || isExplorer(r) {
			next.ServeHTTP(w, r)
			return
		}
		secret, err := bearer(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		p, err := s.deps.Identity.Authenticate(r.Context(), secret)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		ctx := vigia.WithPrincipal(r.Context(), p)
		ctx = vigia.WithLang(ctx, i18n.Resolve(p.Locale, p.WorkspaceLocale, r.Header.Get("Accept-Language")))
		r = r.WithContext(ctx)
		tq := s.tokenLimiter.take("tok:" + p.TokenID)
		setRateHeaders(w, tq)
		if !tq.Allowed {
			s.writeError(w, r, vigia.RateLimited(vigia.CodeRateLimited, secondsUntil(tq.Reset, s.now())))
			return
		}
		if p.ReadOnly && !safeMethod(r.Method) && !(op != nil && op.TokenWrite) && r.URL.Path != "/graphql" {
			s.writeError(w, r, vigia.ReadOnly())
			return
		}
		next.ServeHTTP(w, r)
	})
}

// lookup finds the declared operation a request routes to, if any.
func (s *Server) lookup(r *http.Request) *operation {
	pattern := s.root.Find(chi.NewRouteContext(), r.Method, r.URL.Path)
	if pattern == "" {
		return nil
	}
	return s.opByRoute[r.Method+" "+pattern]
}

func isExplorer(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		(r.URL.Path == "/graphql" || strings.HasPrefix(r.URL.Path, "/graphql/assets/"))
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// bearer reads the credential: no header → auth_required; anything but a Bearer
// credential → token_invalid.
func bearer(r *http.Request) (string, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", vigia.Unauthenticated(vigia.CodeAuthRequired)
	}
	scheme, cred, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(cred) == "" {
		return "", vigia.Unauthenticated(vigia.CodeTokenInvalid)
	}
	return strings.TrimSpace(cred), nil
}

func setRateHeaders(w http.ResponseWriter, q quota) {
	w.Header().Set("X-RateLimit-Limit", strconv.Itoa(q.Limit))
	w.Header().Set("X-RateLimit-Remaining", strconv.Itoa(q.Remaining))
	w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(q.Reset.Unix(), 10))
}

func secondsUntil(t, now time.Time) int {
	return int(math.Ceil(t.Sub(now).Seconds()))
}

// withTimeout bounds a request's work.
func withTimeout(d time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithTimeout(r.Context(), d)
			defer cancel()
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}
