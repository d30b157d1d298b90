package problem

import "github.com/clamm-gateway/clamm-gateway/internal/secret"

// Cause keeps an upstream's error for the log as scrubbed, bounded text
// while errors.Is and errors.As still reach the original.
type Cause struct {
	Text string
	Err  error
}

// NewCause wraps err with its scrubbed text (package secret).
func NewCause(err error) *Cause { return &Cause{Text: secret.Scrub(err.Error()), Err: err} }

func (c *Cause) Error() string { return c.Text }
func (c *Cause) Unwrap() error { return c.Err }
