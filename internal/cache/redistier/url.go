package redistier

import (
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
)

// errURL never quotes the URL: it may hold a password.
var errURL = errors.New("redis tier: CLAMM_REDIS_URL is not a redis URL of a form the tier accepts " +
	"(redis[s]://host:port/db, redis[s]+sentinel://sentinel:port?master_name=NAME&addr=sentinel2:port, " +
	"redis[s]+cluster://node:port?addr=node2:port)")

// parseURL reads the three deployments go-redis's universal client
// covers from one URL, the scheme telling which:
//
//   - redis://[user:password@]host:port[/db] (rediss:// for TLS): one primary;
//   - redis+sentinel://[user:password@]sentinel:port[/db]?master_name=NAME[&addr=sentinel2:port...]:
//     the primary the sentinels name, followed through failovers;
//   - redis+cluster://[user:password@]node:port[?addr=node2:port...]: a Redis
//     Cluster, discovered from the nodes given (one is enough).
//
// The query takes go-redis's own parameters (ParseURL, ParseFailoverURL,
// ParseClusterURL); the tier then sets its deadlines and retries itself.
func parseURL(raw string) (*redis.UniversalOptions, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return nil, errURL
	}
	base, mode, _ := strings.Cut(scheme, "+")
	if base != "redis" && base != "rediss" {
		return nil, errURL
	}
	plain := base + "://" + rest
	switch mode {
	case "":
		o, err := redis.ParseURL(plain)
		if err != nil {
			return nil, errURL
		}
		return &redis.UniversalOptions{Addrs: []string{o.Addr}, Username: o.Username, Password: o.Password, DB: o.DB, TLSConfig: o.TLSConfig}, nil
	case "sentinel":
		o, err := redis.ParseFailoverURL(plain)
		if err != nil || o.MasterName == "" {
			return nil, errURL
		}
		return &redis.UniversalOptions{Addrs: o.SentinelAddrs, MasterName: o.MasterName, Username: o.Username, Password: o.Password,
			SentinelUsername: o.SentinelUsername, SentinelPassword: o.SentinelPassword, DB: o.DB, TLSConfig: o.TLSConfig}, nil
	case "cluster":
		o, err := redis.ParseClusterURL(plain)
		if err != nil {
			return nil, errURL
		}
		return &redis.UniversalOptions{Addrs: o.Addrs, IsClusterMode: true, Username: o.Username, Password: o.Password, TLSConfig: o.TLSConfig}, nil
	}
	return nil, errURL
}
