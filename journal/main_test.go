package journal

import (
	"os"
	"testing"

	"github.com/migrate-tool/migrate/internal/scratch"
)

// TestMain keeps the journals the tests write, and sync, in memory where
// the machine has it (internal/scratch).
func TestMain(m *testing.M) { os.Exit(scratch.Main(m)) }
