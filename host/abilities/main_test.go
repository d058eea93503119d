package abilities

import (
	"os"
	"testing"
)

// TestMain keeps the tests out of the developer's OS keyring: keys go to key files beside the
// temporary data directories (host/vault).
func TestMain(m *testing.M) {
	os.Setenv("HARNESS_KEYRING", "off")
	os.Exit(m.Run())
}
