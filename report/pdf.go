package report

import (
	"bytes"
	_ "embed" // the DejaVu fonts of the PDF export
	"strings"
	"time"

	"github.com/go-pdf/fpdf"
)

// DejaVu Sans (Bitstream Vera licence, fonts/LICENSE-DejaVu.txt) carries every accent
// of Portuguese and Spanish.
var (
	//go:embed fonts/DejaVuSans.ttf
	dejaVuSans []byte
	//go:embed fonts/DejaVuSans-Bold.ttf
	dejaVuSansBold []byte
)

const pdfFont = "DejaVu"

// PDF renders the report on A4: the same charts as the HTML export drawn as vectors,
// then the Markdown's headings, paragraphs and lists; the ai-generated marker is in
// the document's keywords and subject and in every page's footer.
func PDF(r Report) ([]byte, error) {
	w := wordsOf(r.Lang())
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.AddUTF8FontFromBytes(pdfFont, "", dejaVuSans)
	pdf.AddUTF8FontFromBytes(pdfFont, "B", dejaVuSansBold)
	// Deterministic bytes: the document's dates are the report's.
	pdf.SetCreationDate(r.GeneratedAt)
	pdf.SetModificationDate(r.GeneratedAt)
	marker := "ai-generated: " + boolWord(r.AIGenerated) + " · ai-model: " + modelName(r) + " · generated-at: " + r.GeneratedAt.UTC().Format(time.RFC3339)
	pdf.SetTitle(r.Title, true)
	pdf.SetSubject(marker, true)
	pdf.SetKeywords("ai-generated="+boolWord(r.AIGenerated)+" ai-model="+modelName(r), true)
	pdf.SetCreator("Vigia", true)
	pdf.SetMargins(18, 16, 18)
	pdf.SetAutoPageBreak(true, 18)
	pdf.SetFooterFunc(func() {
		pdf.SetY(-13)
		pdf.SetFont(pdfFont, "", 7.5)
		pdf.SetTextColor(90, 100, 110)
		pdf.CellFormat(0, 5, marker, "", 0, "C", false, 0, "")
	})
	pdf.AddPage()
	pdf.SetTextColor(29, 39, 51)

	lines := strings.Split(r.ContentMD, "\n")
	// The title and the period first, then the charts, then the sections.
	i := 0
	for ; i < len(lines) && !strings.HasPrefix(lines[i], "## "); i++ {
		pdfLine(pdf, lines[i])
	}
	pdfCharts(pdf, r.Facts, w)
	for ; i < len(lines); i++ {
		pdfLine(pdf, lines[i])
	}
	if pdf.Err() {
		return nil, pdf.Error()
	}
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func boolWord(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func pdfLine(pdf *fpdf.Fpdf, l string) {
	switch {
	case strings.HasPrefix(l, "# "):
		pdf.SetFont(pdfFont, "B", 17)
		pdf.MultiCell(0, 8, l[2:], "", "L", false)
		pdf.Ln(1)
	case strings.HasPrefix(l, "## "):
		pdf.Ln(3)
		pdf.SetFont(pdfFont, "B", 13)
		pdf.MultiCell(0, 7, l[3:], "B", "L", false)
		pdf.Ln(1.5)
	case strings.HasPrefix(l, "- "):
		pdf.SetFont(pdfFont, "", 10)
		x := pdf.GetX()
		pdf.CellFormat(5, 5.5, "•", "", 0, "L", false, 0, "")
		pdf.MultiCell(0, 5.5, l[2:], "", "L", false)
		pdf.SetX(x)
	case strings.TrimSpace(l) == "":
		pdf.Ln(1.5)
	case len(l) > 2 && strings.HasPrefix(l, "_") && strings.HasSuffix(l, "_"):
		pdf.SetFont(pdfFont, "", 9)
		pdf.SetTextColor(74, 90, 106)
		pdf.MultiCell(0, 5, l[1:len(l)-1], "", "L", false)
		pdf.SetTextColor(29, 39, 51)
	default:
		pdf.SetFont(pdfFont, "", 10)
		pdf.MultiCell(0, 5.5, l, "", "L", false)
	}
}

// pdfCharts draws the three charts side by side, scaled from the SVG geometry.
func pdfCharts(pdf *fpdf.Fpdf, f Facts, w words) {
	const scale = 0.2 // SVG units to mm: 260 × 140 → 52 × 28
	pdf.Ln(3)
	top := pdf.GetY()
	left := 18.0
	caption := func(x float64, s string) {
		pdf.SetFont(pdfFont, "", 8)
		pdf.SetXY(x, top)
		pdf.CellFormat(chartW*scale, 4, s, "", 0, "L", false, 0, "")
	}
	y0 := top + 5
	box := func(x float64) {
		pdf.SetDrawColor(215, 222, 230)
		pdf.Rect(x-1, y0-1, chartW*scale+2, chartH*scale+2, "D")
	}

	// Score trend.
	x0 := left
	caption(x0, w.f("chart_trend"))
	box(x0)
	pdf.SetDrawColor(154, 168, 182)
	pdf.Line(x0+15*scale, y0+(chartH-10)*scale, x0+(chartW-5)*scale, y0+(chartH-10)*scale)
	pdf.Line(x0+15*scale, y0+10*scale, x0+15*scale, y0+(chartH-10)*scale)
	pdf.SetDrawColor(42, 111, 219)
	pdf.SetFillColor(42, 111, 219)
	pdf.SetLineWidth(0.4)
	pts := trendGeometry(f)
	for i, p := range pts {
		if i > 0 {
			q := pts[i-1]
			pdf.Line(x0+q[0]*scale, y0+q[1]*scale, x0+p[0]*scale, y0+p[1]*scale)
		}
		pdf.Circle(x0+p[0]*scale, y0+p[1]*scale, 0.6, "F")
	}
	pdf.SetLineWidth(0.2)

	// Dimension bars.
	x0 = left + chartW*scale + 6
	caption(x0, w.f("chart_dims"))
	box(x0)
	for i, d := range f.Dimensions {
		y := y0 + (8+float64(i)*26)*scale
		pdf.SetFont(pdfFont, "", 6.5)
		pdf.SetXY(x0, y+1*scale)
		pdf.CellFormat(88*scale, 14*scale, d.Name, "", 0, "L", false, 0, "")
		pdf.SetFillColor(238, 241, 244)
		pdf.Rect(x0+90*scale, y+2*scale, 140*scale, 14*scale, "F")
		if d.Score != nil {
			r, g, b := rgb(dimensionColor(*d.Score))
			pdf.SetFillColor(r, g, b)
			pdf.Rect(x0+90*scale, y+2*scale, *d.Score/100*140*scale, 14*scale, "F")
			pdf.SetXY(x0+231*scale, y+1*scale)
			pdf.CellFormat(30*scale, 14*scale, w.num(*d.Score), "", 0, "L", false, 0, "")
		}
	}

	// Incident timeline.
	x0 = left + 2*(chartW*scale+6)
	caption(x0, w.f("chart_timeline"))
	box(x0)
	pdf.SetDrawColor(154, 168, 182)
	pdf.Line(x0+10*scale, y0+(chartH-14)*scale, x0+(chartW-10)*scale, y0+(chartH-14)*scale)
	pdf.SetFont(pdfFont, "", 5.5)
	pdf.SetXY(x0+10*scale, y0+(chartH-13)*scale)
	pdf.CellFormat(25, 2.5, day(f.Since), "", 0, "L", false, 0, "")
	pdf.SetXY(x0+(chartW-10)*scale-25, y0+(chartH-13)*scale)
	pdf.CellFormat(25, 2.5, day(f.Until), "", 0, "R", false, 0, "")
	for i, g := range timelineGeometry(f) {
		r, gg, b := rgb(severityColor(f.Incidents[i].Severity))
		pdf.SetFillColor(r, gg, b)
		pdf.Rect(x0+g[0]*scale, y0+(6+g[2]*9.5)*scale, (g[1]-g[0])*scale, 7*scale, "F")
	}
	pdf.SetXY(left, y0+chartH*scale+4)
}

// rgb reads a #rrggbb colour.
func rgb(hex string) (int, int, int) {
	v := func(s string) int {
		n := 0
		for _, c := range s {
			n *= 16
			switch {
			case c >= '0' && c <= '9':
				n += int(c - '0')
			case c >= 'a' && c <= 'f':
				n += int(c-'a') + 10
			}
		}
		return n
	}
	return v(hex[1:3]), v(hex[3:5]), v(hex[5:7])
}
