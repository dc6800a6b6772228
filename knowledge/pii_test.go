package knowledge

import (
	"slices"
	"testing"
)

func TestPersonalData(t *testing.T) {
	cases := []struct {
		text string
		want []string
	}{
		{"O NIF do cliente é 123456789, ver ficha.", []string{PIINIF}},
		{"NIF:PT123456789", []string{PIINIF}},
		{"NIF 123456788 tem o dígito de controlo errado", []string{}},
		{"Contactar ana.silva@example.pt sobre a migração", []string{PIIEmail}},
		{"Ligar para 912 345 678 amanhã", []string{PIIPhone}},
		{"Telefone +351 212 345 678.", []string{PIIPhone}},
		{"IBAN PT50 0002 0123 1234 5678 9015 4 (conta)", []string{PIIIBAN}},
		{"A receita mensal soma as faturas pagas de 2024 em euros (1500 linhas).", []string{}},
		{"A tabela sales.orders tem 912345 linhas e a coluna email_hash", []string{}},
		{"Enviar para a@b.pt e NIF 123456789", []string{PIIEmail, PIINIF}},
	}
	for _, c := range cases {
		got := PersonalData(c.text, "")
		if !slices.Equal(got, c.want) {
			t.Errorf("PersonalData(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}
