package server

import "testing"

// TestStoreNullIsAValue: `{"value":null}` stores null, which reads back as null; a put without a
// value stores none, which reads back without the field (seed 003: `value?: unknown`). On the
// SQLite and memory storages (PostgreSQL: the storage transcript).
func TestStoreNullIsAValue(t *testing.T) {
	for _, storage := range []string{"sqlite", "memory"} {
		t.Run(storage, func(t *testing.T) {
			e := newEnv(t, func(c *Config) {
				if storage == "memory" {
					c.Storage = NewMemory()
				}
			})
			tok := e.token(e.register(), "demo", "store")
			for _, tc := range []struct{ key, put, get string }{
				{"null", `{"value":null}`, `{"key":"null","value":null,"version":1,"updatedAt":1796025600000}`},
				{"absent", `{}`, `{"key":"absent","version":2,"updatedAt":1796025600000}`},
				{"zero", `{"value":0}`, `{"key":"zero","value":0,"version":3,"updatedAt":1796025600000}`},
				{"nested", `{"value":{"a":null}}`, `{"key":"nested","value":{"a":null},"version":4,"updatedAt":1796025600000}`},
			} {
				if r := e.do("PUT", "/v1/store/"+tc.key, tok, tc.put); r.status != 200 {
					t.Fatalf("put %s: %d %s", tc.key, r.status, r.body)
				}
				r := e.do("GET", "/v1/store/"+tc.key, tok, nil)
				if r.status != 200 || string(r.body) != tc.get+"\n" {
					t.Errorf("get %s: %d %s\nwant %s", tc.key, r.status, r.body, tc.get)
				}
			}
		})
	}
}
