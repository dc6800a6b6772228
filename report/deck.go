package report

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
	"time"
)

// The deck is Office Open XML written by hand: one master, one blank layout, a theme
// and five slides of text boxes and rectangles (16:9, sizes in EMU).
const (
	slideW = 12192000
	slideH = 6858000
	emuCm  = 360000
)

const (
	nsA     = `xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"`
	nsR     = `xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"`
	nsP     = `xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"`
	xmlHead = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n"
	relsNS  = `xmlns="http://schemas.openxmlformats.org/package/2006/relationships"`
	relBase = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
	ctBase  = "application/vnd.openxmlformats-officedocument.presentationml."
)

// DeckSlides is the number of slides of the deck.
const DeckSlides = 5

// slide collects the shapes of one slide.
type slide struct {
	lang   string
	shapes []string
	nextID int
}

func esc(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// text adds a text box at x, y (cm) of width w and height h with paragraphs of size pt.
func (s *slide) text(x, y, w, h float64, pt int, bold bool, color string, paras ...string) {
	s.nextID++
	var body strings.Builder
	b := "0"
	if bold {
		b = "1"
	}
	for _, p := range paras {
		fmt.Fprintf(&body, `<a:p><a:r><a:rPr lang="%s" sz="%d" b="%s" dirty="0"><a:solidFill><a:srgbClr val="%s"/></a:solidFill><a:latin typeface="DejaVu Sans"/></a:rPr><a:t>%s</a:t></a:r></a:p>`,
			s.lang, pt*100, b, color, esc(p))
	}
	s.shapes = append(s.shapes, fmt.Sprintf(`<p:sp><p:nvSpPr><p:cNvPr id="%d" name="Text %d"/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr>`+
		`<p:spPr><a:xfrm><a:off x="%d" y="%d"/><a:ext cx="%d" cy="%d"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom><a:noFill/></p:spPr>`+
		`<p:txBody><a:bodyPr wrap="square" lIns="0" tIns="0" rIns="0" bIns="0"><a:normAutofit/></a:bodyPr><a:lstStyle/>%s</p:txBody></p:sp>`,
		s.nextID, s.nextID, cm(x), cm(y), cm(w), cm(h), body.String()))
}

// rect adds a filled rectangle (cm) of colour #rrggbb.
func (s *slide) rect(x, y, w, h float64, color string) {
	s.nextID++
	s.shapes = append(s.shapes, fmt.Sprintf(`<p:sp><p:nvSpPr><p:cNvPr id="%d" name="Shape %d"/><p:cNvSpPr/><p:nvPr/></p:nvSpPr>`+
		`<p:spPr><a:xfrm><a:off x="%d" y="%d"/><a:ext cx="%d" cy="%d"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom>`+
		`<a:solidFill><a:srgbClr val="%s"/></a:solidFill><a:ln><a:noFill/></a:ln></p:spPr></p:sp>`,
		s.nextID, s.nextID, cm(x), cm(y), cm(max(w, 0.01)), cm(max(h, 0.01)), strings.TrimPrefix(color, "#")))
}

func cm(v float64) int64 { return int64(v * emuCm) }

func (s *slide) xml() string {
	return xmlHead + `<p:sld ` + nsA + ` ` + nsR + ` ` + nsP + `><p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr>` +
		`<p:grpSpPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/><a:chOff x="0" y="0"/><a:chExt cx="0" cy="0"/></a:xfrm></p:grpSpPr>` +
		strings.Join(s.shapes, "") + `</p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sld>`
}

const (
	ink   = "1D2733"
	muted = "4A5A6A"
)

// Deck renders an executive workspace overview as five slides: the headline, score and
// trend, incidents and blast radius, SLA and trust decisions, contracts and dimensions.
// Every slide carries the ai-generated marker in its footer; docProps/custom.xml holds
// ai-generated and ai-model.
func Deck(r Report) ([]byte, error) {
	w := wordsOf(r.Lang())
	f := r.Facts
	marker := "ai-generated: " + boolWord(r.AIGenerated) + " · ai-model: " + modelName(r) + " · " + r.GeneratedAt.UTC().Format(time.RFC3339)
	newSlide := func(heading string) *slide {
		s := &slide{lang: deckLang(r.Lang()), nextID: 1}
		s.rect(0, 0, 33.867, 0.5, "#2A6FDB")
		if heading != "" {
			s.text(1.5, 1.2, 30, 1.8, 28, true, ink, heading)
		}
		s.text(1.5, 18, 30, 0.8, 10, false, muted, marker)
		return s
	}
	var slides []*slide

	// 1. Headline.
	s := newSlide("")
	s.text(1.5, 3, 30, 2.4, 34, true, ink, r.Title)
	s.text(1.5, 6, 30, 1, 16, false, muted, w.f("period", day(f.Since), day(f.Until)))
	score := "—"
	if f.Score != nil {
		score = w.num(*f.Score)
	}
	s.text(1.5, 8, 12, 3.5, 66, true, "2A6FDB", score)
	s.text(1.5, 11.8, 30, 4, 18, false, ink, sectionLines(w, f, hSummary)...)
	s.text(1.5, 16, 30, 1, 12, false, muted, w.f("marker"))
	slides = append(slides, s)

	// 2. Score and trend: a column per day with a scan.
	s = newSlide(hScore)
	s.text(1.5, 3.4, 30, 2.4, 18, false, ink, nonEmpty(sectionLines(w, f, hScore))...)
	baseY, plotH := 16.5, 9.0
	s.rect(1.5, baseY, 30, 0.05, "#9AA8B6")
	if n := len(f.Trend); n > 0 {
		step := 30.0 / float64(n)
		for i, p := range f.Trend {
			h := p.Score / 100 * plotH
			s.rect(1.5+float64(i)*step+step*0.15, baseY-h, step*0.7, h, "#2A6FDB")
		}
	}
	slides = append(slides, s)

	// 3. Incidents and blast radius.
	s = newSlide(hIncidents)
	lines := nonEmpty(sectionLines(w, f, hIncidents))
	if len(lines) > 7 {
		lines = lines[:7]
	}
	for i := range lines {
		lines[i] = strings.TrimPrefix(lines[i], "- ")
	}
	s.text(1.5, 3.4, 30, 14, 15, false, ink, lines...)
	slides = append(slides, s)

	// 4. SLA attainment and trust decisions, with a bar of the decisions.
	s = newSlide(hSLA)
	s.text(1.5, 3.4, 30, 2.5, 18, false, ink, sectionLines(w, f, hSLA)...)
	s.text(1.5, 7, 30, 1.8, 24, true, ink, hTrust)
	s.text(1.5, 9.2, 30, 2.5, 16, false, ink, sectionLines(w, f, hTrust)...)
	total := f.Trust.Trusted + f.Trust.Caution + f.Trust.Untrusted + f.Trust.Unknown
	if total > 0 {
		x := 1.5
		for _, part := range []struct {
			n     int
			color string
		}{{f.Trust.Trusted, "#2E8B57"}, {f.Trust.Caution, "#D9A400"}, {f.Trust.Untrusted, "#C0392B"}, {f.Trust.Unknown, "#9AA8B6"}} {
			wd := 30 * float64(part.n) / float64(total)
			if part.n > 0 {
				s.rect(x, 12.5, wd, 1.2, part.color)
			}
			x += wd
		}
	}
	slides = append(slides, s)

	// 5. Contracts and the quality dimensions.
	s = newSlide(hContracts)
	s.text(1.5, 3.4, 30, 2, 18, false, ink, sectionLines(w, f, hContracts)...)
	s.text(1.5, 6.2, 30, 1.6, 22, true, ink, hDimensions)
	for i, d := range f.Dimensions {
		y := 8.4 + float64(i)*1.7
		s.text(1.5, y, 7, 1.2, 14, false, ink, d.Name)
		s.rect(9, y, 20, 1.1, "#EEF1F4")
		v := w.f("not_computed")
		if d.Score != nil {
			s.rect(9, y, 20**d.Score/100, 1.1, dimensionColor(*d.Score))
			v = w.num(*d.Score)
		}
		s.text(29.5, y, 4, 1.2, 14, false, ink, v)
	}
	slides = append(slides, s)

	return deckZip(r, slides)
}

func nonEmpty(ls []string) []string {
	out := ls[:0:0]
	for _, l := range ls {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

func deckLang(lang string) string {
	switch lang {
	case "en":
		return "en-GB"
	case "es":
		return "es-ES"
	}
	return "pt-PT"
}

func deckZip(r Report, slides []*slide) ([]byte, error) {
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	modified := r.GeneratedAt.UTC()
	put := func(name, body string) error {
		fw, err := z.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: modified})
		if err != nil {
			return err
		}
		_, err = fw.Write([]byte(body))
		return err
	}
	var types, presRels, sldIDs strings.Builder
	for i := range slides {
		n := i + 1
		fmt.Fprintf(&types, `<Override PartName="/ppt/slides/slide%d.xml" ContentType="%sslide+xml"/>`, n, ctBase)
		fmt.Fprintf(&presRels, `<Relationship Id="rId%d" Type="%sslide" Target="slides/slide%d.xml"/>`, n+1, relBase, n)
		fmt.Fprintf(&sldIDs, `<p:sldId id="%d" r:id="rId%d"/>`, 255+n, n+1)
	}
	created := modified.Format("2006-01-02T15:04:05Z")
	files := []struct{ name, body string }{
		{"[Content_Types].xml", xmlHead + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>` +
			`<Override PartName="/ppt/presentation.xml" ContentType="` + ctBase + `presentation.main+xml"/>` +
			`<Override PartName="/ppt/slideMasters/slideMaster1.xml" ContentType="` + ctBase + `slideMaster+xml"/>` +
			`<Override PartName="/ppt/slideLayouts/slideLayout1.xml" ContentType="` + ctBase + `slideLayout+xml"/>` +
			`<Override PartName="/ppt/theme/theme1.xml" ContentType="application/vnd.openxmlformats-officedocument.theme+xml"/>` + types.String() +
			`<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>` +
			`<Override PartName="/docProps/app.xml" ContentType="application/vnd.openxmlformats-officedocument.extended-properties+xml"/>` +
			`<Override PartName="/docProps/custom.xml" ContentType="application/vnd.openxmlformats-officedocument.custom-properties+xml"/></Types>`},
		{"_rels/.rels", xmlHead + `<Relationships ` + relsNS + `>` +
			`<Relationship Id="rId1" Type="` + relBase + `officeDocument" Target="ppt/presentation.xml"/>` +
			`<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/>` +
			`<Relationship Id="rId3" Type="` + relBase + `extended-properties" Target="docProps/app.xml"/>` +
			`<Relationship Id="rId4" Type="` + relBase + `custom-properties" Target="docProps/custom.xml"/></Relationships>`},
		{"docProps/core.xml", xmlHead + `<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" ` +
			`xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">` +
			`<dc:title>` + esc(r.Title) + `</dc:title><dc:creator>Vigia</dc:creator><cp:keywords>ai-generated=` + boolWord(r.AIGenerated) + `</cp:keywords>` +
			`<dcterms:created xsi:type="dcterms:W3CDTF">` + created + `</dcterms:created><dcterms:modified xsi:type="dcterms:W3CDTF">` + created + `</dcterms:modified></cp:coreProperties>`},
		{"docProps/app.xml", xmlHead + `<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties"><Application>Vigia</Application>` +
			fmt.Sprintf(`<Slides>%d</Slides></Properties>`, len(slides))},
		{"docProps/custom.xml", xmlHead + `<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/custom-properties" xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes">` +
			`<property fmtid="{D5CDD505-2E9C-101B-9397-08002B2CF9AE}" pid="2" name="ai-generated"><vt:bool>` + boolWord(r.AIGenerated) + `</vt:bool></property>` +
			`<property fmtid="{D5CDD505-2E9C-101B-9397-08002B2CF9AE}" pid="3" name="ai-model"><vt:lpwstr>` + esc(modelName(r)) + `</vt:lpwstr></property></Properties>`},
		{"ppt/presentation.xml", xmlHead + `<p:presentation ` + nsA + ` ` + nsR + ` ` + nsP + `>` +
			`<p:sldMasterIdLst><p:sldMasterId id="2147483648" r:id="rId1"/></p:sldMasterIdLst><p:sldIdLst>` + sldIDs.String() + `</p:sldIdLst>` +
			fmt.Sprintf(`<p:sldSz cx="%d" cy="%d"/><p:notesSz cx="6858000" cy="9144000"/></p:presentation>`, slideW, slideH)},
		{"ppt/_rels/presentation.xml.rels", xmlHead + `<Relationships ` + relsNS + `>` +
			`<Relationship Id="rId1" Type="` + relBase + `slideMaster" Target="slideMasters/slideMaster1.xml"/>` + presRels.String() +
			fmt.Sprintf(`<Relationship Id="rId%d" Type="%stheme" Target="theme/theme1.xml"/></Relationships>`, len(slides)+2, relBase)},
		{"ppt/slideMasters/slideMaster1.xml", xmlHead + `<p:sldMaster ` + nsA + ` ` + nsR + ` ` + nsP + `><p:cSld><p:bg><p:bgPr><a:solidFill><a:srgbClr val="FFFFFF"/></a:solidFill><a:effectLst/></p:bgPr></p:bg>` + emptyTree +
			`</p:cSld><p:clrMap bg1="lt1" tx1="dk1" bg2="lt2" tx2="dk2" accent1="accent1" accent2="accent2" accent3="accent3" accent4="accent4" accent5="accent5" accent6="accent6" hlink="hlink" folHlink="folHlink"/>` +
			`<p:sldLayoutIdLst><p:sldLayoutId id="2147483649" r:id="rId1"/></p:sldLayoutIdLst></p:sldMaster>`},
		{"ppt/slideMasters/_rels/slideMaster1.xml.rels", xmlHead + `<Relationships ` + relsNS + `>` +
			`<Relationship Id="rId1" Type="` + relBase + `slideLayout" Target="../slideLayouts/slideLayout1.xml"/>` +
			`<Relationship Id="rId2" Type="` + relBase + `theme" Target="../theme/theme1.xml"/></Relationships>`},
		{"ppt/slideLayouts/slideLayout1.xml", xmlHead + `<p:sldLayout ` + nsA + ` ` + nsR + ` ` + nsP + ` type="blank" preserve="1"><p:cSld name="Blank">` + emptyTree +
			`</p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sldLayout>`},
		{"ppt/slideLayouts/_rels/slideLayout1.xml.rels", xmlHead + `<Relationships ` + relsNS + `>` +
			`<Relationship Id="rId1" Type="` + relBase + `slideMaster" Target="../slideMasters/slideMaster1.xml"/></Relationships>`},
		{"ppt/theme/theme1.xml", xmlHead + themeXML},
	}
	for _, f := range files {
		if err := put(f.name, f.body); err != nil {
			return nil, err
		}
	}
	for i, s := range slides {
		if err := put(fmt.Sprintf("ppt/slides/slide%d.xml", i+1), s.xml()); err != nil {
			return nil, err
		}
		if err := put(fmt.Sprintf("ppt/slides/_rels/slide%d.xml.rels", i+1), xmlHead+`<Relationships `+relsNS+`>`+
			`<Relationship Id="rId1" Type="`+relBase+`slideLayout" Target="../slideLayouts/slideLayout1.xml"/></Relationships>`); err != nil {
			return nil, err
		}
	}
	if err := z.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

const emptyTree = `<p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr>` +
	`<p:grpSpPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/><a:chOff x="0" y="0"/><a:chExt cx="0" cy="0"/></a:xfrm></p:grpSpPr></p:spTree>`

// themeXML is the smallest complete theme: colours, fonts and the three style lists.
const themeXML = `<a:theme xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" name="Vigia"><a:themeElements>` +
	`<a:clrScheme name="Vigia"><a:dk1><a:srgbClr val="1D2733"/></a:dk1><a:lt1><a:srgbClr val="FFFFFF"/></a:lt1>` +
	`<a:dk2><a:srgbClr val="253746"/></a:dk2><a:lt2><a:srgbClr val="EEF1F4"/></a:lt2><a:accent1><a:srgbClr val="2A6FDB"/></a:accent1>` +
	`<a:accent2><a:srgbClr val="2E8B57"/></a:accent2><a:accent3><a:srgbClr val="D9A400"/></a:accent3><a:accent4><a:srgbClr val="C0392B"/></a:accent4>` +
	`<a:accent5><a:srgbClr val="6C5CE7"/></a:accent5><a:accent6><a:srgbClr val="9AA8B6"/></a:accent6><a:hlink><a:srgbClr val="2A6FDB"/></a:hlink>` +
	`<a:folHlink><a:srgbClr val="6C5CE7"/></a:folHlink></a:clrScheme>` +
	`<a:fontScheme name="Vigia"><a:majorFont><a:latin typeface="DejaVu Sans"/><a:ea typeface=""/><a:cs typeface=""/></a:majorFont>` +
	`<a:minorFont><a:latin typeface="DejaVu Sans"/><a:ea typeface=""/><a:cs typeface=""/></a:minorFont></a:fontScheme>` +
	`<a:fmtScheme name="Vigia"><a:fillStyleLst><a:solidFill><a:schemeClr val="phClr"/></a:solidFill><a:solidFill><a:schemeClr val="phClr"/></a:solidFill>` +
	`<a:solidFill><a:schemeClr val="phClr"/></a:solidFill></a:fillStyleLst><a:lnStyleLst><a:ln w="6350"><a:solidFill><a:schemeClr val="phClr"/></a:solidFill></a:ln>` +
	`<a:ln w="12700"><a:solidFill><a:schemeClr val="phClr"/></a:solidFill></a:ln><a:ln w="19050"><a:solidFill><a:schemeClr val="phClr"/></a:solidFill></a:ln></a:lnStyleLst>` +
	`<a:effectStyleLst><a:effectStyle><a:effectLst/></a:effectStyle><a:effectStyle><a:effectLst/></a:effectStyle><a:effectStyle><a:effectLst/></a:effectStyle></a:effectStyleLst>` +
	`<a:bgFillStyleLst><a:solidFill><a:schemeClr val="phClr"/></a:solidFill><a:solidFill><a:schemeClr val="phClr"/></a:solidFill>` +
	`<a:solidFill><a:schemeClr val="phClr"/></a:solidFill></a:bgFillStyleLst></a:fmtScheme></a:themeElements></a:theme>`
