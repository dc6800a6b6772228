package report

import (
	"fmt"
	"strconv"
	"strings"
)

// Section headings stay Portuguese in every language (the contract).
const (
	hSummary    = "Resumo executivo"
	hScore      = "Pontuação e tendência"
	hDimensions = "Dimensões de qualidade"
	hVerdicts   = "Veredictos"
	hIncidents  = "Incidentes e raio de impacto"
	hSLA        = "Cumprimento de SLA"
	hIssues     = "Principais problemas"
	hTrust      = "Decisões de confiança"
	hContracts  = "Estado dos contratos"
	hTimeline   = "Cronologia do incidente"
)

// sectionsOf is what each persona reads, in order; a post-incident review leads with
// the incident's timeline.
func sectionsOf(typ, persona string) []string {
	var out []string
	switch persona {
	case PersonaExecutive:
		out = []string{hSummary, hScore, hIncidents, hSLA, hTrust, hContracts}
	case PersonaEngineering:
		out = []string{hSummary, hScore, hDimensions, hVerdicts, hIncidents, hIssues, hContracts}
	default:
		out = []string{hSummary, hDimensions, hIssues, hTrust, hContracts, hSLA}
	}
	if typ == TypeIncident {
		out = append([]string{hTimeline}, out...)
	}
	return out
}

// phrases are the sentences of a report per language (pt, en, es).
var phrases = map[string][3]string{
	"title":          {"Relatório de qualidade de dados — %s", "Data quality report — %s", "Informe de calidad de datos — %s"},
	"marker":         {"Escrito pelo Vigia a partir dos seus próprios factos; não gerado por IA.", "Written by Vigia from its own facts; not AI-generated.", "Escrito por Vigia a partir de sus propios hechos; no generado por IA."},
	"period":         {"Período: %s a %s.", "Period: %s to %s.", "Periodo: %s a %s."},
	"summary":        {"Nos %d conjuntos de dados monitorizados, a pontuação média de qualidade é %s/100.", "Across %d monitored datasets the average quality score is %s/100.", "En los %d conjuntos de datos monitorizados, la puntuación media de calidad es %s/100."},
	"summary_none":   {"Nos %d conjuntos de dados monitorizados ainda não há pontuação.", "Across %d monitored datasets there is no score yet.", "En los %d conjuntos de datos monitorizados aún no hay puntuación."},
	"summary_risk":   {"%d falham, %d em alerta; %d incidentes abertos; %d problemas abertos.", "%d fail, %d warn; %d open incidents; %d open issues.", "%d fallan, %d en alerta; %d incidentes abiertos; %d problemas abiertos."},
	"score":          {"Pontuação atual: %s/100.", "Current score: %s/100.", "Puntuación actual: %s/100."},
	"score_none":     {"Sem pontuação no período.", "No score in the period.", "Sin puntuación en el periodo."},
	"trend":          {"Tendência em %d dias com análises: de %s para %s (%s).", "Trend over %d days with scans: from %s to %s (%s).", "Tendencia en %d días con análisis: de %s a %s (%s)."},
	"trend_none":     {"Sem análises no período.", "No scans in the period.", "Sin análisis en el periodo."},
	"dimension":      {"%s: %s", "%s: %s", "%s: %s"},
	"not_computed":   {"não calculada", "not computed", "no calculada"},
	"verdicts":       {"Aprovados %d, em alerta %d, falhados %d, desconhecidos %d.", "Pass %d, warn %d, fail %d, unknown %d.", "Aprobados %d, en alerta %d, fallidos %d, desconocidos %d."},
	"incidents":      {"%d incidentes no período, %d abertos.", "%d incidents in the period, %d open.", "%d incidentes en el periodo, %d abiertos."},
	"incident":       {"%s — gravidade %s, %s; %d problemas em %d conjuntos de dados; raio de impacto %d a jusante; aberto %s.", "%s — severity %s, %s; %d issues on %d datasets; blast radius %d downstream; opened %s.", "%s — gravedad %s, %s; %d problemas en %d conjuntos de datos; radio de impacto %d aguas abajo; abierto %s."},
	"resolved_at":    {" Resolvido %s.", " Resolved %s.", " Resuelto %s."},
	"no_incidents":   {"Nenhum incidente no período.", "No incidents in the period.", "Ningún incidente en el periodo."},
	"sla":            {"%s dos %d problemas abertos no período cumpriram o prazo de resolução (%d ultrapassados).", "%s of the %d issues opened in the period met their resolution target (%d breached).", "%s de los %d problemas abiertos en el periodo cumplieron su plazo de resolución (%d superados)."},
	"sla_none":       {"Nenhum problema aberto no período.", "No issues opened in the period.", "Ningún problema abierto en el periodo."},
	"issue":          {"%s (%s) em %s — %d deteções", "%s (%s) on %s — %d detections", "%s (%s) en %s — %d detecciones"},
	"no_issues":      {"Nenhum problema aberto.", "No open issues.", "Ningún problema abierto."},
	"trust":          {"Decisões vistas pelos consumidores: confiável %d, cautela %d, não confiável %d, desconhecida %d.", "Decisions seen by consumers: trusted %d, caution %d, untrusted %d, unknown %d.", "Decisiones vistas por los consumidores: confiable %d, precaución %d, no confiable %d, desconocida %d."},
	"contracts":      {"%d conjuntos de dados com contrato ativo; %d com violações na última verificação.", "%d datasets with an active contract; %d with violations at the last check.", "%d conjuntos de datos con contrato activo; %d con violaciones en la última verificación."},
	"status_open":    {"aberto", "open", "abierto"},
	"status_resolve": {"resolvido", "resolved", "resuelto"},
	"chart_trend":    {"Pontuação por dia", "Score per day", "Puntuación por día"},
	"chart_dims":     {"Dimensões", "Dimensions", "Dimensiones"},
	"chart_timeline": {"Incidentes no período", "Incidents in the period", "Incidentes en el periodo"},
}

func langIndex(lang string) int {
	switch lang {
	case "en":
		return 1
	case "es":
		return 2
	}
	return 0
}

// words gives the phrases of one language.
type words struct {
	lang string
	i    int
}

func wordsOf(lang string) words { return words{lang: lang, i: langIndex(lang)} }

func (w words) f(key string, args ...any) string {
	return fmt.Sprintf(phrases[key][w.i], args...)
}

// num formats a figure with one decimal, with a decimal comma in pt and es.
func (w words) num(v float64) string {
	s := strconv.FormatFloat(v, 'f', 1, 64)
	if w.lang != "en" {
		s = strings.Replace(s, ".", ",", 1)
	}
	return s
}

func (w words) pct(v float64) string { return w.num(v) + "%" }

func (w words) signed(v float64) string {
	if v >= 0 {
		return "+" + w.num(v)
	}
	return w.num(v)
}

func day(t interface{ Format(string) string }) string { return t.Format("2006-01-02") }

// Write returns the report's title and its Markdown: the persona's sections, headings in
// Portuguese, sentences in the report's language. It is a pure function of the report's
// facts, type, persona and language.
func Write(r Report) (title, md string) {
	w := wordsOf(r.Lang())
	f := r.Facts
	title = w.f("title", f.Scope)
	var b strings.Builder
	line := func(s string) { b.WriteString(s + "\n") }
	line("# " + title)
	line("")
	line(w.f("period", day(f.Since), day(f.Until)))
	line("")
	line("_" + w.f("marker") + "_")
	for _, sec := range sectionsOf(r.Type, r.Persona) {
		line("")
		line("## " + sec)
		line("")
		for _, l := range sectionLines(w, f, sec) {
			line(l)
		}
	}
	return title, b.String()
}

func sectionLines(w words, f Facts, sec string) []string {
	switch sec {
	case hSummary:
		first := w.f("summary_none", f.Datasets)
		if f.Score != nil {
			first = w.f("summary", f.Datasets, w.num(*f.Score))
		}
		return []string{first + " " + w.f("summary_risk", f.Verdicts.Fail, f.Verdicts.Warn, f.OpenIncidents, f.OpenIssues)}
	case hScore:
		out := []string{w.f("score_none")}
		if f.Score != nil {
			out[0] = w.f("score", w.num(*f.Score))
		}
		if n := len(f.Trend); n > 0 {
			from, to := f.Trend[0].Score, f.Trend[n-1].Score
			out = append(out, "", w.f("trend", n, w.num(from), w.num(to), w.signed(to-from)))
		} else {
			out = append(out, "", w.f("trend_none"))
		}
		return out
	case hDimensions:
		var out []string
		for _, d := range f.Dimensions {
			v := w.f("not_computed")
			if d.Score != nil {
				v = w.num(*d.Score)
			}
			out = append(out, "- "+w.f("dimension", d.Name, v))
		}
		return out
	case hVerdicts:
		return []string{w.f("verdicts", f.Verdicts.Pass, f.Verdicts.Warn, f.Verdicts.Fail, f.Verdicts.Unknown)}
	case hIncidents, hTimeline:
		if len(f.Incidents) == 0 {
			return []string{w.f("no_incidents")}
		}
		out := []string{w.f("incidents", len(f.Incidents), f.OpenIncidents), ""}
		for _, in := range f.Incidents {
			status := w.f("status_open")
			if in.Status == "resolved" {
				status = w.f("status_resolve")
			}
			s := "- " + w.f("incident", in.Root, in.Severity, status, in.Issues, in.Datasets, in.Reach, in.OpenedAt.Format("2006-01-02 15:04 UTC"))
			if in.ResolvedAt != nil {
				s += w.f("resolved_at", in.ResolvedAt.Format("2006-01-02 15:04 UTC"))
			}
			out = append(out, s)
		}
		return out
	case hSLA:
		if f.SLA.Pct == nil {
			return []string{w.f("sla_none")}
		}
		return []string{w.f("sla", w.pct(*f.SLA.Pct), f.SLA.InScope, f.SLA.Breached)}
	case hIssues:
		if len(f.TopIssues) == 0 {
			return []string{w.f("no_issues")}
		}
		var out []string
		for _, is := range f.TopIssues {
			where := is.Dataset
			if is.Column != "" {
				where += "." + is.Column
			}
			out = append(out, "- "+w.f("issue", is.Type, is.Severity, where, is.Detections))
		}
		return out
	case hTrust:
		return []string{w.f("trust", f.Trust.Trusted, f.Trust.Caution, f.Trust.Untrusted, f.Trust.Unknown)}
	case hContracts:
		return []string{w.f("contracts", f.Contracts.Active, f.Contracts.Violating)}
	}
	return nil
}
