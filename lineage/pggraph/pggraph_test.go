package pggraph_test

import (
	"os"
	"testing"

	"github.com/vigia-data/vigia/lineage/lineagetest"
	"github.com/vigia-data/vigia/lineage/pggraph"
	"github.com/vigia-data/vigia/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Run(m)) }

func TestPggraphPassesTheBackendContract(t *testing.T) {
	lineagetest.Run(t, pggraph.New(storetest.MustDB(t).Pool()))
}
