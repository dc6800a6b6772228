package app_test

import (
	"os"
	"testing"

	"github.com/vigia-data/vigia/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Run(m)) }
