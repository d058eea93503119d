package agent

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestSaveConfigNeverPairsAKeyWithAnotherService: a running serve loads model.json and
// model.key whenever either changes (Reloading), so while PUT /v1/model moves from one service
// to another with its own key, no moment may show one service's base URL with the other's key
// (the first turn then would send it there).
func TestSaveConfigNeverPairsAKeyWithAnotherService(t *testing.T) {
	t.Setenv("HARNESS_KEYRING", "off")
	dir := t.TempDir()
	a := Config{BaseURL: "https://a.example/v1", Model: "m", APIKey: "sk-key-of-service-a-0000"}
	b := Config{BaseURL: "https://b.example/v1", Model: "m", APIKey: "sk-key-of-service-b-0000"}
	if err := SaveConfig(dir, a, true); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var bad atomic.Value
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			c, _, err := LoadConfig(dir, nil)
			if err != nil {
				continue // a file between its rename and the other's read
			}
			if (c.BaseURL == a.BaseURL && c.APIKey == b.APIKey) || (c.BaseURL == b.BaseURL && c.APIKey == a.APIKey) {
				bad.Store(c.BaseURL + " with the other service's key")
			}
		}
	}()
	for i := 0; i < 600 && bad.Load() == nil; i++ {
		c := a
		if i%2 == 0 {
			c = b
		}
		if err := SaveConfig(dir, c, true); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	if s := bad.Load(); s != nil {
		t.Fatalf("a load saw %s", s)
	}
}
