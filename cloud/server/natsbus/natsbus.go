// Package natsbus carries the Cloud relay's events between server nodes over NATS (docs/CLOUD.md
// "Running several nodes"): `harness cloud serve --nats nats://…` connects each node,
// and cloud/server fans channel frames, presence, joins, kicks and closes out through it. Every
// subject the server names is published under the prefix "harness.cloud." (so one NATS server
// can carry other traffic); messages are plain NATS core messages: at most once, ordered per
// publisher, no persistence, which is what a live relay needs (a lost frame is a lost frame, as
// on a dropped socket).
package natsbus

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/pkuinfo/harness/cloud/server"
)

// Prefix is prepended to every subject.
const Prefix = "harness.cloud."

// Bus is a server.Bus over one NATS connection, which reconnects by itself (for ever, every
// 250 ms) when the NATS server goes away; while it is away, published events are buffered up to
// nats.go's default reconnect buffer (8 MB) and then lost.
type Bus struct {
	nc *nats.Conn
}

// Connect dials the NATS server(s) at url (comma-separated nats:// URLs; credentials in the URL
// as user:password@ if the server wants them). name is the client name the NATS server shows
// (e.g. "harness-cloud node-a"); log receives disconnects, reconnects and slow-consumer errors.
func Connect(url, name string, log *slog.Logger) (*Bus, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	nc, err := nats.Connect(url,
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond),
		nats.Timeout(5*time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			log.Warn("nats disconnected", "err", err)
		}),
		nats.ReconnectHandler(func(c *nats.Conn) {
			log.Info("nats reconnected", "server", c.ConnectedUrlRedacted())
		}),
		nats.ErrorHandler(func(_ *nats.Conn, s *nats.Subscription, err error) {
			subj := ""
			if s != nil {
				subj = s.Subject
			}
			log.Error("nats", "subject", subj, "err", err)
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	return &Bus{nc: nc}, nil
}

// Publish implements server.Bus.
func (b *Bus) Publish(subject string, data []byte) error {
	return b.nc.Publish(Prefix+subject, data)
}

// Subscribe implements server.Bus: the subscription is confirmed by the NATS server (a flush
// round trip) before it returns.
func (b *Bus) Subscribe(subject string, handle func([]byte)) (func(), error) {
	sub, err := b.nc.Subscribe(Prefix+subject, func(m *nats.Msg) { handle(m.Data) })
	if err != nil {
		return nil, fmt.Errorf("nats subscribe %s: %w", subject, err)
	}
	// A busy channel may burst; the relay drops what its parties cannot take anyway.
	sub.SetPendingLimits(1<<16, 64<<20)
	if err := b.nc.FlushTimeout(5 * time.Second); err != nil {
		sub.Unsubscribe()
		return nil, fmt.Errorf("nats subscribe %s: %w", subject, err)
	}
	return func() { sub.Unsubscribe() }, nil
}

// Close flushes what is buffered and closes the connection.
func (b *Bus) Close() error {
	err := b.nc.Drain()
	if err != nil {
		b.nc.Close()
	}
	return err
}

var _ server.Bus = (*Bus)(nil)
