package compliance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/plan"
	"github.com/vigia-data/vigia/trust"
)

// Requirement statuses, as the contract names them (Portuguese).
const (
	StatusCovered       = "Coberto"
	StatusPartial       = "Parcial"
	StatusMissing       = "Em falta"
	StatusNotApplicable = "Não aplicável"
)

// VerticalSaudePT is the Portuguese health sector.
const VerticalSaudePT = "saude_pt"

// Vertical is a sector whose data rules Vigia maps to its checks.
type Vertical struct {
	Key         string
	Name        string
	Description string
	// Requirements counts the requirements of the mapping.
	Requirements int
}

// Requirement is one requirement of a vertical with its status and the evidence.
type Requirement struct {
	ID        string
	Title     string
	Reference string
	// Check names the Vigia checks the requirement is mapped to.
	Check    string
	Status   string
	Evidence []string
}

// VerticalReport is a vertical's requirements judged on the caller's visible datasets.
type VerticalReport struct {
	Vertical     Vertical
	GeneratedAt  time.Time
	Datasets     int
	Requirements []Requirement
	// StatusCounts counts the requirements per status.
	StatusCounts map[string]int
}

// FreshWithin is how recent a profile must be for the saude_pt currency requirement.
const FreshWithin = 48 * time.Hour

// eea are the countries of the European Economic Area (ISO 3166-1 alpha-2).
var eea = map[string]bool{"AT": true, "BE": true, "BG": true, "HR": true, "CY": true, "CZ": true, "DK": true, "EE": true,
	"FI": true, "FR": true, "DE": true, "GR": true, "HU": true, "IE": true, "IT": true, "LV": true, "LT": true, "LU": true,
	"MT": true, "NL": true, "PL": true, "PT": true, "RO": true, "SK": true, "SI": true, "ES": true, "SE": true,
	"IS": true, "LI": true, "NO": true}

var saudePT = Vertical{Key: VerticalSaudePT, Name: "Saúde (Portugal)",
	Description: "Regras de dados do setor da saúde em Portugal (RGPD, Lei n.º 58/2019, Lei n.º 12/2005 sobre informação genética " +
		"pessoal e informação de saúde) mapeadas para as verificações do Vigia.", Requirements: 10}

// Verticals lists the verticals (for now saude_pt).
func (s *Service) Verticals(ctx context.Context) ([]Vertical, error) {
	if _, err := vigia.MustPrincipal(ctx); err != nil {
		return nil, err
	}
	return []Vertical{saudePT}, nil
}

// VerticalReport judges a vertical's requirements on the datasets the caller can see;
// business plan (402 plan_limit otherwise); KindNotFound for an unknown key.
func (s *Service) VerticalReport(ctx context.Context, key string) (VerticalReport, error) {
	p, err := vigia.MustPrincipal(ctx)
	if err != nil {
		return VerticalReport{}, err
	}
	if key != VerticalSaudePT {
		return VerticalReport{}, vigia.NotFound()
	}
	if err := s.plans.Require(ctx, plan.ComplianceDossiers); err != nil {
		return VerticalReport{}, err
	}
	facts, err := s.store.Art10Facts(ctx, catalog.ViewerOf(p))
	if err != nil {
		return VerticalReport{}, err
	}
	pol, err := s.store.PolicyFacts(ctx, p.WorkspaceID)
	if err != nil {
		return VerticalReport{}, err
	}
	now := s.clock.Now().UTC()
	r := VerticalReport{Vertical: saudePT, GeneratedAt: now, Datasets: len(facts), Requirements: JudgeSaudePT(facts, pol, now),
		StatusCounts: map[string]int{}}
	for _, q := range r.Requirements {
		r.StatusCounts[q.Status]++
	}
	return r, nil
}

// share judges a requirement that holds dataset by dataset: all → Coberto, some →
// Parcial, none → Em falta, no dataset concerned → Não aplicável.
func share(ok, of int) string {
	switch {
	case of == 0:
		return StatusNotApplicable
	case ok == of:
		return StatusCovered
	case ok > 0:
		return StatusPartial
	}
	return StatusMissing
}

// names lists up to five names and how many more.
func names(l []string) string {
	if len(l) == 0 {
		return "—"
	}
	if len(l) > 5 {
		return strings.Join(l[:5], ", ") + fmt.Sprintf(" e mais %d", len(l)-5)
	}
	return strings.Join(l, ", ")
}

// JudgeSaudePT maps the Portuguese health sector's data rules to Vigia's facts.
func JudgeSaudePT(facts []DatasetFacts, pol PolicyFacts, now time.Time) []Requirement {
	var profiled, personal, personalRestricted, withRules, clean, inLineage, owned, fresh, eeaOK, unknownCountry int
	var notProfiled, personalNames, openAccess, noRules, failing, outside []string
	var validity []string
	validityCols, validityProfiled := 0, 0
	for _, f := range facts {
		pii, _ := trust.PII(f.Columns)
		if f.Profiled {
			profiled++
		} else {
			notProfiled = append(notProfiled, f.Name)
		}
		if len(pii) > 0 {
			personal++
			personalNames = append(personalNames, f.Name)
			if f.RestrictedDomain {
				personalRestricted++
			} else {
				openAccess = append(openAccess, f.Name)
			}
		}
		if f.RuleCount > 0 {
			withRules++
		} else {
			noRules = append(noRules, f.Name)
		}
		if f.RuleCount > 0 && f.Failed == 0 {
			clean++
		} else if f.Failed > 0 {
			failing = append(failing, f.Name)
		}
		if f.Upstream+f.Downstream > 0 {
			inLineage++
		}
		if len(f.Domains) > 0 {
			owned++
		}
		if f.LastProfiledAt != nil && now.Sub(*f.LastProfiledAt) <= FreshWithin {
			fresh++
		}
		switch {
		case f.DataCountry == nil || *f.DataCountry == "":
			unknownCountry++
		case eea[strings.ToUpper(*f.DataCountry)]:
			eeaOK++
		default:
			outside = append(outside, f.Name)
		}
		for _, v := range f.Validity {
			if v.Type != "nif_pt" || v.Matches == 0 {
				continue
			}
			validityCols++
			if f.RuleCount > 0 {
				validityProfiled++
			}
			validity = append(validity, fmt.Sprintf("%s.%s: %d de %d valores amostrados com dígito de controlo válido", f.Name, v.Column, v.Valid, v.Matches))
		}
	}
	n := len(facts)
	var reqs []Requirement
	add := func(id, title, ref, check, status string, evidence ...string) {
		reqs = append(reqs, Requirement{ID: id, Title: title, Reference: ref, Check: check, Status: status, Evidence: evidence})
	}
	add("SPT-01", "Identificação das categorias especiais de dados (dados de saúde e pessoais)",
		"RGPD art. 9.º; Lei n.º 58/2019 art. 29.º", "perfil de cada conjunto de dados com tipos semânticos (NIF, telefone, e-mail...)",
		share(profiled, n),
		fmt.Sprintf("%d de %d conjuntos de dados perfilados", profiled, n),
		fmt.Sprintf("%d com dados pessoais detetados: %s", personal, names(personalNames)),
		"Sem perfil: "+names(notProfiled))
	retention := StatusMissing
	var retEv []string
	switch {
	case personal == 0:
		retention = StatusNotApplicable
		retEv = append(retEv, "Nenhum conjunto de dados com dados pessoais detetados")
	case pol.RetentionRule && pol.OpenViolations == 0:
		retention = StatusCovered
	case pol.RetentionRule:
		retention = StatusPartial
	}
	if pol.RetentionRule && pol.RetentionMaxDays != nil {
		retEv = append(retEv, fmt.Sprintf("Política pii_retention_max_age ativa (máximo %d dias)", *pol.RetentionMaxDays))
	} else {
		retEv = append(retEv, "Nenhuma política pii_retention_max_age ativa")
	}
	retEv = append(retEv, fmt.Sprintf("%d violações de política em aberto", pol.OpenViolations))
	add("SPT-02", "Conservação limitada dos dados pessoais", "RGPD art. 5.º n.º 1 al. e); Lei n.º 12/2005 art. 5.º",
		"política de dados pii_retention_max_age avaliada em cada análise", retention, retEv...)
	nifEv := validity
	if validityCols == 0 {
		nifEv = []string{"Nenhuma coluna com NIF detetada"}
	}
	add("SPT-03", "Exatidão dos identificadores do utente (NIF)", "RGPD art. 5.º n.º 1 al. d)",
		"tipo semântico nif_pt com validação do dígito de controlo; regras de qualidade no conjunto", share(validityProfiled, validityCols), nifEv...)
	add("SPT-04", "Controlos de qualidade dos dados (exatidão e completude)", "RGPD art. 5.º n.º 1 al. d); Lei n.º 12/2005 art. 3.º",
		"regras de qualidade e o seu último resultado", qualityStatus(withRules, clean, n),
		fmt.Sprintf("%d de %d conjuntos com regras de qualidade; %d sem falhas no último resultado", withRules, n, clean),
		"Sem regras: "+names(noRules), "Com regras a falhar: "+names(failing))
	add("SPT-05", "Rastreabilidade da origem e do destino dos dados", "RGPD art. 5.º n.º 2 (responsabilidade); art. 30.º",
		"linhagem (declarada, inferida, dbt, OpenLineage)", share(inLineage, n),
		fmt.Sprintf("%d de %d conjuntos com linhagem conhecida (a montante ou a jusante)", inLineage, n))
	add("SPT-06", "Acesso restrito aos dados de saúde (sigilo profissional)", "Lei n.º 58/2019 art. 29.º; RGPD art. 32.º",
		"domínios de acesso restrito com concessões a equipas", share(personalRestricted, personal),
		fmt.Sprintf("%d de %d conjuntos com dados pessoais num domínio de acesso restrito", personalRestricted, personal),
		"Sem acesso restrito: "+names(openAccess))
	country := share(eeaOK, n)
	if len(outside) > 0 {
		country = StatusMissing
	}
	add("SPT-07", "Localização dos dados no Espaço Económico Europeu", "RGPD capítulo V (transferências internacionais)",
		"país dos dados (conjunto, ligação, área de trabalho)", country,
		fmt.Sprintf("%d de %d conjuntos com país no EEE; %d sem país declarado", eeaOK, n, unknownCountry),
		"Fora do EEE: "+names(outside))
	add("SPT-08", "Responsável identificado por cada conjunto de dados", "RGPD art. 24.º (responsabilidade do responsável pelo tratamento)",
		"domínios (produtos de dados) com responsável", share(owned, n),
		fmt.Sprintf("%d de %d conjuntos num domínio", owned, n))
	add("SPT-09", "Atualidade dos registos de saúde", "Lei n.º 12/2005 art. 5.º (informação de saúde atualizada)",
		"análises regulares e frescura", share(fresh, n),
		fmt.Sprintf("%d de %d conjuntos perfilados nas últimas %d horas", fresh, n, int(FreshWithin.Hours())))
	add("SPT-10", "Fundamento de licitude e consentimento do titular", "RGPD art. 6.º e art. 9.º n.º 2",
		"nenhuma: não é um facto dos dados", StatusNotApplicable,
		"Fora do âmbito do Vigia: o fundamento do tratamento e o consentimento não se leem nos dados; documente-os no registo de atividades de tratamento")
	for i := range reqs {
		reqs[i].Evidence = slices.DeleteFunc(reqs[i].Evidence, func(e string) bool { return strings.HasSuffix(e, ": —") })
	}
	return reqs
}

func qualityStatus(withRules, clean, n int) string {
	switch {
	case n == 0:
		return StatusNotApplicable
	case withRules == n && clean == n:
		return StatusCovered
	case withRules > 0:
		return StatusPartial
	}
	return StatusMissing
}

// Markdown writes the report (headings and statuses in Portuguese, as every report's).
func (r VerticalReport) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Relatório de conformidade — %s\n\n", r.Vertical.Name)
	fmt.Fprintf(&b, "%s\n\n", r.Vertical.Description)
	fmt.Fprintf(&b, "- Gerado em: %s (UTC)\n- Conjuntos de dados considerados: %d (os visíveis a quem pediu)\n- ai-generated: false\n\n",
		r.GeneratedAt.Format("2006-01-02 15:04"), r.Datasets)
	b.WriteString("## Resumo\n\n| Estado | Requisitos |\n|---|---|\n")
	for _, st := range []string{StatusCovered, StatusPartial, StatusMissing, StatusNotApplicable} {
		fmt.Fprintf(&b, "| %s | %d |\n", st, r.StatusCounts[st])
	}
	b.WriteString("\n## Requisitos\n\n| Requisito | Referência | Estado |\n|---|---|---|\n")
	for _, q := range r.Requirements {
		fmt.Fprintf(&b, "| %s %s | %s | %s |\n", q.ID, mdText(q.Title), mdText(q.Reference), q.Status)
	}
	b.WriteString("\n## Evidência\n")
	for _, q := range r.Requirements {
		fmt.Fprintf(&b, "\n### %s — %s\n\n- Estado: **%s**\n- Verificação do Vigia: %s\n", q.ID, mdText(q.Title), q.Status, mdText(q.Check))
		for _, e := range q.Evidence {
			fmt.Fprintf(&b, "- %s\n", mdText(e))
		}
	}
	return b.String()
}

// mdText escapes what Markdown would read as markup in names people chose.
func mdText(s string) string {
	r := strings.NewReplacer("\\", "\\\\", "*", "\\*", "_", "\\_", "`", "\\`", "[", "\\[", "]", "\\]", "<", "&lt;", ">", "&gt;", "#", "\\#", "|", "\\|", "\n", " ")
	return r.Replace(s)
}
