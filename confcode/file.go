// Package confcode is configuration as code: a workspace's connections (their DSNs
// read from environment variables the file names), scan schedules, teams and their
// members, domains with their SLAs, datasets and team grants, notification channels
// (their URLs from environment variables too), rules and rule packs, kept in one YAML
// file a team versions in its repository. Apply plans the changes that bring the
// workspace to the file (create, update, delete per object, in a stable order), and
// makes them in one transaction through the features' services; the objects it creates
// are marked as managed, and the services refuse other changes to them
// (vigia.RefuseManaged). Export writes the workspace as such a file, secrets never
// included.
package confcode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Version is the only version of the file format.
const Version = 1

// MaxFileSize bounds the file read.
const MaxFileSize = 4 << 20

// File is the declarative file (vigia.yaml).
type File struct {
	Version     int          `yaml:"version"`
	Connections []Connection `yaml:"connections,omitempty"`
	Teams       []Team       `yaml:"teams,omitempty"`
	Domains     []Domain     `yaml:"domains,omitempty"`
	Channels    []Channel    `yaml:"channels,omitempty"`
	Rules       []Rule       `yaml:"rules,omitempty"`
	RulePacks   []RulePack   `yaml:"rule_packs,omitempty"`
}

// Connection is a connection to a customer's database; its DSN is read from the
// environment variable DSNEnv, never written in the file.
type Connection struct {
	Name              string    `yaml:"name"`
	Kind              string    `yaml:"kind"`
	DSNEnv            string    `yaml:"dsn_env"`
	DataCountry       *string   `yaml:"data_country,omitempty"`
	ScanTimezone      *string   `yaml:"scan_timezone,omitempty"`
	StatementTimeoutS *int      `yaml:"statement_timeout_s,omitempty"`
	LineageAliases    []string  `yaml:"lineage_aliases,omitempty"`
	Schedule          *Schedule `yaml:"schedule,omitempty"`
	// DSN is refused: a DSN never goes in the file.
	DSN any `yaml:"dsn,omitempty"`
}

// Schedule is a connection's daily scan schedule, in its scan time zone.
type Schedule struct {
	Enabled bool `yaml:"enabled"`
	Hour    *int `yaml:"hour,omitempty"`
	Minute  int  `yaml:"minute,omitempty"`
}

// Team is a team with its members, by e-mail.
type Team struct {
	Name    string   `yaml:"name"`
	Members []string `yaml:"members,omitempty"`
}

// Domain is a data product: its datasets ("connection/schema.table"), team grants and
// SLA.
type Domain struct {
	Name        string   `yaml:"name"`
	Description string   `yaml:"description,omitempty"`
	OwnerName   *string  `yaml:"owner_name,omitempty"`
	Restricted  bool     `yaml:"restricted,omitempty"`
	Datasets    []string `yaml:"datasets,omitempty"`
	Teams       []Grant  `yaml:"teams,omitempty"`
	SLA         *SLA     `yaml:"sla,omitempty"`
}

// Grant is a team's grant on a domain: role member (default) or manager.
type Grant struct {
	Team string `yaml:"team"`
	Role string `yaml:"role,omitempty"`
}

// SLA is a domain's service level.
type SLA struct {
	AvailabilityObjectivePct *float64           `yaml:"availability_objective_pct,omitempty"`
	RetentionDays            *int               `yaml:"retention_days,omitempty"`
	DimensionTargets         map[string]float64 `yaml:"dimension_targets,omitempty"`
	DimensionWeights         map[string]float64 `yaml:"dimension_weights,omitempty"`
}

// Channel is a webhook notification channel; its URL is read from the environment
// variable WebhookURLEnv (the URL is a secret). Its signing secret is made on creation
// and not shown until rotated.
type Channel struct {
	Name          string        `yaml:"name"`
	WebhookURLEnv string        `yaml:"webhook_url_env"`
	Team          *string       `yaml:"team,omitempty"`
	Locale        *string       `yaml:"locale,omitempty"`
	MinSeverity   string        `yaml:"min_severity,omitempty"`
	Digest        bool          `yaml:"digest,omitempty"`
	EventKinds    []string      `yaml:"event_kinds,omitempty"`
	Scope         *ChannelScope `yaml:"scope,omitempty"`
	// WebhookURL is refused: the URL is a secret and never goes in the file.
	WebhookURL any `yaml:"webhook_url,omitempty"`
}

// ChannelScope narrows a channel: domains and connections by name, datasets as
// "connection/schema.table".
type ChannelScope struct {
	Domains             []string `yaml:"domains,omitempty"`
	Connections         []string `yaml:"connections,omitempty"`
	Datasets            []string `yaml:"datasets,omitempty"`
	IssueTypes          []string `yaml:"issue_types,omitempty"`
	IncludeAutoMonitors *bool    `yaml:"include_auto_monitors,omitempty"`
}

// Rule is a data-quality rule of a dataset, known by its name within the dataset.
type Rule struct {
	Dataset  string      `yaml:"dataset"`
	Name     string      `yaml:"name"`
	Type     string      `yaml:"type"`
	Severity string      `yaml:"severity,omitempty"`
	Active   *bool       `yaml:"active,omitempty"`
	Params   *RuleParams `yaml:"params,omitempty"`
}

// RuleParams are a rule's parameters (the contract's names); a referential rule names
// its reference dataset as "connection/schema.table".
type RuleParams struct {
	Column       *string  `yaml:"column,omitempty"`
	Columns      []string `yaml:"columns,omitempty"`
	Values       []string `yaml:"values,omitempty"`
	Pattern      *string  `yaml:"pattern,omitempty"`
	Min          *float64 `yaml:"min,omitempty"`
	Max          *float64 `yaml:"max,omitempty"`
	RefDataset   *string  `yaml:"ref_dataset,omitempty"`
	RefColumn    *string  `yaml:"ref_column,omitempty"`
	MaxOrphanPct *float64 `yaml:"max_orphan_pct,omitempty"`
	MaxAgeHours  *float64 `yaml:"max_age_hours,omitempty"`
	MinRows      *float64 `yaml:"min_rows,omitempty"`
	SQL          *string  `yaml:"sql,omitempty"`
	MaxFailing   *float64 `yaml:"max_failing,omitempty"`
}

// RulePack applies a rule pack to a connection's or one dataset's columns (exactly one
// of the two); the rules it adds are the pack's, not managed one by one.
type RulePack struct {
	Pack       string  `yaml:"pack"`
	Connection *string `yaml:"connection,omitempty"`
	Dataset    *string `yaml:"dataset,omitempty"`
}

// FileError is a problem of the file, at a line when known. Its text never repeats a
// value of the file (keys and object names may appear).
type FileError struct {
	Line int
	Msg  string
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

var (
	unknownFieldRE = regexp.MustCompile(`^line (\d+): field (\S+) not found in type`)
	lineRE         = regexp.MustCompile(`^line (\d+): `)
	envNameRE      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
)

// Parse reads a file strictly: an unknown key, a value of the wrong type, a DSN or URL
// written in the file, a missing or duplicated name are errors, all of them reported
// (every FileError joined), and nothing is applied.
func Parse(r io.Reader) (File, error) {
	body, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return File{}, &FileError{Msg: "cannot read the file"}
	}
	if len(body) > MaxFileSize {
		return File{}, &FileError{Msg: fmt.Sprintf("the file is over %d bytes", MaxFileSize)}
	}
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(body))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return File{}, &FileError{Msg: "the file is empty"}
		}
		return File{}, decodeError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return File{}, &FileError{Msg: "the file holds more than one YAML document"}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(body, &root); err != nil {
		return File{}, decodeError(err)
	}
	if errs := check(f, lines(&root)); len(errs) > 0 {
		return File{}, errors.Join(errs...)
	}
	return f, nil
}

// decodeError rewrites the YAML library's errors without the values they quote.
func decodeError(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		errs := make([]error, 0, len(te.Errors))
		for _, m := range te.Errors {
			if u := unknownFieldRE.FindStringSubmatch(m); u != nil {
				n, _ := strconv.Atoi(u[1])
				errs = append(errs, &FileError{Line: n, Msg: fmt.Sprintf("unknown key %q", u[2])})
				continue
			}
			if l := lineRE.FindStringSubmatch(m); l != nil {
				n, _ := strconv.Atoi(l[1])
				errs = append(errs, &FileError{Line: n, Msg: "a value of the wrong type"})
				continue
			}
			errs = append(errs, &FileError{Msg: "a value of the wrong type"})
		}
		return errors.Join(errs...)
	}
	if l := lineRE.FindStringSubmatch(err.Error()); l != nil {
		n, _ := strconv.Atoi(l[1])
		return &FileError{Line: n, Msg: "not valid YAML"}
	}
	return &FileError{Msg: "not valid YAML"}
}

// lines maps "section.index" (connections.0) to the line where that item starts.
func lines(root *yaml.Node) map[string]int {
	out := map[string]int{}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return out
	}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		key, val := m.Content[i].Value, m.Content[i+1]
		out[key] = m.Content[i].Line
		if val.Kind == yaml.SequenceNode {
			for j, item := range val.Content {
				out[key+"."+strconv.Itoa(j)] = item.Line
			}
		}
	}
	return out
}

// check validates what the types cannot: the version, names present and unique per
// kind, environment variable names, no secret written in the file.
func check(f File, at map[string]int) []error {
	var errs []error
	bad := func(key string, format string, args ...any) {
		errs = append(errs, &FileError{Line: at[key], Msg: fmt.Sprintf(format, args...)})
	}
	if f.Version != Version {
		bad("version", "version must be %d", Version)
	}
	names := func(section string, n int, name func(i int) string) {
		seen := map[string]bool{}
		for i := 0; i < n; i++ {
			key := section + "." + strconv.Itoa(i)
			nm := strings.TrimSpace(name(i))
			switch {
			case nm == "":
				bad(key, "%s item without a name", section)
			case seen[nm]:
				bad(key, "%s: the name %q appears twice", section, nm)
			}
			seen[nm] = true
		}
	}
	names("connections", len(f.Connections), func(i int) string { return f.Connections[i].Name })
	names("teams", len(f.Teams), func(i int) string { return f.Teams[i].Name })
	names("domains", len(f.Domains), func(i int) string { return f.Domains[i].Name })
	names("channels", len(f.Channels), func(i int) string { return f.Channels[i].Name })
	names("rules", len(f.Rules), func(i int) string { return f.Rules[i].Dataset + "\x00" + f.Rules[i].Name })
	for i, c := range f.Connections {
		key := "connections." + strconv.Itoa(i)
		if c.DSN != nil {
			bad(key, "connection %q: a DSN never goes in the file; name an environment variable with dsn_env", c.Name)
		}
		if !envNameRE.MatchString(c.DSNEnv) {
			bad(key, "connection %q: dsn_env must name an environment variable", c.Name)
		}
		if c.Kind == "" {
			bad(key, "connection %q: kind is required", c.Name)
		}
	}
	for i, c := range f.Channels {
		key := "channels." + strconv.Itoa(i)
		if c.WebhookURL != nil {
			bad(key, "channel %q: a webhook URL never goes in the file; name an environment variable with webhook_url_env", c.Name)
		}
		if !envNameRE.MatchString(c.WebhookURLEnv) {
			bad(key, "channel %q: webhook_url_env must name an environment variable", c.Name)
		}
	}
	for i, r := range f.Rules {
		key := "rules." + strconv.Itoa(i)
		if r.Dataset == "" || r.Type == "" {
			bad(key, "rule %q: dataset and type are required", r.Name)
		}
	}
	for i, p := range f.RulePacks {
		key := "rule_packs." + strconv.Itoa(i)
		if p.Pack == "" || (p.Connection == nil) == (p.Dataset == nil) {
			bad(key, "rule_packs: pack and exactly one of connection or dataset are required")
		}
	}
	return errs
}

// Env is the environment the file's variables are read from (os.LookupEnv).
type Env func(name string) (string, bool)

// secrets reads every variable the file names, and reports all missing or empty ones
// by name, never by value.
func secrets(f File, env Env) (map[string]string, error) {
	out := map[string]string{}
	var missing []string
	for _, name := range f.envNames() {
		v, ok := env(name)
		if !ok || v == "" {
			missing = append(missing, name)
			continue
		}
		out[name] = v
	}
	if len(missing) > 0 {
		return nil, &FileError{Msg: "environment variables not set: " + strings.Join(missing, ", ")}
	}
	return out, nil
}

func (f File) envNames() []string {
	set := map[string]bool{}
	for _, c := range f.Connections {
		set[c.DSNEnv] = true
	}
	for _, c := range f.Channels {
		set[c.WebhookURLEnv] = true
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Encode writes f as YAML.
func Encode(w io.Writer, f File) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return err
	}
	return enc.Close()
}
