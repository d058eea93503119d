package pgstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/pkuinfo/harness/cloud/protocol"
	"github.com/pkuinfo/harness/cloud/server"
	"github.com/pkuinfo/harness/cloud/server/enginetest"
)

// BenchmarkPostgresStore is the PostgreSQL store alone, as BenchmarkSQLiteStore measures the
// embedded one: 8 namespaces of 50 keys, 100-byte values, parallel (4 × GOMAXPROCS goroutines),
// puts then gets. ns/op inverted is the store's ops/s on this machine.
func BenchmarkPostgresStore(b *testing.B) {
	ctx := context.Background()
	value := []byte(`{"v":"0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"}`)
	q := server.StoreQuota{StoreLimits: protocol.DefaultLimits().Store, Device: server.DefaultDeviceStore}
	st := open(b, enginetest.Postgres(b))
	var worker atomic.Int64
	for _, op := range []string{"put", "get"} {
		b.Run(op, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				w := worker.Add(1)
				ns := server.Namespace{Device: fmt.Sprintf("d%d", w%8), Plugin: "bench"}
				for i := 0; pb.Next(); i++ {
					var err error
					if op == "put" {
						_, err = st.StorePut(ctx, ns, server.StoreItem{Key: fmt.Sprintf("k%d", i%50), Value: value}, nil, q, 1)
					} else {
						_, err = st.StoreGet(ctx, ns, fmt.Sprintf("k%d", i%50), 1)
						if err == server.ErrNotFound {
							err = nil
						}
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
		})
	}
}
