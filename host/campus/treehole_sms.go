package campus

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// TreeholeSMS runs Treehole's login SMS check with the stored session
// (docs/CAMPUS-PROTOCOLS.md §5.4), for a sign-in that left it pending: with code ""
// it asks Treehole to send the SMS (jwt_send_msg; a "not expired yet"
// answer counts as sent), else it redeems code (jwt_msg_verify). It returns
// Treehole's message. Errors: not signed in, a refusal with Treehole's
// message, a reply that is not Treehole's envelope.
func TreeholeSMS(ctx context.Context, c *Client, code string) (string, error) {
	path, body := "/chapi/api/jwt_send_msg", "{}"
	if code != "" {
		b, _ := json.Marshal(map[string]string{"valid_code": strings.TrimSpace(code)})
		path, body = "/chapi/api/jwt_msg_verify", string(b)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(ctx, "treehole", req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var env thEnvelope
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&env); err != nil {
		return "", fmt.Errorf("treehole %s: HTTP %d, not Treehole's envelope", path, resp.StatusCode)
	}
	if !env.Success && !(code == "" && strings.Contains(env.Message, "未过期")) {
		return "", fmt.Errorf("treehole: %s", env.Message)
	}
	return env.Message, nil
}
