// Package browsertest drives a headless Chromium from Go tests through chromedp:
// open a page, wait for it, run JavaScript, read text and take PNG screenshots.
//
// Tests that need a browser call New; where no Chromium is installed they are
// skipped, except under CI (env CI set), where a missing browser fails the test so
// that CI never passes by skipping. Debian: `apt-get install -y chromium`.
package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// EnvChromium names an environment variable that, when set, is the browser to use
// instead of the first of chromiumNames found on PATH.
const EnvChromium = "VIGIA_CHROMIUM"

// StepTimeout bounds each helper step (navigate, wait, click, ...), so a selector
// that never appears fails the test with its name instead of hanging until the
// go test timeout. It is a guard against hangs, not a speed check.
const StepTimeout = 60 * time.Second

// chromiumNames are the executables tried, in order: Debian's package first.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"}

// Chromium returns the path of the browser to drive. When none is found it skips
// the test, unless env CI is set, in which case it fails it.
func Chromium(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv(EnvChromium); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			tb.Fatalf("browsertest: %s=%q is not an executable: %v", EnvChromium, p, err)
		}
		return p
	}
	for _, name := range chromiumNames {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "browsertest: no Chromium found on PATH (tried " + strings.Join(chromiumNames, ", ") +
		"; or set " + EnvChromium + "); install it with: apt-get update && apt-get install -y chromium"
	if os.Getenv("CI") != "" {
		tb.Fatal(msg + " — CI is set, so this test fails instead of skipping")
	}
	tb.Skip(msg)
	return ""
}

// Browser is one headless Chromium with one tab, closed by the test's cleanup.
// Its methods fail the test on error; Context gives the chromedp context for
// steps that return errors instead (such as explorertest.RunQuery).
type Browser struct {
	tb  testing.TB
	ctx context.Context

	mu       sync.Mutex
	problems []string
}

// New starts a headless Chromium with a fresh profile in a temporary directory,
// with the flags that work as root in a container, and a 1280×800 viewport. It
// skips or fails the test as Chromium does when no browser is installed. extra
// adds allocator options (chromedp.Flag(...)), such as host resolver rules.
func New(tb testing.TB, extra ...chromedp.ExecAllocatorOption) *Browser {
	tb.Helper()
	exe := Chromium(tb)
	profile, err := os.MkdirTemp("", "vigia-chromium-")
	if err != nil {
		tb.Fatalf("browsertest: profile directory: %v", err)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.UserDataDir(profile),
		chromedp.Headless,
		chromedp.NoSandbox, // root in a container has no usable sandbox
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 800),
	)
	opts = append(opts, extra...)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx, chromedp.WithLogf(func(string, ...any) {}))
	tb.Cleanup(func() {
		// A graceful close lets Chromium stop its helper processes and flush
		// the profile; a kill leaves them writing into it for a moment.
		_ = chromedp.Cancel(ctx)
		cancelCtx()
		cancelAlloc() // waits for the browser process to exit
		removeProfile(tb, profile)
	})

	b := &Browser{tb: tb, ctx: ctx}
	chromedp.ListenTarget(ctx, b.record)

	// The first Run starts the browser. It must use ctx itself: a browser started
	// under a derived timeout context would be killed when that context ends.
	if err := chromedp.Run(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		tb.Fatalf("browsertest: start %s: %v", exe, err)
	}
	return b
}

// removeProfile deletes the browser's profile directory. A helper process that
// outlives the browser can still be writing there, so it tries a few times and
// only logs when the directory stays.
func removeProfile(tb testing.TB, dir string) {
	tb.Helper()
	var err error
	for range 20 {
		if err = os.RemoveAll(dir); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	tb.Logf("browsertest: could not remove the profile directory %s: %v", dir, err)
}

// record keeps what a person would see in the DevTools console as a problem:
// errors logged by the browser (failed loads, Content-Security-Policy
// violations), console.error calls and uncaught exceptions.
func (b *Browser) record(ev any) {
	var line string
	switch e := ev.(type) {
	case *cdplog.EventEntryAdded:
		if e.Entry.Level != cdplog.LevelError {
			return
		}
		line = fmt.Sprintf("%s: %s %s", e.Entry.Source, e.Entry.Text, e.Entry.URL)
	case *runtime.EventConsoleAPICalled:
		if e.Type != runtime.APITypeError && e.Type != runtime.APITypeAssert {
			return
		}
		parts := make([]string, 0, len(e.Args))
		for _, a := range e.Args {
			if len(a.Value) > 0 {
				parts = append(parts, string(a.Value))
			} else {
				parts = append(parts, a.Description)
			}
		}
		line = "console." + string(e.Type) + ": " + strings.Join(parts, " ")
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		line = "exception: " + d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			line += " " + d.Exception.Description
		}
	default:
		return
	}
	b.mu.Lock()
	b.problems = append(b.problems, line)
	b.mu.Unlock()
}

// Context returns the chromedp context of the browser's tab, for chromedp.Run
// with any action this package does not wrap.
func (b *Browser) Context() context.Context { return b.ctx }

// Problems returns the errors the page reported so far: browser log errors
// (including CSP violations and failed loads), console.error and uncaught
// exceptions.
func (b *Browser) Problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.problems...)
}

// Run runs chromedp actions with StepTimeout, failing the test on error; what
// describes the step in the failure message.
func (b *Browser) Run(what string, actions ...chromedp.Action) {
	b.tb.Helper()
	if err := RunStep(b.ctx, actions...); err != nil {
		b.tb.Fatalf("browsertest: %s: %v", what, err)
	}
}

// RunStep runs chromedp actions on ctx (a context from Browser.Context or
// derived from it) bounded by StepTimeout, and names a timeout as such.
func RunStep(ctx context.Context, actions ...chromedp.Action) error {
	stepCtx, cancel := context.WithTimeout(ctx, StepTimeout)
	defer cancel()
	err := chromedp.Run(stepCtx, actions...)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return fmt.Errorf("step did not finish within %s: %w", StepTimeout, err)
	}
	return err
}

// Navigate opens url in the tab and waits for its load event.
func (b *Browser) Navigate(url string) {
	b.tb.Helper()
	b.Run("navigate to "+url, chromedp.Navigate(url))
}

// WaitVisible waits until the CSS selector matches a visible element.
func (b *Browser) WaitVisible(selector string) {
	b.tb.Helper()
	b.Run("wait for "+selector, chromedp.WaitVisible(selector, chromedp.ByQuery))
}

// Click clicks the first element the CSS selector matches, once it is visible.
func (b *Browser) Click(selector string) {
	b.tb.Helper()
	b.Run("click "+selector, chromedp.Click(selector, chromedp.ByQuery))
}

// Eval evaluates a JavaScript expression in the page and stores its JSON value in
// out (a pointer, or nil to discard it). Promises are awaited.
func (b *Browser) Eval(expression string, out any) {
	b.tb.Helper()
	b.Run("evaluate "+short(expression), chromedp.Evaluate(expression, out, awaitPromise))
}

// Text returns the visible text of the first element the CSS selector matches.
func (b *Browser) Text(selector string) string {
	b.tb.Helper()
	var text string
	b.Run("read text of "+selector, chromedp.Text(selector, &text, chromedp.ByQuery))
	return text
}

// Screenshot saves a PNG of the tab's viewport to path.
func (b *Browser) Screenshot(path string) {
	b.tb.Helper()
	var png []byte
	b.Run("screenshot", chromedp.CaptureScreenshot(&png))
	b.write(path, png)
}

// ScreenshotElement saves a PNG of the first element the CSS selector matches
// (an SVG badge, say) to path.
func (b *Browser) ScreenshotElement(selector, path string) {
	b.tb.Helper()
	var png []byte
	b.Run("screenshot of "+selector, chromedp.Screenshot(selector, &png, chromedp.ByQuery))
	b.write(path, png)
}

func (b *Browser) write(path string, png []byte) {
	b.tb.Helper()
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.tb.Fatalf("browsertest: save screenshot: %v", err)
	}
}

// awaitPromise makes Evaluate wait for a returned promise to settle.
func awaitPromise(p *runtime.EvaluateParams) *runtime.EvaluateParams {
	return p.WithAwaitPromise(true)
}

// short trims a script for a failure message.
func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
