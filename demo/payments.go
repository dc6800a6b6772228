package demo

import (
	"math/rand/v2"
	"time"
)

// merchantKind is a merchant category code with how its shops are named and what they charge.
type merchantKind struct {
	mcc    int
	name   func(r *rand.Rand) string
	median float64 // typical ticket in euros
}

var merchantKinds = []merchantKind{
	{5411, func(r *rand.Rand) string { return "Supermercado " + pick(r, companyWords) }, 32},
	{5812, func(r *rand.Rand) string { return "Restaurante O " + pick(r, surnames) }, 24},
	{5814, func(r *rand.Rand) string { return "Snack-Bar " + pick(r, companyWords) }, 7},
	{5462, func(r *rand.Rand) string { return "Pastelaria " + pick(r, companyWords) }, 5},
	{5912, func(r *rand.Rand) string { return "Farmácia " + pick(r, surnames) }, 18},
	{5541, func(r *rand.Rand) string { return "Posto de Abastecimento " + pick(r, companyWords) }, 45},
	{5651, func(r *rand.Rand) string { return "Boutique " + pick(r, firstNamesF) }, 55},
	{5732, func(r *rand.Rand) string { return "Eletrónica " + pick(r, companyWords) }, 90},
	{7011, func(r *rand.Rand) string { return "Hotel " + pick(r, companyWords) }, 140},
	{4121, func(r *rand.Rand) string { return "Táxis " + pick(r, surnames) }, 14},
}

func paymentsPack() *packDef {
	return &packDef{
		Pack: Pack{
			Key:         "payments",
			Name:        "Pagamentos (contas e cartões)",
			Description: "Contas, cartões mascarados, transações e liquidações de um prestador de pagamentos. Tem IBAN e NIF inválidos, transações repetidas, cartões apagados e liquidações paradas há meses.",
			Industry:    "Serviços financeiros",
			Schema:      "pagamentos",
			Defects: []Defect{
				{DefectNulls, "pagamentos.contas", "email", "Cerca de 5% das contas sem email."},
				{DefectInvalidIBAN, "pagamentos.contas", "iban", "Cerca de 2% dos IBAN falham o mod-97."},
				{DefectInvalidNIF, "pagamentos.contas", "nif_titular", "Cerca de 3% dos NIF de titulares com dígito de controlo errado."},
				{DefectDateAsText, "pagamentos.contas", "data_abertura", "Data de abertura guardada como texto dd/mm/aaaa."},
				{DefectOutliers, "pagamentos.contas", "saldo", "Algumas contas com saldos de milhões, muito acima das restantes."},
				{DefectDuplicateKeys, "pagamentos.transacoes", "transacao_uuid", "Cerca de 1% das transações repetem o identificador de outra (reenvios)."},
				{DefectOrphans, "pagamentos.transacoes", "cartao_id", "Cerca de 1% das transações de cartões já apagados (a FK no Postgres é NOT VALID)."},
				{DefectOutliers, "pagamentos.transacoes", "valor", "Cerca de 0,3% das transações 100 a 500 vezes acima do valor habitual."},
				{DefectStaleTimestamps, "pagamentos.liquidacoes", "updated_at", "As liquidações pararam há cerca de 4 meses."},
				{DefectTypeChangeNextScan, "pagamentos.comerciantes", "mcc", "No próximo scan o código MCC passa de inteiro a texto."},
			},
		},
		salt: 0x5041_4741,
		tables: []table{
			{name: "comerciantes", cols: []column{
				{name: "id", typ: "id"},
				{name: "nipc", typ: "varchar(9)", notNull: true},
				{name: "nome", typ: "varchar(120)", notNull: true},
				{name: "mcc", typ: "int", notNull: true},
				{name: "email", typ: "varchar(160)"},
				{name: "telefone", typ: "varchar(20)"},
				{name: "iban", typ: "varchar(34)", notNull: true},
				{name: "codigo_postal", typ: "varchar(8)"},
				{name: "cidade", typ: "varchar(80)"},
				{name: "created_at", typ: "timestamp", notNull: true},
				{name: "updated_at", typ: "timestamp", notNull: true},
			}},
			{name: "contas", cols: []column{
				{name: "id", typ: "id"},
				{name: "iban", typ: "varchar(34)", notNull: true},
				{name: "titular", typ: "varchar(120)", notNull: true},
				{name: "nif_titular", typ: "varchar(9)", notNull: true},
				{name: "email", typ: "varchar(160)"},
				{name: "telemovel", typ: "varchar(20)"},
				{name: "tipo", typ: "varchar(12)", notNull: true},
				{name: "saldo", typ: "numeric(14,2)", notNull: true},
				{name: "data_abertura", typ: "varchar(10)"},
				{name: "created_at", typ: "timestamp", notNull: true},
				{name: "updated_at", typ: "timestamp", notNull: true},
			}},
			{name: "cartoes_mascarados", cols: []column{
				{name: "id", typ: "id"},
				{name: "conta_id", typ: "int", notNull: true, ref: "contas"},
				{name: "cartao_uuid", typ: "uuid", notNull: true, unique: true},
				{name: "pan_mascarado", typ: "varchar(19)", notNull: true},
				{name: "rede", typ: "varchar(12)", notNull: true},
				{name: "validade", typ: "varchar(5)", notNull: true},
				{name: "ativo", typ: "bool", notNull: true},
				{name: "created_at", typ: "timestamp", notNull: true},
				{name: "updated_at", typ: "timestamp", notNull: true},
			}, indexes: [][]string{{"conta_id"}}},
			{name: "transacoes", cols: []column{
				{name: "id", typ: "id"},
				{name: "transacao_uuid", typ: "uuid", notNull: true},
				{name: "cartao_id", typ: "int", notNull: true, ref: "cartoes_mascarados", orphans: true},
				{name: "comerciante_id", typ: "int", notNull: true, ref: "comerciantes"},
				{name: "valor", typ: "numeric(12,2)", notNull: true},
				{name: "moeda", typ: "varchar(3)", notNull: true},
				{name: "estado", typ: "varchar(12)", notNull: true},
				{name: "codigo_resposta", typ: "varchar(2)", notNull: true},
				{name: "data_hora", typ: "timestamp", notNull: true},
				{name: "created_at", typ: "timestamp", notNull: true},
			}, indexes: [][]string{{"cartao_id"}, {"comerciante_id"}, {"data_hora"}}},
			{name: "liquidacoes", cols: []column{
				{name: "id", typ: "id"},
				{name: "comerciante_id", typ: "int", notNull: true, ref: "comerciantes"},
				{name: "data_liquidacao", typ: "date", notNull: true},
				{name: "valor_bruto", typ: "numeric(14,2)", notNull: true},
				{name: "comissao", typ: "numeric(12,2)", notNull: true},
				{name: "valor_liquido", typ: "numeric(14,2)", notNull: true},
				{name: "iban_destino", typ: "varchar(34)", notNull: true},
				{name: "created_at", typ: "timestamp", notNull: true},
				{name: "updated_at", typ: "timestamp", notNull: true},
			}, indexes: [][]string{{"comerciante_id"}}},
		},
		views: []view{
			{name: "volume_por_comerciante", sql: `SELECT m.id AS comerciante_id, m.nome, m.mcc,
       COUNT(t.id) AS transacoes,
       SUM(CASE WHEN t.estado = 'aprovada' THEN t.valor ELSE 0 END) AS volume_aprovado,
       SUM(CASE WHEN t.estado = 'recusada' THEN 1 ELSE 0 END) AS recusadas
FROM {{.S}}comerciantes m
LEFT JOIN {{.S}}transacoes t ON t.comerciante_id = m.id
GROUP BY m.id, m.nome, m.mcc`},
			{name: "transacoes_suspeitas", sql: `WITH media AS (
  SELECT comerciante_id, AVG(valor) AS valor_medio
  FROM {{.S}}transacoes
  WHERE estado = 'aprovada'
  GROUP BY comerciante_id
)
SELECT t.id AS transacao_id, t.transacao_uuid, t.cartao_id, c.pan_mascarado, t.comerciante_id,
       t.valor, ROUND(m.valor_medio, 2) AS valor_medio_comerciante, t.data_hora,
       CASE WHEN t.valor > 10 * m.valor_medio THEN 'valor_atipico'
            WHEN t.estado = 'recusada' THEN 'recusada_valor_alto'
            ELSE 'outro' END AS motivo
FROM {{.S}}transacoes t
JOIN media m ON m.comerciante_id = t.comerciante_id
LEFT JOIN {{.S}}cartoes_mascarados c ON c.id = t.cartao_id
WHERE t.valor > 10 * m.valor_medio OR (t.estado = 'recusada' AND t.valor > 500)`},
			{name: "saldos_por_tipo", sql: `SELECT tipo, COUNT(*) AS contas, SUM(saldo) AS saldo_total, ROUND(AVG(saldo), 2) AS saldo_medio
FROM {{.S}}contas
GROUP BY tipo`},
			{name: "volume_diario", materialized: true, sql: `SELECT {{.Day "t.data_hora"}} AS dia, c.rede,
       COUNT(*) AS transacoes,
       SUM(t.valor) AS volume
FROM {{.S}}transacoes t
JOIN {{.S}}cartoes_mascarados c ON c.id = t.cartao_id
WHERE t.estado = 'aprovada'
GROUP BY {{.Day "t.data_hora"}}, c.rede`},
		},
		mutation: mutation{retypes: []retype{{"comerciantes", "mcc", "text"}}},
		fill:     paymentsRows,
	}
}

func paymentsRows(g *gen) map[string][][]any {
	r := g.r
	out := map[string][][]any{}

	nCom := g.n(300)
	comerciantes := make([][]any, nCom)
	kinds := make([]merchantKind, nCom)
	ibans := make([]string, nCom)
	for i := range nCom {
		k := merchantKinds[r.IntN(len(merchantKinds))]
		kinds[i] = k
		nome := k.name(r)
		ibans[i] = ValidIBANPT(r)
		c, cp := pickCity(r)
		created := g.lastDays(5 * 365)
		comerciantes[i] = []any{int64(i + 1), ValidNIPC(r), nome, k.mcc, CompanyEmail(r, nome), DialVariant(r, PTLandlineIn(r, c.name)),
			ibans[i], cp, c.name, created, g.after(created)}
	}
	out["comerciantes"] = comerciantes

	nCon := g.n(2000)
	nullEmail := g.marks(nCon, 0.05, 1)
	badIBAN := g.marks(nCon, 0.02, 1)
	badNIF := g.marks(nCon, 0.03, 1)
	rich := g.marks(nCon, 0.002, 1)
	contas := make([][]any, nCon)
	for i := range nCon {
		tipo := pickWeighted(r, []string{"ordem", "poupanca", "empresa"}, []int{70, 20, 10})
		var titular, nif, email string
		if tipo == "empresa" {
			titular, nif = CompanyName(r), ValidNIPC(r)
			email = CompanyEmail(r, titular)
		} else {
			titular, nif = PersonName(r), ValidNIF(r)
			email = Email(r, titular)
		}
		if badNIF[i] {
			nif = InvalidNIF(r)
		}
		iban := ValidIBANPT(r)
		if badIBAN[i] {
			iban = InvalidIBANPT(r)
		}
		if g.chance(0.15) {
			iban = GroupIBAN(iban)
		}
		saldo := g.amount(1800, 1.1)
		if rich[i] {
			saldo = round2(2e6 + 7e6*r.Float64())
		}
		opened := g.within(g.daysAgo(12*365), g.daysAgo(10))
		created := g.within(opened, opened.Add(8*time.Hour))
		contas[i] = []any{int64(i + 1), iban, titular, nif, nullable(nullEmail[i], email), DialVariant(r, PTMobile(r)),
			tipo, money(saldo), DateTextPT(opened), created, g.after(created)}
	}
	out["contas"] = contas

	var cartoes [][]any
	for c := range nCon {
		for range []int{0, 1, 1, 1, 1, 1, 2, 2}[r.IntN(8)] {
			rede := pickWeighted(r, []string{"Visa", "Mastercard", "Maestro"}, []int{45, 40, 15})
			var bin string
			switch rede {
			case "Visa":
				bin = "4" + digits(r, 3)
			case "Mastercard":
				bin = "5" + string("12345"[r.IntN(5)]) + digits(r, 2)
			default:
				bin = "6759"
			}
			created := g.lastDays(4 * 365)
			expires := created.AddDate(4, 0, 0)
			cartoes = append(cartoes, []any{int64(len(cartoes) + 1), int64(c + 1), UUID(r), bin + " **** **** " + digits(r, 4), rede,
				expires.Format("01/06"), expires.After(g.now) && !g.chance(0.05), created, g.after(created)})
		}
	}
	out["cartoes_mascarados"] = cartoes
	nCard := len(cartoes)

	nTrx := g.n(6000)
	when := make([]time.Time, nTrx)
	for i := range when {
		when[i] = g.lastDays(120)
	}
	// Transactions arrive in time order, as an acquirer's feed does.
	sortTimes(when)
	dup := g.marks(nTrx, 0.01, 1)
	dup[0] = false
	orphan := g.marks(nTrx, 0.01, 1)
	huge := g.marks(nTrx, 0.003, 1)
	transacoes := make([][]any, nTrx)
	for i := range nTrx {
		m := int(g.skewed(nCom)) - 1
		valor := g.amount(kinds[m].median, 0.7)
		if huge[i] {
			valor = round2(valor * float64(100+r.IntN(400)))
		}
		estado, codigo := "aprovada", "00"
		switch n := r.IntN(100); {
		case n < 4:
			estado, codigo = "recusada", "51" // insufficient funds
		case n < 6:
			estado, codigo = "recusada", "05" // do not honour
		case n < 8:
			estado = "estornada"
		}
		uid := UUID(r)
		if dup[i] {
			uid = transacoes[max(0, i-1-r.IntN(min(i, 20)))][1].(string)
		}
		card := g.id(nCard)
		if orphan[i] {
			card = int64(nCard + 1 + r.IntN(300))
		}
		transacoes[i] = []any{int64(i + 1), uid, card, int64(m + 1), money(valor), "EUR", estado, codigo, when[i],
			minTime(when[i].Add(time.Duration(1+r.IntN(30))*time.Second), g.now)}
	}
	out["transacoes"] = transacoes

	// Monthly settlements stopped four months ago.
	var liquidacoes [][]any
	for m := range nCom {
		for back := 15; back >= 4; back-- {
			first := time.Date(g.now.Year(), g.now.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, -back, 0)
			bruto := g.amount(kinds[m].median*400, 0.5)
			fee := round2(bruto * (0.008 + 0.007*r.Float64()))
			created := first.Add(time.Duration(2*60+r.IntN(120)) * time.Minute)
			liquidacoes = append(liquidacoes, []any{int64(len(liquidacoes) + 1), int64(m + 1), first, money(bruto), money(fee),
				money(bruto - fee), ibans[m], created, created})
		}
	}
	out["liquidacoes"] = liquidacoes
	return out
}
