package report

import (
	"bytes"
	"fmt"
	"html"
	"html/template"
	"strings"
	"time"
)

// pageTemplate is the HTML export: one page, no external resource (styles inline,
// charts as inline SVG), with the ai-generated marker in a meta element and in the footer.
var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="{{.Lang}}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="ai-generated" content="{{.AIGenerated}}">
<meta name="ai-model" content="{{.AIModel}}">
<meta name="generated-at" content="{{.GeneratedAt}}">
<title>{{.Title}}</title>
<link rel="icon" href="data:,">
<style>
body{font-family:"DejaVu Sans",Arial,sans-serif;color:#1d2733;margin:0;background:#f4f6f8}
main{max-width:920px;margin:0 auto;padding:32px 40px;background:#fff}
h1{font-size:26px;margin:0 0 8px}
h2{font-size:19px;border-bottom:2px solid #d7dee6;padding-bottom:4px;margin-top:28px}
p,li{font-size:15px;line-height:1.5}
.charts{display:flex;flex-wrap:wrap;gap:16px;margin:18px 0}
figure{margin:0;border:1px solid #d7dee6;border-radius:6px;padding:8px}
figcaption{font-size:13px;color:#4a5a6a;margin-bottom:4px}
.marker{font-size:12px;color:#4a5a6a;border-top:1px solid #d7dee6;margin-top:32px;padding-top:8px}
.ai{display:inline-block;font-size:12px;background:#e8f1ea;color:#1f5130;border-radius:4px;padding:2px 8px}
</style>
</head>
<body>
<main>
<span class="ai" data-ai-generated="{{.AIGenerated}}">ai-generated: {{.AIGenerated}}</span>
{{.Head}}
<div class="charts">
<figure id="chart-trend"><figcaption>{{.TrendCaption}}</figcaption>{{.Trend}}</figure>
<figure id="chart-dimensions"><figcaption>{{.DimsCaption}}</figcaption>{{.Dims}}</figure>
<figure id="chart-incidents"><figcaption>{{.TimelineCaption}}</figcaption>{{.Timeline}}</figure>
</div>
{{.Body}}
<p class="marker">ai-generated: {{.AIGenerated}} · ai-model: {{.AIModel}} · generated-at: {{.GeneratedAt}} · Vigia</p>
</main>
</body>
</html>
`))

type page struct {
	Lang, Title, AIModel, GeneratedAt          string
	AIGenerated                                bool
	TrendCaption, DimsCaption, TimelineCaption string
	Head, Trend, Dims, Timeline, Body          template.HTML
}

func modelName(r Report) string {
	if r.AIModel == nil {
		return "none"
	}
	return *r.AIModel
}

// HTML renders the report as a self-contained page: its Markdown as HTML, the score
// trend, dimension bars and incident timeline as inline SVG.
func HTML(r Report) ([]byte, error) {
	w := wordsOf(r.Lang())
	// The title and period, then the charts, then the sections.
	head, body := r.ContentMD, ""
	if i := strings.Index(r.ContentMD, "\n## "); i >= 0 {
		head, body = r.ContentMD[:i], r.ContentMD[i+1:]
	}
	p := page{Lang: r.Lang(), Title: r.Title, AIGenerated: r.AIGenerated, AIModel: modelName(r),
		GeneratedAt: r.GeneratedAt.UTC().Format(time.RFC3339), TrendCaption: w.f("chart_trend"), DimsCaption: w.f("chart_dims"),
		TimelineCaption: w.f("chart_timeline"),
		// The charts and the body are built here from escaped text and numbers only.
		Trend: template.HTML(trendSVG(r.Facts)), Dims: template.HTML(dimensionSVG(r.Facts, w)), //nolint:gosec // escaped above
		Timeline: template.HTML(timelineSVG(r.Facts)), Head: template.HTML(markdownHTML(head)), Body: template.HTML(markdownHTML(body))} //nolint:gosec // escaped
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, p); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// markdownHTML renders the Markdown Write produces (headings, paragraphs, bullet lists,
// one emphasised line), escaping all text.
func markdownHTML(md string) string {
	var b strings.Builder
	inList := false
	closeList := func() {
		if inList {
			b.WriteString("</ul>\n")
			inList = false
		}
	}
	for _, l := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(l, "## "):
			closeList()
			b.WriteString("<h2>" + html.EscapeString(l[3:]) + "</h2>\n")
		case strings.HasPrefix(l, "# "):
			closeList()
			b.WriteString("<h1>" + html.EscapeString(l[2:]) + "</h1>\n")
		case strings.HasPrefix(l, "- "):
			if !inList {
				b.WriteString("<ul>\n")
				inList = true
			}
			b.WriteString("<li>" + html.EscapeString(l[2:]) + "</li>\n")
		case strings.TrimSpace(l) == "":
			closeList()
		case len(l) > 2 && strings.HasPrefix(l, "_") && strings.HasSuffix(l, "_"):
			closeList()
			b.WriteString("<p><em>" + html.EscapeString(l[1:len(l)-1]) + "</em></p>\n")
		default:
			closeList()
			b.WriteString("<p>" + html.EscapeString(l) + "</p>\n")
		}
	}
	closeList()
	return b.String()
}

// Chart geometry shared by the SVG and the PDF: a plot of width × height.
const (
	chartW = 260.0
	chartH = 140.0
)

// trendGeometry places the trend points in the plot (y 0-100 bottom-up).
func trendGeometry(f Facts) [][2]float64 {
	n := len(f.Trend)
	pts := make([][2]float64, 0, n)
	for i, p := range f.Trend {
		x := chartW / 2
		if n > 1 {
			x = 20 + float64(i)*(chartW-30)/float64(n-1)
		}
		pts = append(pts, [2]float64{x, chartH - 10 - p.Score/100*(chartH-20)})
	}
	return pts
}

func trendSVG(f Facts) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img">`, chartW, chartH, chartW, chartH)
	fmt.Fprintf(&b, `<line x1="15" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#9aa8b6"/>`, chartH-10, chartW-5, chartH-10)
	fmt.Fprintf(&b, `<line x1="15" y1="10" x2="15" y2="%.1f" stroke="#9aa8b6"/>`, chartH-10)
	pts := trendGeometry(f)
	if len(pts) > 1 {
		var path strings.Builder
		for i, p := range pts {
			if i > 0 {
				path.WriteString(" ")
			}
			fmt.Fprintf(&path, "%.1f,%.1f", p[0], p[1])
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="#2a6fdb" stroke-width="2" points="%s"/>`, path.String())
	}
	for _, p := range pts {
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="#2a6fdb"/>`, p[0], p[1])
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// dimensionColor is green from 90, amber from 70, red below.
func dimensionColor(v float64) string {
	switch {
	case v >= 90:
		return "#2e8b57"
	case v >= 70:
		return "#d9a400"
	}
	return "#c0392b"
}

func dimensionSVG(f Facts, w words) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img">`, chartW, chartH, chartW, chartH)
	for i, d := range f.Dimensions {
		y := 8 + float64(i)*26
		fmt.Fprintf(&b, `<text x="0" y="%.1f" font-size="11" fill="#1d2733">%s</text>`, y+12, html.EscapeString(d.Name))
		fmt.Fprintf(&b, `<rect x="86" y="%.1f" width="130" height="14" fill="#eef1f4"/>`, y+2)
		if d.Score != nil {
			fmt.Fprintf(&b, `<rect x="86" y="%.1f" width="%.1f" height="14" fill="%s"/>`, y+2, *d.Score/100*130, dimensionColor(*d.Score))
			fmt.Fprintf(&b, `<text x="220" y="%.1f" font-size="10" fill="#1d2733">%s</text>`, y+13, html.EscapeString(w.num(*d.Score)))
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// timelineGeometry places each incident as a bar from its opening to its resolution
// (or the report's end) on the window's axis: x from, x to, row.
func timelineGeometry(f Facts) [][3]float64 {
	span := f.Until.Sub(f.Since).Seconds()
	if span <= 0 {
		return nil
	}
	x := func(t time.Time) float64 {
		v := t.Sub(f.Since).Seconds() / span
		v = max(0, min(1, v))
		return 10 + v*(chartW-20)
	}
	out := make([][3]float64, 0, len(f.Incidents))
	for i, in := range f.Incidents {
		end := f.Until
		if in.ResolvedAt != nil {
			end = *in.ResolvedAt
		}
		x1, x2 := x(in.OpenedAt), x(end)
		if x2-x1 < 3 {
			x2 = x1 + 3
		}
		out = append(out, [3]float64{x1, x2, float64(i % 12)})
	}
	return out
}

func severityColor(s string) string {
	if s == "critical" {
		return "#c0392b"
	}
	return "#d9a400"
}

func timelineSVG(f Facts) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img">`, chartW, chartH, chartW, chartH)
	fmt.Fprintf(&b, `<line x1="10" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#9aa8b6"/>`, chartH-14, chartW-10, chartH-14)
	fmt.Fprintf(&b, `<text x="10" y="%.1f" font-size="9" fill="#4a5a6a">%s</text>`, chartH-2, day(f.Since))
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="9" fill="#4a5a6a" text-anchor="end">%s</text>`, chartW-10, chartH-2, day(f.Until))
	for i, g := range timelineGeometry(f) {
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="7" rx="2" fill="%s"/>`, g[0], 6+g[2]*9.5, g[1]-g[0], severityColor(f.Incidents[i].Severity))
	}
	b.WriteString(`</svg>`)
	return b.String()
}
