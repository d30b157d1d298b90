package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/cache"
	"github.com/clamm-gateway/clamm-gateway/internal/metrics"
)

// SharedTier is the response cache's second tier, shared by replicas
// (internal/cache/redistier on Redis): the cache's own interface plus what
// /readyz and /metrics report about it.
type SharedTier interface {
	cache.Shared
	// Ping checks the tier now; Degraded says whether it is backing off
	// after a failure, and why (no addresses, no credentials).
	Ping(ctx context.Context) error
	Degraded() (bool, string)
	// Failures counts Redis commands that failed, and calls skipped
	// while backing off.
	Failures() (errs, skipped int64)
}

// sharedStats is what /metrics reports about the shared tier.
func (s *Server) sharedStats() metrics.SharedCacheStats {
	c := s.responses.SharedStats()
	st := metrics.SharedCacheStats{Hits: c.Hits, StaleHits: c.StaleHits, Waits: c.Waits, Leases: c.Leases,
		Undecodable: c.Undecodable, Fallbacks: c.Fallbacks}
	st.Errors, st.Skipped = s.opts.Shared.Failures()
	st.Degraded, _ = s.opts.Shared.Degraded()
	return st
}

// sharedReadiness probes the shared tier for /readyz, at most once per
// ReadyTTL like the upstream probes, so a load balancer's probes cannot
// multiply into Redis writes. A degraded tier does not make the gateway
// unready: it answers from its local cache and its upstreams, each
// replica filling on its own.
func (s *Server) sharedReadiness(ctx context.Context) map[string]string {
	now := time.Now().UnixNano()
	if last := s.sharedProbed.Load(); now-last >= int64(s.opts.ReadyTTL) && s.sharedProbed.CompareAndSwap(last, now) {
		_ = s.opts.Shared.Ping(ctx)
	}
	if down, why := s.opts.Shared.Degraded(); down {
		return map[string]string{"status": "degraded", "reason": why}
	}
	return map[string]string{"status": "ok"}
}

// entryCodec writes a cached answer for the shared tier: the subgraph
// block, the ETag, the body and its gzip bytes, each as the fill built
// them, so every replica serves the same bytes and validators and none
// compresses again. Decode checks the ETag against the body, the body is
// JSON and the gzip bytes decode to it: a record that does not match, or
// does not parse, is a miss rather than a wrong answer.
//
// Layout: the answer's block (number and time, 8 bytes each; hash length,
// 1 byte; hash), subgraph block (8 bytes, 0 = none), ETag length (1
// byte), ETag, body length (4 bytes), body, gzip bytes (the rest; none
// under compressMin).
type entryCodec struct{}

func (entryCodec) Encode(v any) ([]byte, error) {
	e := v.(entry)
	var block uint64
	if e.blockHeader != nil {
		var err error
		if block, err = strconv.ParseUint(e.blockHeader[0], 10, 64); err != nil {
			return nil, err
		}
	}
	tag := e.etag[0]
	if len(tag) > 255 || int64(len(e.body)) > math.MaxUint32 {
		return nil, errors.New("etag or body too long")
	}
	if len(e.ref.Hash) > 255 {
		return nil, errors.New("block hash too long")
	}
	b := make([]byte, 0, 17+len(e.ref.Hash)+13+len(tag)+len(e.body)+len(e.gz))
	b = binary.BigEndian.AppendUint64(b, e.ref.Number)
	b = binary.BigEndian.AppendUint64(b, uint64(e.ref.Timestamp))
	b = append(append(b, byte(len(e.ref.Hash))), e.ref.Hash...)
	return encodeRest(b, block, tag, e)
}

func encodeRest(b []byte, block uint64, tag string, e entry) ([]byte, error) {
	b = binary.BigEndian.AppendUint64(b, block)
	b = append(append(b, byte(len(tag))), tag...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(e.body)))
	return append(append(b, e.body...), e.gz...), nil
}

var errSharedEntry = errors.New("shared cache record does not decode")

func (entryCodec) Decode(b []byte) (any, error) {
	if len(b) < 17 || len(b) < 17+int(b[16]) {
		return nil, errSharedEntry
	}
	ref := block.Ref{Number: binary.BigEndian.Uint64(b), Timestamp: int64(binary.BigEndian.Uint64(b[8:])), Hash: string(b[17 : 17+int(b[16])])}
	if ref.Hash != "" && ref.Check(0) != nil {
		// Headers from the RPC node and the subgraph are checked where
		// they are read; a record's are checked here, or a forged hash
		// would reach X-Block-Hash as written.
		return nil, errSharedEntry
	}
	e, err := decodeRest(b[17+int(b[16]):])
	if err != nil {
		return nil, err
	}
	e.setBlock(ref)
	return e, nil
}

func decodeRest(b []byte) (entry, error) {
	if len(b) < 13 || len(b) < 13+int(b[8]) {
		return entry{}, errSharedEntry
	}
	block := binary.BigEndian.Uint64(b)
	tag := string(b[9 : 9+int(b[8])])
	rest := b[9+int(b[8]):]
	n := binary.BigEndian.Uint32(rest)
	if uint64(n) > uint64(len(rest)-4) {
		return entry{}, errSharedEntry
	}
	body, gz := rest[4:4+n], rest[4+n:]
	if tag != etagOf(body) || !json.Valid(body) {
		// Anyone who can write to the Redis can compute a matching ETag:
		// a body that is not JSON is not one of ours either.
		return entry{}, errSharedEntry
	}
	if len(gz) == 0 {
		gz = nil
	} else if checkGzip(gz, body) != nil {
		return entry{}, errSharedEntry
	}
	return newEntry(body, block, tag, gz), nil
}

// etagOf is the strong validator of a body: a hash of its bytes.
func etagOf(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// newEntry lays out an answer's header values once.
func newEntry(body []byte, block uint64, etag string, gz []byte) entry {
	e := entry{body: body, contentLength: []string{strconv.Itoa(len(body))}, etag: []string{etag}}
	if block > 0 {
		e.blockHeader = []string{strconv.FormatUint(block, 10)}
	}
	if gz != nil {
		e.gz, e.gzLength, e.gzEtag = gz, []string{strconv.Itoa(len(gz))}, []string{gzipETag(etag)}
	}
	return e
}
