package folder

import (
	"testing"

	"github.com/meshd/meshd/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }
