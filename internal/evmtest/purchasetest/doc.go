// Package purchasetest runs the purchase quote, prepared purchase and
// options chain of package service against the test protocol on the
// simulated EVM, priced by its IOptionPricingV2 stand-in: quotes against
// the market's own getters, prepared transactions sent and checked.
package purchasetest
