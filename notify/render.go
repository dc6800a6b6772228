package notify

import (
	"fmt"
	"strings"
	"time"

	"github.com/vigia-data/vigia/i18n"
	"github.com/vigia-data/vigia/webhook/delivery"
)

// message is text to render in a language: titles and bodies come from the catalogue
// keys <key>.title and <key>.body with vars, so the in-app list can render a stored
// notification in its reader's language and a delivery in its channel's.
type message struct {
	Key  string         `json:"key"`
	Vars map[string]any `json:"vars"`
	// Lines are appended to the body, one per line (alert titles).
	Lines []line `json:"lines,omitempty"`
	// Words names the vars whose values are codes (verdicts, severities) shown as words
	// of the language.
	Words []string `json:"words,omitempty"`
}

// line is one line appended to a body: a catalogue key when the catalogue has it, else
// the stored text (issue titles are stored in Portuguese).
type line struct {
	Key    string         `json:"key,omitempty"`
	Params map[string]any `json:"params,omitempty"`
	Text   string         `json:"text"`
}

// maxBodyLines bounds the alert titles listed in a body.
const maxBodyLines = 5

// lang picks the language of a channel's deliveries: its own locale, else the
// workspace's default, else Portuguese.
func lang(ch *Channel, ws WorkspaceInfo) string {
	if ch != nil && ch.Locale != nil {
		if l := i18n.Normalize(*ch.Locale); l != "" {
			return l
		}
	}
	if ws.Locale != nil {
		if l := i18n.Normalize(*ws.Locale); l != "" {
			return l
		}
	}
	return i18n.PT
}

// render returns a message's title and body in lang.
func (s *Service) render(lang string, m message) (title, body string) {
	vars := m.Vars
	if len(m.Words) > 0 {
		vars = make(map[string]any, len(m.Vars))
		for k, v := range m.Vars {
			vars[k] = v
		}
		for _, k := range m.Words {
			if v, ok := vars[k].(string); ok {
				vars[k] = s.word(lang, v)
			}
		}
	}
	title = s.msgs.Message(lang, m.Key+".title", vars)
	body = s.msgs.Message(lang, m.Key+".body", vars)
	if len(m.Lines) == 0 {
		return title, body
	}
	var b strings.Builder
	b.WriteString(body)
	for i, l := range m.Lines {
		if i == maxBodyLines {
			b.WriteString("\n" + s.msgs.Message(lang, "webhook.more_lines", map[string]any{"count": len(m.Lines) - maxBodyLines}))
			break
		}
		text := l.Text
		if l.Key != "" && s.msgs.Has(l.Key) {
			if t := s.msgs.Message(lang, l.Key, l.Params); !i18n.IsIncomplete(t) {
				text = t
			}
		}
		b.WriteString("\n- " + text)
	}
	return title, b.String()
}

// body assembles a delivery body in lang.
func (s *Service) body(lang string, event, code, workspaceID string, at time.Time, params map[string]any, m message) delivery.Body {
	title, text := s.render(lang, m)
	return delivery.Body{Event: event, WorkspaceID: workspaceID, OccurredAt: at.UTC(), Title: title, Body: text,
		Code: code, Params: params}
}

// word is a code (verdict, severity) in words of lang, or the code itself.
func (s *Service) word(lang, code string) string {
	key := "webhook.word." + code
	if s.msgs.Has(key) {
		return s.msgs.Message(lang, key, nil)
	}
	return code
}

func scoreText(score *float64) string {
	if score == nil {
		return "—"
	}
	return fmt.Sprintf("%.1f", *score)
}

// datasetTrustURL and domainTrustURL point to trust facts (they need a session or an
// API token).
func (s *Service) datasetTrustURL(datasetID string) string {
	return strings.TrimRight(s.cfg.PublicURL, "/") + "/api/v1/datasets/" + datasetID + "/trust-facts"
}

func (s *Service) domainTrustURL(domainID string) string {
	return strings.TrimRight(s.cfg.PublicURL, "/") + "/api/v1/domains/" + domainID + "/trust-facts"
}

// WorkspaceLang is the language of what the workspace receives outside a channel (its
// default locale, else Portuguese).
func WorkspaceLang(ws WorkspaceInfo) string { return lang(nil, ws) }

// IssueTitle is an issue's title in lang: the catalogue's when it has the issue's title
// key, else the stored title.
func IssueTitle(msgs *i18n.Catalog, lang string, is AlertIssue) string {
	if is.TitleKey != "" && msgs.Has(is.TitleKey) {
		if s := msgs.Message(lang, is.TitleKey, is.Params); !i18n.IsIncomplete(s) {
			return s
		}
	}
	return is.Title
}
