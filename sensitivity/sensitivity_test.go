package sensitivity

import "testing"

func TestAutoLevel(t *testing.T) {
	cases := []struct {
		name, semantic string
		matches        int
		level, reason  string
	}{
		{"contacto", "email", 40, PII, "semantic:email"},
		{"contacto", "email", 0, Internal, "default"},
		{"telefone", "", 0, PII, "name"},
		{"customer_email", "", 0, PII, "name"},
		{"salario_base", "", 0, Confidential, "name"},
		{"password_hash", "", 0, Confidential, "name"},
		{"estado", "uuid", 10, Internal, "default"},
		{"domain", "", 0, Internal, "default"},
	}
	for _, c := range cases {
		if l, r := AutoLevel(c.name, c.semantic, c.matches); l != c.level || r != c.reason {
			t.Errorf("AutoLevel(%s, %s, %d) = %s %s, want %s %s", c.name, c.semantic, c.matches, l, r, c.level, c.reason)
		}
	}
}
