package subgraph

// NumberAfter is numberAfter, for the external tests.
var NumberAfter = numberAfter
