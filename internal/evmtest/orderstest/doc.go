// Package orderstest runs the limit-order side (internal/service/orders)
// against the LimitOrders stand-in on the simulated EVM: signing through
// the prepared typed data, the book's checks, statuses that follow the
// chain, and fills sent as the book prepares them. Heavy: it links the
// simulated backend; only tests live here.
package orderstest
