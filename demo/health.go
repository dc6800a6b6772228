package demo

import (
	"fmt"
	"math"
	"time"
)

var specialties = []string{
	"Medicina Geral e Familiar", "Medicina Geral e Familiar", "Medicina Geral e Familiar", "Medicina Interna",
	"Cardiologia", "Pediatria", "Ortopedia", "Dermatologia", "Oftalmologia", "Ginecologia e Obstetrícia",
	"Psiquiatria", "Neurologia",
}

var medicines = []string{
	"Paracetamol 1000 mg comprimidos", "Ibuprofeno 400 mg comprimidos", "Amoxicilina + Ácido clavulânico 875/125 mg",
	"Omeprazol 20 mg cápsulas", "Metformina 850 mg comprimidos", "Sinvastatina 20 mg comprimidos",
	"Lisinopril 10 mg comprimidos", "Salbutamol 100 µg inalador", "Sertralina 50 mg comprimidos",
	"Levotiroxina 0,1 mg comprimidos", "Atorvastatina 20 mg comprimidos", "Amlodipina 5 mg comprimidos",
}

// labTest is a laboratory test with its unit and the usual range of results.
type labTest struct {
	name, unit string
	low, high  float64
}

var labTests = []labTest{
	{"Hemoglobina", "g/dL", 12, 17}, {"Glicose em jejum", "mg/dL", 70, 110}, {"Colesterol total", "mg/dL", 150, 240},
	{"Creatinina", "mg/dL", 0.6, 1.3}, {"TSH", "mUI/L", 0.4, 4.0}, {"Vitamina D", "ng/mL", 20, 50},
}

func healthPack() *packDef {
	return &packDef{
		Pack: Pack{
			Key:         "health",
			Name:        "Saúde (utentes e consultas)",
			Description: "Utentes do SNS, médicos, consultas, prescrições e exames de uma rede de hospitais e centros de saúde. Tem números de utente repetidos, consultas de utentes apagados e resultados de exames que deixaram de chegar.",
			Industry:    "Saúde",
			Schema:      "saude",
			Defects: []Defect{
				{DefectNulls, "saude.utentes", "email", "Cerca de 5% dos utentes sem email."},
				{DefectInvalidNIF, "saude.utentes", "nif", "Cerca de 3% dos NIF com dígito de controlo errado."},
				{DefectDuplicateKeys, "saude.utentes", "numero_utente", "Cerca de 1% dos utentes repetem o nº de utente SNS de outro."},
				{DefectInvalidPostalCode, "saude.utentes", "codigo_postal", "Cerca de 2% dos códigos postais fora do formato dddd-ddd."},
				{DefectDateAsText, "saude.utentes", "data_nascimento", "Data de nascimento guardada como texto dd/mm/aaaa."},
				{DefectOrphans, "saude.consultas", "utente_id", "Cerca de 1% das consultas de utentes já apagados (a FK no Postgres é NOT VALID)."},
				{DefectOutliers, "saude.consultas", "valor_faturado", "Cerca de 0,3% das consultas faturadas 30 a 80 vezes acima do habitual."},
				{DefectOutliers, "saude.prescricoes", "quantidade", "Cerca de 0,3% das prescrições com dezenas de embalagens."},
				{DefectStaleTimestamps, "saude.exames", "updated_at", "Os resultados de exames deixaram de chegar há cerca de 4 meses."},
				{DefectTypeChangeNextScan, "saude.medicos", "numero_cedula", "No próximo scan o nº de cédula profissional passa de inteiro a texto."},
			},
		},
		salt: 0x5341_5544,
		tables: []table{
			{name: "hospitais", cols: []column{
				{name: "id", typ: "id"},
				{name: "nome", typ: "varchar(120)", notNull: true},
				{name: "nipc", typ: "varchar(9)", notNull: true},
				{name: "regiao", typ: "varchar(40)", notNull: true},
				{name: "cidade", typ: "varchar(80)", notNull: true},
				{name: "codigo_postal", typ: "varchar(8)"},
				{name: "telefone", typ: "varchar(20)"},
				{name: "created_at", typ: "timestamp", notNull: true},
				{name: "updated_at", typ: "timestamp", notNull: true},
			}},
			{name: "medicos", cols: []column{
				{name: "id", typ: "id"},
				{name: "numero_cedula", typ: "int", notNull: true, unique: true},
				{name: "nome", typ: "varchar(120)", notNull: true},
				{name: "especialidade", typ: "varchar(60)", notNull: true},
				{name: "hospital_id", typ: "int", notNull: true, ref: "hospitais"},
				{name: "email", typ: "varchar(160)"},
				{name: "telemovel", typ: "varchar(20)"},
				{name: "iban", typ: "varchar(34)"},
				{name: "created_at", typ: "timestamp", notNull: true},
				{name: "updated_at", typ: "timestamp", notNull: true},
			}},
			{name: "utentes", cols: []column{
				{name: "id", typ: "id"},
				{name: "numero_utente", typ: "varchar(9)", notNull: true},
				{name: "nif", typ: "varchar(9)"},
				{name: "nome", typ: "varchar(120)", notNull: true},
				{name: "data_nascimento", typ: "varchar(10)", notNull: true},
				{name: "sexo", typ: "varchar(1)", notNull: true},
				{name: "email", typ: "varchar(160)"},
				{name: "telemovel", typ: "varchar(20)"},
				{name: "codigo_postal", typ: "varchar(8)"},
				{name: "localidade", typ: "varchar(80)"},
				{name: "created_at", typ: "timestamp", notNull: true},
				{name: "updated_at", typ: "timestamp", notNull: true},
			}, indexes: [][]string{{"numero_utente"}}},
			{name: "consultas", cols: []column{
				{name: "id", typ: "id"},
				{name: "consulta_uuid", typ: "uuid", notNull: true, unique: true},
				{name: "utente_id", typ: "int", notNull: true, ref: "utentes", orphans: true},
				{name: "medico_id", typ: "int", notNull: true, ref: "medicos"},
				{name: "hospital_id", typ: "int", notNull: true, ref: "hospitais"},
				{name: "data_hora", typ: "timestamp", notNull: true},
				{name: "tipo", typ: "varchar(16)", notNull: true},
				{name: "estado", typ: "varchar(12)", notNull: true},
				{name: "valor_faturado", typ: "numeric(10,2)", notNull: true},
				{name: "created_at", typ: "timestamp", notNull: true},
				{name: "updated_at", typ: "timestamp", notNull: true},
			}, indexes: [][]string{{"utente_id"}, {"medico_id"}}},
			{name: "prescricoes", cols: []column{
				{name: "id", typ: "id"},
				{name: "consulta_id", typ: "int", notNull: true, ref: "consultas"},
				{name: "numero_receita", typ: "varchar(19)", notNull: true},
				{name: "medicamento", typ: "varchar(80)", notNull: true},
				{name: "posologia", typ: "varchar(60)", notNull: true},
				{name: "quantidade", typ: "int", notNull: true},
				{name: "created_at", typ: "timestamp", notNull: true},
			}, indexes: [][]string{{"consulta_id"}}},
			{name: "exames", cols: []column{
				{name: "id", typ: "id"},
				{name: "utente_id", typ: "int", notNull: true, ref: "utentes"},
				{name: "tipo_exame", typ: "varchar(40)", notNull: true},
				{name: "resultado", typ: "numeric(10,2)", notNull: true},
				{name: "unidade", typ: "varchar(10)", notNull: true},
				{name: "data_colheita", typ: "timestamp", notNull: true},
				{name: "created_at", typ: "timestamp", notNull: true},
				{name: "updated_at", typ: "timestamp", notNull: true},
			}, indexes: [][]string{{"utente_id"}}},
		},
		views: []view{
			{name: "consultas_por_especialidade", sql: `SELECT m.especialidade,
       COUNT(*) AS consultas,
       SUM(CASE WHEN c.estado = 'realizada' THEN 1 ELSE 0 END) AS realizadas,
       SUM(CASE WHEN c.estado = 'faltou' THEN 1 ELSE 0 END) AS faltas,
       ROUND(100.0 * SUM(CASE WHEN c.estado = 'faltou' THEN 1 ELSE 0 END) / COUNT(*), 1) AS taxa_absentismo
FROM {{.S}}consultas c
JOIN {{.S}}medicos m ON m.id = c.medico_id
GROUP BY m.especialidade`},
			{name: "utentes_ativos", sql: `WITH ultima AS (
  SELECT utente_id, MAX(data_hora) AS ultima_consulta, COUNT(*) AS consultas
  FROM {{.S}}consultas
  WHERE estado = 'realizada'
  GROUP BY utente_id
)
SELECT u.id AS utente_id, u.numero_utente, u.nome, u.localidade, u.email,
       ul.ultima_consulta, ul.consultas
FROM {{.S}}utentes u
JOIN ultima ul ON ul.utente_id = u.id
WHERE ul.ultima_consulta >= {{.DaysAgo 365}}`},
			{name: "agenda_medicos", sql: `SELECT m.id AS medico_id, m.numero_cedula, m.nome AS medico, m.especialidade,
       h.nome AS hospital, c.id AS consulta_id, c.data_hora, c.tipo, c.utente_id
FROM {{.S}}consultas c
JOIN {{.S}}medicos m ON m.id = c.medico_id
JOIN {{.S}}hospitais h ON h.id = c.hospital_id
WHERE c.estado = 'agendada'`},
			{name: "consultas_mensais", materialized: true, sql: `SELECT {{.Month "c.data_hora"}} AS mes, h.regiao, h.nome AS hospital,
       COUNT(*) AS consultas,
       SUM(c.valor_faturado) AS valor_faturado
FROM {{.S}}consultas c
JOIN {{.S}}hospitais h ON h.id = c.hospital_id
GROUP BY {{.Month "c.data_hora"}}, h.regiao, h.nome`},
		},
		mutation: mutation{retypes: []retype{{"medicos", "numero_cedula", "text"}}},
		fill:     healthRows,
	}
}

func healthRows(g *gen) map[string][][]any {
	r := g.r
	out := map[string][][]any{}

	nHosp := g.n(24)
	hospitais := make([][]any, nHosp)
	for i := range nHosp {
		c := cities[i%len(cities)]
		kind := []string{"Hospital Distrital ", "Centro Hospitalar ", "Centro de Saúde "}[(i/len(cities))%3]
		cp := fmt.Sprintf("%04d-%03d", c.prefix+r.IntN(c.span), r.IntN(1000))
		created := g.within(g.daysAgo(10*365), g.daysAgo(3*365))
		hospitais[i] = []any{int64(i + 1), kind + c.of, ValidNIPC(r), c.region, c.name, cp, DialVariant(r, PTLandlineIn(r, c.name)),
			created, g.after(created)}
	}
	// Reference data changes rarely, but someone edited a hospital yesterday.
	hospitais[r.IntN(nHosp)][8] = g.lastDays(1)
	out["hospitais"] = hospitais

	nMed := g.n(250)
	medicos := make([][]any, nMed)
	medHosp := make([]int64, nMed)
	for i := range nMed {
		nome := PersonName(r)
		medHosp[i] = g.id(nHosp)
		created := g.lastDays(8 * 365)
		// Cédulas are unique: spread them by index, with a random gap.
		cedula := 10000 + i*150 + r.IntN(150)
		medicos[i] = []any{int64(i + 1), cedula, nome, pick(r, specialties), medHosp[i], Email(r, nome),
			DialVariant(r, PTMobile(r)), ValidIBANPT(r), created, g.after(created)}
	}
	out["medicos"] = medicos

	nUt := g.n(3000)
	nullEmail := g.marks(nUt, 0.05, 1)
	badNIF := g.marks(nUt, 0.03, 1)
	dupSNS := g.marks(nUt, 0.01, 1)
	dupSNS[0] = false
	badCP := g.marks(nUt, 0.02, 1)
	utentes := make([][]any, nUt)
	for i := range nUt {
		nome := PersonName(r)
		// SNS numbers here start with 1, so they neither look like phones nor pass as NIFs.
		sns := "1" + digits(r, 8)
		if dupSNS[i] {
			sns = utentes[r.IntN(i)][1].(string)
		}
		nif := ValidNIF(r)
		if badNIF[i] {
			nif = InvalidNIF(r)
		}
		born := g.within(g.daysAgo(95*365), g.daysAgo(30))
		c, cp := pickCity(r)
		if badCP[i] {
			cp = InvalidPostalCodePT(r)
		}
		created := g.lastDays(10 * 365)
		utentes[i] = []any{int64(i + 1), sns, nif, nome, DateTextPT(born), string("FM"[r.IntN(2)]),
			nullable(nullEmail[i], Email(r, nome)), DialVariant(r, PTMobile(r)), cp, c.name, created, g.after(created)}
	}
	out["utentes"] = utentes

	nCon := g.n(6000)
	orphan := g.marks(nCon, 0.01, 1)
	pricey := g.marks(nCon, 0.003, 1)
	consultas := make([][]any, nCon)
	var prescricoes [][]any
	var rx []int // indexes of prescriptions, for the outliers
	for i := range nCon {
		id := int64(i + 1)
		ut := g.skewed(nUt)
		if orphan[i] {
			ut = int64(nUt + 1 + r.IntN(400))
		}
		med := int(g.id(nMed)) - 1
		when := g.within(g.daysAgo(365), g.now.AddDate(0, 0, 30)).Truncate(15 * time.Minute)
		tipo := pickWeighted(r, []string{"presencial", "teleconsulta", "domicílio"}, []int{72, 22, 6})
		estado := "agendada"
		if when.Before(g.now) {
			estado = pickWeighted(r, []string{"realizada", "faltou", "cancelada"}, []int{84, 11, 5})
		}
		valor := 0.0
		if estado == "realizada" {
			valor = round2(30 + 90*r.Float64())
			if pricey[i] {
				valor = round2(valor * float64(30+r.IntN(50)))
			}
		}
		// Booked one to sixty days before, and never after the anchor.
		created := minTime(when.AddDate(0, 0, -(1+r.IntN(60))), g.now.Add(-time.Duration(r.IntN(86400))*time.Second))
		updated := created
		if !when.After(g.now) {
			updated = minTime(when.Add(time.Duration(20+r.IntN(60))*time.Minute), g.now)
		}
		consultas[i] = []any{id, UUID(r), ut, int64(med + 1), medHosp[med], when, tipo, estado, money(valor), created, updated}

		if estado != "realizada" || !g.chance(0.6) {
			continue
		}
		receita := digits(r, 19)
		for range 1 + r.IntN(3) {
			rx = append(rx, len(prescricoes))
			prescricoes = append(prescricoes, []any{int64(len(prescricoes) + 1), id, receita, pick(r, medicines),
				pick(r, []string{"1 comprimido de 8 em 8 horas", "1 comprimido por dia", "2 vezes ao dia", "Em SOS", "1 cápsula ao pequeno-almoço"}),
				1 + r.IntN(3), minTime(updated, g.now)})
		}
	}
	for k, big := range g.marks(len(rx), 0.003, 1) {
		if big {
			prescricoes[rx[k]][5] = 20 + r.IntN(80)
		}
	}
	out["consultas"], out["prescricoes"] = consultas, prescricoes

	// The laboratory feed stopped about four months ago.
	nEx := g.n(2500)
	exames := make([][]any, nEx)
	for i := range nEx {
		t := labTests[r.IntN(len(labTests))]
		mid, half := (t.low+t.high)/2, (t.high-t.low)/2
		res := math.Max(0.1, mid+half*1.2*r.NormFloat64())
		taken := g.within(g.daysAgo(500), g.daysAgo(125))
		created := taken.Add(time.Duration(2+r.IntN(48)) * time.Hour)
		exames[i] = []any{int64(i + 1), g.id(nUt), t.name, money(res), t.unit, taken, created,
			created.Add(time.Duration(r.IntN(72)) * time.Hour)}
	}
	out["exames"] = exames
	return out
}
