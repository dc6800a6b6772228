package lineagetest_test

import (
	"testing"

	"github.com/vigia-data/vigia/lineage/lineagetest"
)

func TestMemGraphPassesTheBackendContract(t *testing.T) {
	lineagetest.Run(t, lineagetest.NewMemGraph())
}
