// Package lptest runs the prepared deposit and withdrawal of package
// service against the test protocol on the simulated EVM, V1 and V2
// handlers: each prepared transaction is sent as the gateway built it and
// must move exactly the tokens and shares the gateway said, and every
// refusal is produced by a real state (a paused handler, options holding
// the liquidity, a reservation in its cooldown).
package lptest
