package product

import (
	"bytes"
	"fmt"
	"html"
	"strconv"
	"unicode/utf8"
)

// badgeColors are the right-hand colours by verdict.
var badgeColors = map[string]string{
	"pass":    "#2e7d32",
	"warn":    "#b26a00",
	"fail":    "#c62828",
	"unknown": "#616161",
}

// badgeLabel is the badge's left-hand text.
const badgeLabel = "qualidade"

// Badge renders the SVG badge of a domain: "qualidade | <verdict> · <score>" coloured by
// the verdict (score omitted when null). The text widths are estimated from the
// character count in the badge's 11 px sans-serif font; the document is standalone
// SVG 1.1 with a title for screen readers, and carries no script.
func Badge(verdict string, score *float64) []byte {
	color, ok := badgeColors[verdict]
	if !ok {
		verdict, color = "unknown", badgeColors["unknown"]
	}
	value := verdict
	if score != nil {
		value += " · " + strconv.FormatFloat(round2(*score), 'f', -1, 64)
	}
	lw, vw := textWidth(badgeLabel)+12, textWidth(value)+12
	w := lw + vw
	var b bytes.Buffer
	label, val := html.EscapeString(badgeLabel), html.EscapeString(value)
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="20" viewBox="0 0 %d 20" role="img" aria-label="%s: %s">`,
		w, w, label, val)
	fmt.Fprintf(&b, `<title>%s: %s</title>`, label, val)
	b.WriteString(`<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>`)
	fmt.Fprintf(&b, `<clipPath id="r"><rect width="%d" height="20" rx="3" fill="#fff"/></clipPath>`, w)
	fmt.Fprintf(&b, `<g clip-path="url(#r)"><rect width="%d" height="20" fill="#555"/><rect x="%d" width="%d" height="20" fill="%s"/>`+
		`<rect width="%d" height="20" fill="url(#s)"/></g>`, lw, lw, vw, color, w)
	fmt.Fprintf(&b, `<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">`+
		`<text x="%d" y="14">%s</text><text x="%d" y="14">%s</text></g></svg>`, lw/2, label, lw+vw/2, val)
	return b.Bytes()
}

// textWidth estimates the width of s in 11 px Verdana: about 7 px a character.
func textWidth(s string) int { return 7 * utf8.RuneCountInString(s) }
