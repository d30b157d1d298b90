// Package systemtest holds the system tests and benchmarks of whole
// gateways: built through the composition root (internal/app) as the
// command builds them, over the fakes loaded with the stated scenarios, the
// embedded demo, a real Redis or a faulty upstream, and asked over HTTP what
// a client asks. The gateway package keeps the HTTP layer's own tests.
//
// Golden responses: go test ./gateway/systemtest -run Golden -update
// rewrites testdata/golden.
package systemtest
