package semantic_test

import (
	"fmt"
	"testing"

	"github.com/vigia-data/vigia/source/semantic"
)

func BenchmarkDetectPhoneColumn(b *testing.B) {
	vals := make([]string, 1000)
	for i := range vals {
		vals[i] = fmt.Sprintf("9%d%07d", 1+i%3, i*7919%10000000)
	}
	b.ResetTimer()
	for b.Loop() {
		semantic.Detect(vals, "PT")
	}
}

func BenchmarkIsPhone(b *testing.B) {
	for b.Loop() {
		semantic.IsPhone("912345678", "PT")
	}
}

func BenchmarkCheckPhonePT(b *testing.B) {
	for b.Loop() {
		semantic.CheckPhonePT("912345678", "PT")
	}
}
