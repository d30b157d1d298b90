// Package topologytest runs the shared tier against Redis deployments
// beyond one primary, started on loopback by its tests: a primary with a
// replica behind a sentinel, and a three-node Redis Cluster. They are
// slower than the tier's own tests (a failover, a cluster forming), so
// they live apart. The package has no code outside its tests.
package topologytest
