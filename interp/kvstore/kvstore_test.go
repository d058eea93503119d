package kvstore

import (
	"testing"

	"github.com/pkuinfo/harness/interp/kvstore/kvtest"
)

func TestMemory(t *testing.T) {
	kvtest.Run(t, func(*testing.T) kvtest.Store { return NewMemory() })
}
