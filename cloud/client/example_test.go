package client_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/pkuinfo/harness/cloud/client"
)

// A share link never prints, whatever the route: only Reveal gives the URL.
func ExampleSecretLink() {
	link, err := client.ParseSecretLink("https://cloud.example.org/s/AAAAAAAAAAAAAAAAAAAAAA#k=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8")
	if err != nil {
		panic(err)
	}
	fmt.Println(link)
	fmt.Printf("%#v %q\n", link, link)
	b, _ := json.Marshal(map[string]any{"link": link})
	fmt.Println(string(b))
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	logger.Info("sharing", "link", link)
	fmt.Println(link.ChannelID(), len(link.Reveal()))
	// Output:
	// [secret link]
	// [secret link] [secret link]
	// {"link":"[secret link]"}
	// level=INFO msg=sharing link="[secret link]"
	// AAAAAAAAAAAAAAAAAAAAAA 96
}

// Reconnect waits grow exponentially with "equal jitter": attempt n waits between half and all of
// min(Max, Min × 2ⁿ).
func ExampleBackoff_Delay() {
	b := client.Backoff{Min: 250 * time.Millisecond, Max: 30 * time.Second}
	for n := range 9 {
		fmt.Println(n, b.Delay(n, func() float64 { return 0 }), b.Delay(n, func() float64 { return 1 }))
	}
	// Output:
	// 0 125ms 250ms
	// 1 250ms 500ms
	// 2 500ms 1s
	// 3 1s 2s
	// 4 2s 4s
	// 5 4s 8s
	// 6 8s 16s
	// 7 15s 30s
	// 8 15s 30s
}
