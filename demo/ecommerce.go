package demo

import (
	"fmt"
	"time"
)

type product struct {
	name  string
	price float64
	grams int
}

var shopCategories = []struct {
	name, code string
	items      []product
}{
	{"Eletrónica", "ELE", []product{
		{"Auscultadores Bluetooth", 49.90, 250}, {"Carregador USB-C 65 W", 29.90, 180},
		{"Powerbank 10000 mAh", 24.90, 220}, {"Coluna portátil", 39.90, 600}, {"Relógio inteligente", 89.90, 90},
	}},
	{"Casa", "CAS", []product{
		{"Conjunto de toalhas de algodão", 34.90, 1400}, {"Candeeiro de mesa", 27.50, 1100},
		{"Almofada decorativa", 14.90, 400}, {"Jogo de lençóis 150x200", 39.90, 1300}, {"Caneca de cerâmica", 7.90, 350},
	}},
	{"Moda", "MOD", []product{
		{"T-shirt de algodão orgânico", 15.90, 180}, {"Sapatilhas de corrida", 69.90, 800},
		{"Casaco impermeável", 79.90, 700}, {"Calças de ganga", 44.90, 600}, {"Mochila urbana", 34.90, 650},
	}},
	{"Desporto", "DES", []product{
		{"Tapete de ioga", 22.90, 1200}, {"Garrafa térmica 750 ml", 18.90, 400},
		{"Bola de futebol", 19.90, 420}, {"Halteres 2x5 kg", 32.90, 10200},
	}},
	{"Beleza", "BEL", []product{
		{"Creme hidratante 50 ml", 16.90, 90}, {"Protetor solar FPS 50", 14.50, 220}, {"Perfume 50 ml", 54.00, 300},
	}},
	{"Livros", "LIV", []product{
		{"Livro de receitas portuguesas", 19.90, 900}, {"Guia de viagem dos Açores", 16.60, 450},
		{"Romance policial", 17.70, 500},
	}},
}

var variants = []string{"Preto", "Branco", "Azul", "Verde", "Cinzento", "Vermelho", "Tamanho S", "Tamanho M", "Tamanho L"}

var carriers = []string{"CTT Expresso", "DPD", "GLS", "SEUR"}

func ecommercePack() *packDef {
	return &packDef{
		Pack: Pack{
			Key:         "ecommerce",
			Name:        "E-commerce (loja online)",
			Description: "Encomendas, pagamentos e envios de uma loja online portuguesa. Tem encomendas com número repetido, linhas de produtos apagados, códigos postais mal escritos e carrinhos abandonados há meses.",
			Industry:    "Retalho online",
			Schema:      "loja",
			Defects: []Defect{
				{DefectNulls, "loja.clientes", "email", "Cerca de 5% dos clientes sem email."},
				{DefectInvalidNIF, "loja.clientes", "nif", "Cerca de 4% dos NIF indicados com dígito de controlo errado (o NIF é opcional)."},
				{DefectDateAsText, "loja.clientes", "data_nascimento", "Data de nascimento guardada como texto dd/mm/aaaa."},
				{DefectDuplicateKeys, "loja.encomendas", "numero_encomenda", "Cerca de 1% das encomendas repetem o número de outra."},
				{DefectOutliers, "loja.encomendas", "total", "Cerca de 0,3% das encomendas com quantidades de revenda, dezenas de vezes o total habitual."},
				{DefectOrphans, "loja.linhas_encomenda", "produto_id", "Cerca de 1% das linhas apontam para produtos apagados do catálogo (a FK no Postgres é NOT VALID)."},
				{DefectInvalidPostalCode, "loja.envios", "codigo_postal_destino", "Cerca de 2% dos códigos postais de destino fora do formato dddd-ddd."},
				{DefectStaleTimestamps, "loja.carrinhos", "updated_at", "O registo de carrinhos parou há cerca de 4 meses."},
				{DefectTypeChangeNextScan, "loja.encomendas", "canal", "No próximo scan o canal passa de código inteiro a texto."},
			},
		},
		salt: 0x4c4f_4a41,
		tables: []table{
			{name: "clientes", cols: []column{
				{name: "id", typ: "id"},
				{name: "cliente_uuid", typ: "uuid", notNull: true, unique: true},
				{name: "nome", typ: "varchar(120)", notNull: true},
				{name: "email", typ: "varchar(160)"},
				{name: "telemovel", typ: "varchar(20)"},
				{name: "nif", typ: "varchar(9)"},
				{name: "data_nascimento", typ: "varchar(10)"},
				{name: "codigo_postal", typ: "varchar(8)"},
				{name: "cidade", typ: "varchar(80)"},
				{name: "created_at", typ: "timestamp", notNull: true},
				{name: "updated_at", typ: "timestamp", notNull: true},
			}},
			{name: "produtos", cols: []column{
				{name: "id", typ: "id"},
				{name: "sku", typ: "varchar(20)", notNull: true, unique: true},
				{name: "nome", typ: "varchar(160)", notNull: true},
				{name: "categoria", typ: "varchar(40)", notNull: true},
				{name: "preco", typ: "numeric(10,2)", notNull: true},
				{name: "peso_gramas", typ: "int"},
				{name: "ativo", typ: "bool", notNull: true},
				{name: "created_at", typ: "timestamp", notNull: true},
				{name: "updated_at", typ: "timestamp", notNull: true},
			}},
			{name: "encomendas", cols: []column{
				{name: "id", typ: "id"},
				{name: "numero_encomenda", typ: "varchar(20)", notNull: true},
				{name: "cliente_id", typ: "int", notNull: true, ref: "clientes"},
				{name: "estado", typ: "varchar(12)", notNull: true},
				{name: "canal", typ: "int", notNull: true},
				{name: "subtotal", typ: "numeric(12,2)", notNull: true},
				{name: "portes", typ: "numeric(8,2)", notNull: true},
				{name: "total", typ: "numeric(12,2)", notNull: true},
				{name: "created_at", typ: "timestamp", notNull: true},
				{name: "updated_at", typ: "timestamp", notNull: true},
			}, indexes: [][]string{{"cliente_id"}, {"created_at"}}},
			{name: "linhas_encomenda", cols: []column{
				{name: "id", typ: "id"},
				{name: "encomenda_id", typ: "int", notNull: true, ref: "encomendas"},
				{name: "produto_id", typ: "int", notNull: true, ref: "produtos", orphans: true},
				{name: "quantidade", typ: "int", notNull: true},
				{name: "preco_unitario", typ: "numeric(10,2)", notNull: true},
			}, indexes: [][]string{{"encomenda_id"}}},
			{name: "pagamentos", cols: []column{
				{name: "id", typ: "id"},
				{name: "encomenda_id", typ: "int", notNull: true, ref: "encomendas"},
				{name: "metodo", typ: "varchar(12)", notNull: true},
				{name: "referencia_mb", typ: "varchar(9)"},
				{name: "iban_reembolso", typ: "varchar(34)"},
				{name: "valor", typ: "numeric(12,2)", notNull: true},
				{name: "estado", typ: "varchar(12)", notNull: true},
				{name: "pago_em", typ: "timestamp"},
				{name: "created_at", typ: "timestamp", notNull: true},
			}, indexes: [][]string{{"encomenda_id"}}},
			{name: "envios", cols: []column{
				{name: "id", typ: "id"},
				{name: "encomenda_id", typ: "int", notNull: true, ref: "encomendas"},
				{name: "transportadora", typ: "varchar(20)", notNull: true},
				{name: "codigo_rastreio", typ: "varchar(20)", notNull: true},
				{name: "codigo_postal_destino", typ: "varchar(8)"},
				{name: "estado", typ: "varchar(12)", notNull: true},
				{name: "enviado_em", typ: "timestamp", notNull: true},
				{name: "entregue_em", typ: "timestamp"},
				{name: "updated_at", typ: "timestamp", notNull: true},
			}},
			{name: "carrinhos", cols: []column{
				{name: "id", typ: "id"},
				{name: "sessao_uuid", typ: "uuid", notNull: true},
				{name: "cliente_id", typ: "int", ref: "clientes"},
				{name: "produto_id", typ: "int", notNull: true, ref: "produtos"},
				{name: "quantidade", typ: "int", notNull: true},
				{name: "created_at", typ: "timestamp", notNull: true},
				{name: "updated_at", typ: "timestamp", notNull: true},
			}},
		},
		views: []view{
			{name: "vendas_por_dia", sql: `SELECT {{.Day "e.created_at"}} AS dia, e.canal,
       COUNT(*) AS encomendas,
       SUM(e.total) AS total_vendas,
       ROUND(AVG(e.total), 2) AS ticket_medio
FROM {{.S}}encomendas e
WHERE e.estado <> 'cancelada'
GROUP BY {{.Day "e.created_at"}}, e.canal`},
			{name: "clientes_ativos", sql: `WITH compras AS (
  SELECT cliente_id, COUNT(*) AS encomendas, SUM(total) AS gasto, MAX(created_at) AS ultima_compra
  FROM {{.S}}encomendas
  WHERE estado <> 'cancelada'
  GROUP BY cliente_id
)
SELECT c.id AS cliente_id, c.cliente_uuid, c.nome, c.email, c.cidade,
       p.encomendas, p.gasto, p.ultima_compra,
       CASE WHEN p.encomendas >= 5 THEN 'fiel' WHEN p.encomendas >= 2 THEN 'recorrente' ELSE 'novo' END AS segmento
FROM {{.S}}clientes c
JOIN compras p ON p.cliente_id = c.id
WHERE p.ultima_compra >= {{.DaysAgo 90}}`},
			{name: "produtos_mais_vendidos", sql: `SELECT pr.id AS produto_id, pr.sku, pr.nome, pr.categoria,
       SUM(l.quantidade) AS unidades,
       SUM(l.quantidade * l.preco_unitario) AS receita
FROM {{.S}}linhas_encomenda l
JOIN {{.S}}produtos pr ON pr.id = l.produto_id
JOIN {{.S}}encomendas e ON e.id = l.encomenda_id
WHERE e.estado <> 'cancelada'
GROUP BY pr.id, pr.sku, pr.nome, pr.categoria`},
			{name: "vendas_mensais_por_canal", materialized: true, sql: `SELECT {{.Month "e.created_at"}} AS mes, e.canal,
       COUNT(*) AS encomendas,
       SUM(e.total) AS total
FROM {{.S}}encomendas e
WHERE e.estado <> 'cancelada'
GROUP BY {{.Month "e.created_at"}}, e.canal`},
		},
		mutation: mutation{retypes: []retype{{"encomendas", "canal", "text"}}},
		fill:     ecommerceRows,
	}
}

func ecommerceRows(g *gen) map[string][][]any {
	r := g.r
	out := map[string][][]any{}

	nCli := g.n(2500)
	nullEmail := g.marks(nCli, 0.05, 1)
	postal := make([]string, nCli)
	var clientes [][]any
	var withNIF []int
	for i := range nCli {
		nome := PersonName(r)
		var nif any
		if g.chance(0.6) {
			nif = ValidNIF(r)
			withNIF = append(withNIF, i)
		}
		born := g.within(g.daysAgo(80*365), g.daysAgo(18*365))
		c, cp := pickCity(r)
		postal[i] = cp
		created := g.lastDays(4 * 365)
		clientes = append(clientes, []any{int64(i + 1), UUID(r), nome, nullable(nullEmail[i], Email(r, nome)),
			DialVariant(r, PTMobile(r)), nif, DateTextPT(born), cp, c.name, created, g.after(created)})
	}
	for k, bad := range g.marks(len(withNIF), 0.04, 1) {
		if bad {
			clientes[withNIF[k]][5] = InvalidNIF(r)
		}
	}
	out["clientes"] = clientes

	nProd := g.n(400)
	prices := make([]float64, nProd)
	produtos := make([][]any, nProd)
	for i := range nProd {
		cat := shopCategories[r.IntN(len(shopCategories))]
		p := cat.items[r.IntN(len(cat.items))]
		prices[i] = round2(p.price * (0.85 + 0.3*r.Float64()))
		created := g.lastDays(3 * 365)
		produtos[i] = []any{int64(i + 1), fmt.Sprintf("%s-%05d", cat.code, i+1), p.name + " — " + pick(r, variants), cat.name,
			money(prices[i]), p.grams, !g.chance(0.1), created, g.after(created)}
	}
	out["produtos"] = produtos

	nEnc := g.n(4000)
	placed := make([]time.Time, nEnc)
	for i := range placed {
		placed[i] = g.lastDays(365)
	}
	sortTimes(placed)
	dupNum := g.marks(nEnc, 0.01, 1)
	dupNum[0] = false
	bulk := g.marks(nEnc, 0.003, 1)
	var encomendas, linhas, pagamentos, envios [][]any
	for i := range nEnc {
		id := int64(i + 1)
		created := placed[i]
		numero := fmt.Sprintf("ENC-%d-%06d", created.Year(), i+1)
		if dupNum[i] {
			numero = encomendas[max(0, i-1-r.IntN(min(i, 30)))][1].(string)
		}
		cli := g.skewed(nCli)
		age := g.now.Sub(created)
		var estado string
		switch {
		case age < 48*time.Hour:
			estado = pickWeighted(r, []string{"pendente", "paga"}, []int{40, 60})
		case age < 7*24*time.Hour:
			estado = pickWeighted(r, []string{"enviada", "entregue", "cancelada"}, []int{60, 35, 5})
		default:
			estado = pickWeighted(r, []string{"entregue", "cancelada"}, []int{94, 6})
		}
		canal := []int{1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 3}[r.IntN(11)] // 1 web, 2 app, 3 marketplace
		subtotal := 0.0
		for k := range 1 + r.IntN(4) {
			p := r.IntN(nProd)
			q := 1 + r.IntN(3)
			if bulk[i] && k == 0 {
				q = 150 + r.IntN(250)
			}
			subtotal += float64(q) * prices[p]
			linhas = append(linhas, []any{int64(len(linhas) + 1), id, int64(p + 1), q, money(prices[p])})
		}
		portes := 0.0
		if subtotal < 50 {
			portes = []float64{3.99, 4.99}[r.IntN(2)]
		}
		total := round2(subtotal + portes)
		updated := created
		if estado != "pendente" {
			updated = g.within(created, minTime(created.Add(10*24*time.Hour), g.now))
		}
		encomendas = append(encomendas, []any{id, numero, cli, estado, canal, money(subtotal), money(portes), money(total), created, updated})

		if estado == "pendente" {
			continue
		}
		metodo := pickWeighted(r, []string{"mbway", "multibanco", "cartao", "paypal"}, []int{40, 25, 30, 5})
		var ref any
		if metodo == "multibanco" {
			ref = digits(r, 9)
		}
		pagoEm := minTime(created.Add(time.Duration(1+r.IntN(120))*time.Minute), g.now)
		pagEstado := "confirmado"
		var ibanRefund any
		if estado == "cancelada" {
			// MB WAY and Multibanco refunds go by bank transfer to an IBAN the customer gives.
			pagEstado = "reembolsado"
			if metodo == "mbway" || metodo == "multibanco" {
				ibanRefund = ValidIBANPT(r)
			}
		}
		pagamentos = append(pagamentos, []any{int64(len(pagamentos) + 1), id, metodo, ref, ibanRefund, money(total), pagEstado, pagoEm, created})

		if estado != "enviada" && estado != "entregue" {
			continue
		}
		carrier := pick(r, carriers)
		tracking := "RR" + digits(r, 9) + "PT"
		if carrier != "CTT Expresso" {
			tracking = digits(r, 14)
		}
		sent := minTime(created.Add(time.Duration(12+r.IntN(48))*time.Hour), g.now)
		var delivered any
		state, last := "em_transito", sent
		if estado == "entregue" {
			d := minTime(sent.Add(time.Duration(18+r.IntN(72))*time.Hour), g.now)
			state, delivered, last = "entregue", d, d
		}
		envios = append(envios, []any{int64(len(envios) + 1), id, carrier, tracking, postal[cli-1], state, sent, delivered, last})
	}
	for k, bad := range g.marks(len(envios), 0.02, 1) {
		if bad {
			envios[k][4] = InvalidPostalCodePT(r)
		}
	}
	// Lines of products later deleted from the catalogue.
	for k, orphan := range g.marks(len(linhas), 0.01, 1) {
		if orphan {
			linhas[k][2] = int64(nProd + 1 + r.IntN(200))
		}
	}
	out["encomendas"], out["linhas_encomenda"], out["pagamentos"], out["envios"] = encomendas, linhas, pagamentos, envios

	// Cart tracking stopped about four months ago.
	nCar := g.n(1500)
	carrinhos := make([][]any, nCar)
	for i := range nCar {
		var cli any
		if g.chance(0.6) {
			cli = g.id(nCli)
		}
		created := g.within(g.daysAgo(300), g.daysAgo(125))
		carrinhos[i] = []any{int64(i + 1), UUID(r), cli, g.id(nProd), 1 + r.IntN(3), created,
			g.within(created, minTime(created.Add(48*time.Hour), g.daysAgo(120)))}
	}
	out["carrinhos"] = carrinhos
	return out
}
