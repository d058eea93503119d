package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkStoreHTTP is the server's whole work for a store request (token check, key and
// body decoding, storage, response), parallel, on a database file: 8 devices with 50 keys each,
// 100-byte values, as `harness cloud bench --store` does, without the sockets.
func BenchmarkStoreHTTP(b *testing.B) {
	st, err := OpenSQLite(context.Background(), b.TempDir()+"/cloud.db")
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	e := newEnv(&testing.T{}, func(c *Config) {
		c.Storage = st
		c.PowDifficulty = 0
		c.Registrations = RatePolicy{Name: "register", Quota: 1 << 30, Window: time.Minute}
		c.TokensPerDevice = RatePolicy{Name: "token", Quota: 1 << 30, Window: time.Minute}
	})
	var toks []string
	for range 8 {
		toks = append(toks, e.token(e.register(), "bench", "store"))
	}
	body := `{"value":{"v":"0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"}}`
	serve := func(b *testing.B, method string, w int64, i int) {
		var rd *strings.Reader
		if method == "PUT" {
			rd = strings.NewReader(body)
		} else {
			rd = strings.NewReader("")
		}
		r := httptest.NewRequest(method, fmt.Sprintf("/v1/store/bench/k%d", i%50), rd)
		r.Header.Set("Authorization", "Bearer "+toks[w%8])
		rec := httptest.NewRecorder()
		e.srv.ServeHTTP(rec, r)
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", method, rec.Code, rec.Body)
		}
	}
	for _, method := range []string{"PUT", "GET"} {
		var worker atomic.Int64
		b.Run(method, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				w := worker.Add(1)
				for i := 0; pb.Next(); i++ {
					serve(b, method, w, i)
				}
			})
		})
	}
}
