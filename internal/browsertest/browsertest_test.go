package browsertest_test

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigia-data/vigia/internal/browsertest"
)

const page = `<!doctype html>
<html><head><meta charset="utf-8"><title>t</title><link rel="icon" href="data:,"></head>
<body>
<h1 id="greeting">Olá</h1>
<button id="go">go</button>
<svg id="badge" xmlns="http://www.w3.org/2000/svg" width="120" height="20">
  <rect width="120" height="20" fill="#ff0000"/>
</svg>
<script src="/app.js"></script>
</body></html>`

const app = `document.getElementById("go").addEventListener("click", () => {
  document.getElementById("greeting").textContent = "clicked";
});`

// brokenPage breaks its own Content-Security-Policy with an inline script, logs a
// console error and throws.
const brokenPage = `<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head>
<body><p id="p">x</p><script>document.title = "inline ran";</script><script src="/broken.js"></script></body></html>`

const broken = `console.error("something went wrong");
throw new Error("boom");`

func startSite(t *testing.T) *httptest.Server {
	t.Helper()
	serve := func(ct, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", ct)
			w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; img-src data:")
			_, _ = w.Write([]byte(body))
		}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", serve("text/html; charset=utf-8", page))
	mux.Handle("GET /app.js", serve("text/javascript", app))
	mux.Handle("GET /broken", serve("text/html; charset=utf-8", brokenPage))
	mux.Handle("GET /broken.js", serve("text/javascript", broken))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestBrowserNavigatesReadsClicksAndEvaluates(t *testing.T) {
	b := browsertest.New(t)
	srv := startSite(t)

	b.Navigate(srv.URL + "/")
	b.WaitVisible("#greeting")
	require.Equal(t, "Olá", b.Text("#greeting"))

	b.Click("#go")
	require.Equal(t, "clicked", b.Text("#greeting"))

	var sum int
	b.Eval(`1 + 2`, &sum)
	require.Equal(t, 3, sum)

	var awaited string
	b.Eval(`new Promise(resolve => setTimeout(() => resolve("later"), 10))`, &awaited)
	require.Equal(t, "later", awaited)

	require.Empty(t, b.Problems())
}

func TestScreenshotsArePNGs(t *testing.T) {
	b := browsertest.New(t)
	srv := startSite(t)
	b.Navigate(srv.URL + "/")
	dir := t.TempDir()

	t.Run("Viewport", func(t *testing.T) {
		path := filepath.Join(dir, "page.png")
		b.Screenshot(path)
		img := decodePNG(t, path)
		require.Equal(t, 1280, img.Bounds().Dx())
		require.Equal(t, 800, img.Bounds().Dy())
	})

	t.Run("SVGElementRendersItsColour", func(t *testing.T) {
		path := filepath.Join(dir, "badge.png")
		b.ScreenshotElement("#badge", path)
		img := decodePNG(t, path)
		require.Equal(t, 120, img.Bounds().Dx())
		require.Equal(t, 20, img.Bounds().Dy())
		r, g, bl, _ := img.At(img.Bounds().Min.X+60, img.Bounds().Min.Y+10).RGBA()
		require.Equal(t, [3]uint32{0xffff, 0, 0}, [3]uint32{r, g, bl})
	})
}

func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NotEmpty(t, data)
	img, err := png.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	return img
}

func TestProblemsReportPolicyViolationsConsoleErrorsAndExceptions(t *testing.T) {
	b := browsertest.New(t)
	srv := startSite(t)

	b.Navigate(srv.URL + "/broken")
	b.WaitVisible("#p")
	var title string
	b.Eval(`document.title`, &title) // also flushes the events sent before its answer
	require.NotEqual(t, "inline ran", title)

	problems := strings.Join(b.Problems(), "\n")
	require.Contains(t, problems, "Content Security Policy")
	require.Contains(t, problems, "console.error: \"something went wrong\"")
	require.Contains(t, problems, "boom")
}

// fakeTB records how Chromium ends a test without ending the real one.
type fakeTB struct {
	testing.TB
	skipped, failed bool
	message         string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Skip(args ...any) {
	f.skipped, f.message = true, fmt.Sprint(args...)
	runtime.Goexit()
}

func (f *fakeTB) Fatal(args ...any) {
	f.failed, f.message = true, fmt.Sprint(args...)
	runtime.Goexit()
}

func (f *fakeTB) Fatalf(format string, args ...any) { f.Fatal(fmt.Sprintf(format, args...)) }

func TestChromiumWithoutBrowserSkipsLocallyAndFailsOnCI(t *testing.T) {
	tests := []struct {
		name      string
		ci        string
		override  string
		wantSkip  bool
		wantFail  bool
		wantInMsg string
	}{
		{name: "SkipsLocally", wantSkip: true, wantInMsg: "apt-get install -y chromium"},
		{name: "FailsOnCI", ci: "true", wantFail: true, wantInMsg: "CI is set"},
		{name: "FailsOnBadOverride", override: "/nonexistent/chromium", wantFail: true, wantInMsg: browsertest.EnvChromium},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PATH", t.TempDir())
			t.Setenv("CI", tt.ci)
			t.Setenv(browsertest.EnvChromium, tt.override)
			fake := &fakeTB{TB: t}
			done := make(chan string)
			go func() {
				defer close(done)
				done <- browsertest.Chromium(fake)
			}()
			<-done
			require.Equal(t, tt.wantSkip, fake.skipped)
			require.Equal(t, tt.wantFail, fake.failed)
			require.Contains(t, fake.message, tt.wantInMsg)
		})
	}
}

func TestChromiumFindsTheInstalledBrowser(t *testing.T) {
	path := browsertest.Chromium(t)
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.False(t, info.IsDir())
}
