// Package clamm holds the pure maths of concentrated-liquidity options:
// Uniswap V3 tick maths, liquidity-to-amount conversions, strike prices,
// exercise legs and calldata. Nothing here does I/O, so every function can be
// checked against independent vectors (testdata/vectors, computed with
// @uniswap/v3-sdk and decimal.js).
//
// Amounts are *big.Int in token base units throughout. Decimal strings and
// float64 prices appear only at the edge, where a response asks for them.
package clamm
