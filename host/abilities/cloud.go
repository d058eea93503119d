package abilities

import (
	"context"
	"errors"
)

// ErrCloudNotConfigured is the error of cloud.call while the host has no
// PKU harness Cloud client (seed 004 "Server functions": off on the
// official server for now).
var ErrCloudNotConfigured = errors.New("cloud not configured: this host has no PKU harness Cloud client, so server functions cannot run (seed 004 \"Server functions\")")

// cloudCall is cloud.call { fn, input } (read). The args are checked, then
// the call fails with ErrCloudNotConfigured.
func (s *Set) cloudCall(_ context.Context, c *call) (any, error) {
	if err := c.args.only("fn", "input"); err != nil {
		return nil, err
	}
	if _, err := c.args.str("fn", true, 64); err != nil {
		return nil, err
	}
	return nil, ErrCloudNotConfigured
}
