package demo

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// article is a catalogue item: what it is, its unit, base price and VAT code.
type article struct {
	desc  string
	unit  string
	price float64
	iva   int // 1 normal (23%), 2 intermédia (13%), 3 reduzida (6%), 4 isento
}

var erpCategories = []struct {
	name  string
	items []article
}{
	{"Papelaria", []article{
		{"Papel A4 80g (resma 500 folhas)", "UN", 4.20, 1}, {"Caneta esferográfica azul (cx 50)", "CX", 9.90, 1},
		{"Agrafador de secretária", "UN", 7.50, 1}, {"Pasta de arquivo lombada larga", "UN", 2.35, 1},
		{"Envelopes DL com janela (cx 500)", "CX", 18.40, 1}, {"Bloco de notas A5 quadriculado", "UN", 1.60, 1},
	}},
	{"Informática", []article{
		{"Rato ótico sem fios", "UN", 12.90, 1}, {"Teclado USB layout PT", "UN", 17.50, 1},
		{"Monitor 24 polegadas Full HD", "UN", 129.00, 1}, {"Cabo HDMI 2 m", "UN", 6.90, 1},
		{"Toner laser preto", "UN", 64.00, 1}, {"Disco SSD 1 TB", "UN", 79.90, 1},
	}},
	{"Ferragens", []article{
		{"Parafuso inox M6x30 (cx 100)", "CX", 8.75, 1}, {"Bucha de nylon 8 mm (cx 200)", "CX", 5.40, 1},
		{"Dobradiça de latão 80 mm", "UN", 3.10, 1}, {"Fechadura de segurança", "UN", 42.00, 1},
		{"Chave de fendas isolada", "UN", 6.20, 1},
	}},
	{"Limpeza", []article{
		{"Detergente multiusos 5 L", "UN", 7.80, 1}, {"Lixívia 2 L", "UN", 1.45, 1},
		{"Papel higiénico (pack 12)", "UN", 5.90, 1}, {"Luvas de nitrilo (cx 100)", "CX", 8.30, 1},
	}},
	{"Alimentar", []article{
		{"Café em grão 1 kg", "KG", 16.50, 2}, {"Água mineral 1,5 L (pack 6)", "UN", 2.70, 3},
		{"Açúcar branco 1 kg", "KG", 1.10, 3}, {"Bolacha Maria 200 g", "UN", 0.89, 3},
		{"Azeite virgem extra 750 ml", "UN", 7.90, 3}, {"Vinho tinto Douro 75 cl", "UN", 5.60, 2},
	}},
	{"Embalagem", []article{
		{"Caixa de cartão 40x30x30", "UN", 1.25, 1}, {"Fita adesiva castanha 48 mm", "UN", 1.05, 1},
		{"Película aderente 300 m", "UN", 11.40, 1}, {"Etiquetas térmicas 100x150 (rolo)", "UN", 9.60, 1},
		{"Livro técnico de embalagem", "UN", 24.00, 3}, {"Serviço de paletização", "UN", 15.00, 4},
	}},
}

var ivaRate = map[int]float64{1: 0.23, 2: 0.13, 3: 0.06, 4: 0}

var warehouses = []string{"Armazém Lisboa (Alverca)", "Armazém Porto (Maia)"}

func erpPack() *packDef {
	return &packDef{
		Pack: Pack{
			Key:         "erp",
			Name:        "ERP (faturação e stocks)",
			Description: "Faturação, clientes, fornecedores e stocks de uma distribuidora grossista. Tem NIFs inválidos, faturas duplicadas, linhas órfãs e um stock que deixou de ser atualizado.",
			Industry:    "Comércio e distribuição",
			Schema:      "erp",
			Defects: []Defect{
				{DefectNulls, "erp.clientes", "email", "Cerca de 5% dos clientes sem email."},
				{DefectInvalidNIF, "erp.clientes", "nif", "Cerca de 3% dos NIF com dígito de controlo errado."},
				{DefectInvalidIBAN, "erp.fornecedores", "iban", "Cerca de 3% dos IBAN de fornecedores falham o mod-97 (pelo menos 2)."},
				{DefectDuplicateKeys, "erp.faturas", "numero_fatura", "Cerca de 1% das faturas repetem o número de uma fatura anterior."},
				{DefectOrphans, "erp.linhas_fatura", "fatura_id", "Cerca de 1% das linhas apontam para faturas apagadas (a FK no Postgres é NOT VALID)."},
				{DefectOutliers, "erp.linhas_fatura", "quantidade", "Cerca de 0,3% das linhas com quantidades 100 a 500 vezes maiores."},
				{DefectStaleTimestamps, "erp.stock", "updated_at", "O stock não é atualizado há cerca de 5 meses."},
				{DefectDateAsText, "erp.stock", "ultima_contagem", "Data da última contagem guardada como texto dd/mm/aaaa."},
				{DefectTypeChangeNextScan, "erp.artigos", "codigo_iva", "No próximo scan o código de IVA passa de inteiro a texto."},
				{DefectRenameNextScan, "erp.clientes", "codigo_postal", "No próximo scan a coluna codigo_postal é apagada e surge cod_postal com os mesmos dados."},
			},
		},
		salt: 0x4552_5001,
		tables: []table{
			{name: "clientes", cols: []column{
				{name: "id", typ: "id"},
				{name: "nif", typ: "varchar(9)", notNull: true},
				{name: "nome", typ: "varchar(120)", notNull: true},
				{name: "email", typ: "varchar(160)"},
				{name: "telefone", typ: "varchar(20)"},
				{name: "morada", typ: "varchar(200)"},
				{name: "codigo_postal", typ: "varchar(8)"},
				{name: "localidade", typ: "varchar(80)"},
				{name: "created_at", typ: "timestamp", notNull: true},
				{name: "updated_at", typ: "timestamp", notNull: true},
			}},
			{name: "fornecedores", cols: []column{
				{name: "id", typ: "id"},
				{name: "nipc", typ: "varchar(9)", notNull: true},
				{name: "nome", typ: "varchar(120)", notNull: true},
				{name: "email", typ: "varchar(160)"},
				{name: "telefone", typ: "varchar(20)"},
				{name: "iban", typ: "varchar(34)"},
				{name: "codigo_postal", typ: "varchar(8)"},
				{name: "localidade", typ: "varchar(80)"},
				{name: "created_at", typ: "timestamp", notNull: true},
				{name: "updated_at", typ: "timestamp", notNull: true},
			}},
			{name: "artigos", cols: []column{
				{name: "id", typ: "id"},
				{name: "referencia", typ: "varchar(20)", notNull: true, unique: true},
				{name: "descricao", typ: "varchar(160)", notNull: true},
				{name: "categoria", typ: "varchar(40)", notNull: true},
				{name: "unidade", typ: "varchar(4)", notNull: true},
				{name: "codigo_iva", typ: "int", notNull: true},
				{name: "preco_unitario", typ: "numeric(12,2)", notNull: true},
				{name: "fornecedor_id", typ: "int", notNull: true, ref: "fornecedores"},
				{name: "ativo", typ: "bool", notNull: true},
				{name: "created_at", typ: "timestamp", notNull: true},
				{name: "updated_at", typ: "timestamp", notNull: true},
			}, indexes: [][]string{{"fornecedor_id"}}},
			{name: "faturas", cols: []column{
				{name: "id", typ: "id"},
				{name: "numero_fatura", typ: "varchar(20)", notNull: true},
				{name: "documento_uuid", typ: "uuid", notNull: true},
				{name: "cliente_id", typ: "int", notNull: true, ref: "clientes"},
				{name: "data_emissao", typ: "date", notNull: true},
				{name: "data_vencimento", typ: "date", notNull: true},
				{name: "estado", typ: "varchar(12)", notNull: true},
				{name: "total", typ: "numeric(12,2)", notNull: true},
				{name: "created_at", typ: "timestamp", notNull: true},
				{name: "updated_at", typ: "timestamp", notNull: true},
			}, indexes: [][]string{{"cliente_id"}, {"numero_fatura"}}},
			{name: "linhas_fatura", cols: []column{
				{name: "id", typ: "id"},
				{name: "fatura_id", typ: "int", notNull: true, ref: "faturas", orphans: true},
				{name: "artigo_id", typ: "int", notNull: true, ref: "artigos"},
				{name: "quantidade", typ: "int", notNull: true},
				{name: "preco_unitario", typ: "numeric(12,2)", notNull: true},
				{name: "desconto_pct", typ: "numeric(5,2)", notNull: true},
				{name: "total_linha", typ: "numeric(14,2)", notNull: true},
			}, indexes: [][]string{{"fatura_id"}}},
			{name: "stock", cols: []column{
				{name: "id", typ: "id"},
				{name: "artigo_id", typ: "int", notNull: true, ref: "artigos"},
				{name: "armazem", typ: "varchar(40)", notNull: true},
				{name: "quantidade", typ: "int", notNull: true},
				{name: "ultima_contagem", typ: "varchar(10)"},
				{name: "created_at", typ: "timestamp", notNull: true},
				{name: "updated_at", typ: "timestamp", notNull: true},
			}, uniques: [][]string{{"artigo_id", "armazem"}}},
		},
		views: []view{
			{name: "vendas_por_dia", sql: `SELECT f.data_emissao AS dia,
       COUNT(DISTINCT f.id) AS faturas,
       SUM(l.quantidade) AS unidades,
       ROUND(SUM(l.total_linha), 2) AS valor_sem_iva
FROM {{.S}}faturas f
JOIN {{.S}}linhas_fatura l ON l.fatura_id = f.id
WHERE f.estado <> 'anulada'
GROUP BY f.data_emissao`},
			{name: "faturas_em_atraso", sql: `SELECT f.id AS fatura_id, f.numero_fatura, c.id AS cliente_id, c.nome AS cliente,
       c.nif, c.email, f.data_vencimento, f.total,
       CASE WHEN f.data_vencimento < {{.DaysAgo 90}} THEN 'mais de 90 dias'
            WHEN f.data_vencimento < {{.DaysAgo 30}} THEN '31 a 90 dias'
            ELSE 'até 30 dias' END AS escalao_atraso
FROM {{.S}}faturas f
JOIN {{.S}}clientes c ON c.id = f.cliente_id
WHERE f.estado = 'emitida' AND f.data_vencimento < {{.Today}}`},
			{name: "clientes_ativos", sql: `WITH resumo AS (
  SELECT cliente_id, MAX(data_emissao) AS ultima_fatura, COUNT(*) AS n_faturas, SUM(total) AS volume
  FROM {{.S}}faturas
  WHERE estado <> 'anulada'
  GROUP BY cliente_id
)
SELECT c.id AS cliente_id, c.nome, c.nif, c.email, c.localidade,
       r.ultima_fatura, r.n_faturas, r.volume,
       CASE WHEN r.volume >= 5000 THEN 'A' WHEN r.volume >= 1000 THEN 'B' ELSE 'C' END AS segmento
FROM {{.S}}clientes c
JOIN resumo r ON r.cliente_id = c.id
WHERE r.ultima_fatura >= {{.DaysAgo 180}}`},
			{name: "stock_valorizado", materialized: true, sql: `SELECT a.id AS artigo_id, a.referencia, a.descricao, a.codigo_iva,
       SUM(s.quantidade) AS quantidade,
       ROUND(SUM(s.quantidade * a.preco_unitario), 2) AS valor
FROM {{.S}}stock s
JOIN {{.S}}artigos a ON a.id = s.artigo_id
GROUP BY a.id, a.referencia, a.descricao, a.codigo_iva`},
		},
		mutation: mutation{
			retypes: []retype{{"artigos", "codigo_iva", "text"}},
			renames: []rename{{"clientes", "codigo_postal", "cod_postal"}},
		},
		fill: erpRows,
	}
}

func erpRows(g *gen) map[string][][]any {
	r := g.r
	out := map[string][][]any{}

	nCli := g.n(2000)
	nullEmail := g.marks(nCli, 0.05, 1)
	badNIF := g.marks(nCli, 0.03, 1)
	clientes := make([][]any, nCli)
	for i := range nCli {
		c, cp := pickCity(r)
		var nome, nif, email, tel string
		if g.chance(0.15) {
			nome = CompanyName(r)
			nif = ValidNIPC(r)
			email = CompanyEmail(r, nome)
			tel = DialVariant(r, PTLandlineIn(r, c.name))
		} else {
			nome = PersonName(r)
			nif = ValidNIF(r)
			email = Email(r, nome)
			if g.chance(0.25) {
				tel = DialVariant(r, PTLandlineIn(r, c.name))
			} else {
				tel = DialVariant(r, PTMobile(r))
			}
		}
		if badNIF[i] {
			nif = InvalidNIF(r)
		}
		created := g.lastDays(5 * 365)
		clientes[i] = []any{int64(i + 1), nif, nome, nullable(nullEmail[i], email), tel, Street(r), cp, c.name, created, g.after(created)}
	}
	out["clientes"] = clientes

	nForn := g.n(120)
	badIBAN := g.marks(nForn, 0.03, 2)
	fornecedores := make([][]any, nForn)
	for i := range nForn {
		nome := CompanyName(r)
		iban := ValidIBANPT(r)
		if badIBAN[i] {
			iban = InvalidIBANPT(r)
		}
		if g.chance(0.2) {
			iban = GroupIBAN(iban)
		}
		c, cp := pickCity(r)
		created := g.lastDays(6 * 365)
		fornecedores[i] = []any{int64(i + 1), ValidNIPC(r), nome, CompanyEmail(r, nome), DialVariant(r, PTLandlineIn(r, c.name)),
			iban, cp, c.name, created, g.after(created)}
	}
	out["fornecedores"] = fornecedores

	nArt := g.n(600)
	artigos := make([][]any, nArt)
	prices := make([]float64, nArt)
	ivas := make([]int, nArt)
	for i := range nArt {
		cat := erpCategories[r.IntN(len(erpCategories))]
		it := cat.items[r.IntN(len(cat.items))]
		prices[i] = round2(it.price * (0.8 + 0.5*r.Float64()))
		ivas[i] = it.iva
		created := g.lastDays(4 * 365)
		artigos[i] = []any{int64(i + 1), fmt.Sprintf("ART-%06d", i+1), it.desc + " " + pick(r, companyWords), cat.name, it.unit,
			it.iva, money(prices[i]), g.id(nForn), !g.chance(0.08), created, g.after(created)}
	}
	out["artigos"] = artigos

	// Invoices in date order, numbered per year as certified invoicing software does.
	nFat := g.n(4000)
	issued := make([]time.Time, nFat)
	for i := range issued {
		issued[i] = g.lastDays(540)
	}
	sortTimes(issued)
	dupNum := g.marks(nFat, 0.01, 1)
	dupNum[0] = false
	bigQty := g.marks(nFat, 0.003, 1)
	seq := map[int]int{}
	faturas := make([][]any, nFat)
	var linhas [][]any
	for i := range nFat {
		id := int64(i + 1)
		emissao := day(issued[i])
		y := emissao.Year()
		seq[y]++
		numero := fmt.Sprintf("FT %d/%05d", y, seq[y])
		if dupNum[i] {
			numero = faturas[max(0, i-1-r.IntN(min(i, 30)))][1].(string)
		}
		venc := emissao.AddDate(0, 0, pick3(r, 30, 30, 60))
		var estado string
		switch {
		case g.chance(0.03):
			estado = "anulada"
		case venc.After(g.now):
			estado = pickWeighted(r, []string{"emitida", "paga"}, []int{60, 40})
		default:
			estado = pickWeighted(r, []string{"paga", "emitida"}, []int{86, 14})
		}
		nl := 1 + r.IntN(5)
		total := 0.0
		for k := range nl {
			a := r.IntN(nArt)
			q := 1 + r.IntN(20)
			if bigQty[i] && k == 0 {
				q *= 100 + r.IntN(400)
			}
			desc := 0.0
			if g.chance(0.2) {
				desc = float64(5 * (1 + r.IntN(3)))
			}
			lt := round2(float64(q) * prices[a] * (1 - desc/100))
			total += lt * (1 + ivaRate[ivas[a]])
			linhas = append(linhas, []any{int64(len(linhas) + 1), id, int64(a + 1), q, money(prices[a]), money(desc), money(lt)})
		}
		created := issued[i]
		updated := created
		if estado == "paga" || estado == "anulada" {
			updated = g.within(created, minTime(created.AddDate(0, 0, 45), g.now))
		}
		faturas[i] = []any{id, numero, UUID(r), g.skewed(nCli), emissao, venc, estado, money(total), created, updated}
	}
	out["faturas"] = faturas

	// Lines of invoices deleted by hand, left behind in linhas_fatura.
	nOrphans := max(1, len(linhas)/100)
	for range nOrphans {
		linhas = append(linhas, []any{int64(len(linhas) + 1), int64(nFat + 1 + r.IntN(500)), g.id(nArt), 1 + r.IntN(10),
			money(prices[0]), money(0), money(prices[0])})
	}
	out["linhas_fatura"] = linhas

	// The stock feed stopped about five months ago: every row is older than that.
	var stock [][]any
	for a := range nArt {
		for w, name := range warehouses {
			if w == 1 && g.chance(0.4) {
				continue
			}
			counted := g.within(g.daysAgo(400), g.daysAgo(150))
			created := g.within(g.daysAgo(4*365), counted)
			stock = append(stock, []any{int64(len(stock) + 1), int64(a + 1), name, r.IntN(500), DateTextPT(counted), created, counted})
		}
	}
	out["stock"] = stock
	return out
}

// pick3 returns one of three values at random.
func pick3(r *rand.Rand, a, b, c int) int {
	return [3]int{a, b, c}[r.IntN(3)]
}

// pickWeighted returns one of values with the given integer weights.
func pickWeighted(r *rand.Rand, values []string, weights []int) string {
	sum := 0
	for _, w := range weights {
		sum += w
	}
	n := r.IntN(sum)
	for i, w := range weights {
		if n < w {
			return values[i]
		}
		n -= w
	}
	return values[len(values)-1]
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
