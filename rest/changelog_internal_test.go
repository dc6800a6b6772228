package rest

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// changelogPath is docs/CHANGELOG.md seen from this package.
const changelogPath = "../docs/CHANGELOG.md"

// changelogTypes are the contract's changelog types (part 9), as the file heads them.
var changelogTypes = []string{"Added", "Changed", "Deprecated", "Security"}

// release is one "## version" section of the changelog: its entries by type.
type release struct {
	Version string
	Entries map[string][]string
}

// parseChangelog reads the releases of the changelog: "## version" opens a release,
// "### Type" one of its types, "- " an entry (continued by indented lines).
func parseChangelog(text string) ([]release, error) {
	var out []release
	typ := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			fields := strings.Fields(strings.TrimPrefix(line, "## "))
			if len(fields) == 0 {
				return nil, fmt.Errorf("line %d: a release without a version", n)
			}
			out = append(out, release{Version: fields[0], Entries: map[string][]string{}})
			typ = ""
		case strings.HasPrefix(line, "### "):
			typ = strings.TrimSpace(strings.TrimPrefix(line, "### "))
			if len(out) == 0 || !slices.Contains(changelogTypes, typ) {
				return nil, fmt.Errorf("line %d: %q is not a changelog type of a release (%v)", n, typ, changelogTypes)
			}
			if _, dup := out[len(out)-1].Entries[typ]; dup {
				return nil, fmt.Errorf("line %d: %s twice in release %s", n, typ, out[len(out)-1].Version)
			}
			out[len(out)-1].Entries[typ] = nil
		case typ != "" && strings.HasPrefix(line, "- "):
			r := &out[len(out)-1]
			r.Entries[typ] = append(r.Entries[typ], strings.TrimPrefix(line, "- "))
		case typ != "" && strings.HasPrefix(line, "  ") && len(out[len(out)-1].Entries[typ]) > 0:
			e := out[len(out)-1].Entries[typ]
			e[len(e)-1] += " " + strings.TrimSpace(line)
		}
	}
	return out, sc.Err()
}

// announcement is a deprecated operation as the changelog announces it.
type announcement struct {
	Release, ID, Method, Path string
	Since, Sunset             time.Time
	Security                  bool // the release names the operation under Security too
}

var announced = regexp.MustCompile("^Operation `([A-Za-z0-9_]+)` \\(`([A-Z]+) ([^`]+)`\\) is deprecated since " +
	`(\d{4}-\d{2}-\d{2}); sunset (\d{4}-\d{2}-\d{2})\.`)

// announcements returns the operation deprecations of every release.
func announcements(releases []release) ([]announcement, error) {
	var out []announcement
	for _, r := range releases {
		for _, e := range r.Entries["Deprecated"] {
			if !strings.HasPrefix(e, "Operation ") {
				continue
			}
			m := announced.FindStringSubmatch(e)
			if m == nil {
				return nil, fmt.Errorf("release %s: an operation's deprecation is not in the announced form: %q", r.Version, e)
			}
			since, err1 := time.Parse(time.DateOnly, m[4])
			sunset, err2 := time.Parse(time.DateOnly, m[5])
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("release %s: dates of %s: %v %v", r.Version, m[1], err1, err2)
			}
			security := slices.ContainsFunc(r.Entries["Security"], func(s string) bool { return strings.Contains(s, "`"+m[1]+"`") })
			out = append(out, announcement{Release: r.Version, ID: m[1], Method: m[2], Path: m[3], Since: since, Sunset: sunset,
				Security: security})
		}
	}
	return out, nil
}

func readChangelog(t *testing.T) []release {
	t.Helper()
	b, err := os.ReadFile(changelogPath)
	if err != nil {
		t.Fatal(err)
	}
	releases, err := parseChangelog(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return releases
}

// The changelog has one section per release, newest first and equal to the server's
// api_version, each with the contract's types only.
func TestChangelogReleases(t *testing.T) {
	releases := readChangelog(t)
	if len(releases) == 0 || releases[0].Version != APIVersion {
		t.Fatalf("the newest release is not api_version %s: %+v", APIVersion, releases)
	}
	seen := map[string]bool{}
	for _, r := range releases {
		if seen[r.Version] {
			t.Errorf("release %s twice", r.Version)
		}
		seen[r.Version] = true
		if len(r.Entries) == 0 {
			t.Errorf("release %s has no entries", r.Version)
		}
	}
	if _, err := announcements(releases); err != nil {
		t.Fatal(err)
	}
	// The parser refuses what the contract does not have.
	for _, bad := range []string{"## 1.0.0\n### Removed\n- x\n", "### Added\n- x\n", "## 1.0.0\n### Added\n### Added\n"} {
		if _, err := parseChangelog(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	if _, err := announcements([]release{{Version: "1", Entries: map[string][]string{"Deprecated": {"Operation `x` goes soon."}}}}); err == nil {
		t.Error("an operation's deprecation without dates was accepted")
	}
}

// Every operation the server marks deprecated is announced in the changelog with the
// same dates, at least 180 days ahead unless for security, and every announced operation
// is marked.
func TestChangelogAnnouncesEveryDeprecation(t *testing.T) {
	list, err := announcements(readChangelog(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range checkAnnouncements(New(Config{}, Deps{}, nil).ops, list) {
		t.Error(p)
	}
}

// checkAnnouncements returns a line for each deprecated operation of ops the list does
// not announce as it is, each announcement no operation of ops carries, and each window
// under 180 days that is not a security fix.
func checkAnnouncements(ops []*operation, list []announcement) []string {
	var out []string
	errorf := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	byID := map[string]announcement{}
	for _, a := range list {
		if _, dup := byID[a.ID]; dup {
			errorf("%s announced twice", a.ID)
		}
		byID[a.ID] = a
		if !a.Security && a.Sunset.Sub(a.Since) < 180*24*time.Hour {
			errorf("%s: sunset %s is less than 180 days after %s and not a security fix", a.ID,
				a.Sunset.Format(time.DateOnly), a.Since.Format(time.DateOnly))
		}
	}
	marked := map[string]bool{}
	for _, op := range ops {
		if op.Deprecated == nil {
			continue
		}
		marked[op.ID] = true
		a, ok := byID[op.ID]
		switch {
		case !ok:
			errorf("%s (%s %s) is deprecated but the changelog does not announce it", op.ID, op.Method, op.Path)
		case a.Method != op.Method || a.Path != op.Path:
			errorf("%s: announced as %s %s, served as %s %s", op.ID, a.Method, a.Path, op.Method, op.Path)
		case !sameDay(a.Since, op.Deprecated.Since) || !sameDay(a.Sunset, op.Deprecated.Sunset):
			errorf("%s: announced %s → %s, served %s → %s", op.ID, a.Since.Format(time.DateOnly), a.Sunset.Format(time.DateOnly),
				op.Deprecated.Since.UTC().Format(time.DateOnly), op.Deprecated.Sunset.UTC().Format(time.DateOnly))
		case !strings.Contains(op.Deprecated.Link, "CHANGELOG"):
			errorf("%s: Link %q does not point to the changelog", op.ID, op.Deprecated.Link)
		}
	}
	for _, a := range list {
		if !marked[a.ID] {
			errorf("the changelog announces %s, which the server does not mark deprecated", a.ID)
		}
	}
	return out
}

func sameDay(a, b time.Time) bool {
	return a.UTC().Format(time.DateOnly) == b.UTC().Format(time.DateOnly)
}

// The check fails on a deprecation the changelog does not announce, one announced with
// other dates, a window under 180 days, and an announcement of a live operation.
func TestChangelogCheckCatchesEveryMismatch(t *testing.T) {
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	op := &operation{ID: "legacy", Method: "GET", Path: "/api/v1/legacy",
		Deprecated: &deprecation{Since: day("2026-06-01"), Sunset: day("2027-05-31"), Link: "https://x/CHANGELOG.md"}}
	good := announcement{ID: "legacy", Method: "GET", Path: "/api/v1/legacy", Since: day("2026-06-01"), Sunset: day("2027-05-31")}
	short := good
	short.Sunset = day("2026-07-01")
	moved := good
	moved.Since = day("2026-06-02")
	cases := map[string]struct {
		ops  []*operation
		list []announcement
	}{
		"not announced":        {[]*operation{op}, nil},
		"other dates":          {[]*operation{op}, []announcement{moved}},
		"under 180 days":       {[]*operation{op}, []announcement{short}},
		"announced, not there": {nil, []announcement{good}},
	}
	for name, c := range cases {
		if len(checkAnnouncements(c.ops, c.list)) == 0 {
			t.Errorf("%s: not caught", name)
		}
	}
	if p := checkAnnouncements([]*operation{op}, []announcement{good}); len(p) != 0 {
		t.Errorf("an announced deprecation was refused: %v", p)
	}
	security := short
	security.Security = true
	o := *op
	d := *op.Deprecated
	d.Sunset = short.Sunset
	o.Deprecated = &d
	if p := checkAnnouncements([]*operation{&o}, []announcement{security}); len(p) != 0 {
		t.Errorf("a security fix's short window was refused: %v", p)
	}
}
