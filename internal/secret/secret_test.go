package secret

import (
	"strings"
	"testing"
)

func TestURLKeepsNoSecret(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		"https://arb-mainnet.g.alchemy.com/v2/SECRETKEY",
		"https://user:SECRETKEY@rpc.example.com",
		"https://gateway.thegraph.com/api/SECRETKEY/subgraphs/id/abc",
		"https://rpc.example.com/?apikey=SECRETKEY",
	} {
		if r := URL(u); strings.Contains(r, "SECRETKEY") || !strings.HasPrefix(r, "https://") {
			t.Errorf("%s -> %s", u, r)
		}
	}
	if r := URL("::not a url"); r != Placeholder {
		t.Errorf("unparsable URL -> %q, want the placeholder", r)
	}
}

// The secret parts of configured URLs (password, path segments,
// query values) are redacted wherever they appear in log text, also when
// an upstream echoes them back alone, escaped, or too short for Scrub's
// key-like tokens.
func TestRedactorHidesSecretPartsAnywhere(t *testing.T) {
	r := NewRedactor("redis://cache:R3disPw@redis.internal:6379/0", "",
		"https://gw.example/api/SECRET123/subgraphs/id/Qm", "https://rpc.example/v2/SECRET456?apikey=K3Y+789")
	for _, text := range []string{
		"404 page /v2/SECRET456?apikey=K3Y+789 not found",
		"upstream said: unknown key SECRET123",
		"bad apikey=K3Y%2B789",
		"NOAUTH for user cache password R3disPw",
		`Post "https://rpc.example/v2/SECRET456?apikey=K3Y+789": dial tcp: refused`,
	} {
		for _, got := range []string{r.Known(text), r.Text(text)} {
			for _, secret := range []string{"SECRET123", "SECRET456", "K3Y+789", "K3Y%2B789", "R3disPw"} {
				if strings.Contains(got, secret) {
					t.Errorf("%q -> %q keeps %q", text, got, secret)
				}
			}
		}
	}
	if got := r.Text("the v2 market's subgraphs answered"); got != "the v2 market's subgraphs answered" {
		t.Errorf("ordinary words redacted: %q", got)
	}
}

// Scrub takes out URLs and long key-like tokens it was never told of,
// keeps addresses and hashes for diagnosis, and bounds the text on a rune
// boundary, saying how much it dropped.
func TestScrubTakesOutUnknownKeysAndBounds(t *testing.T) {
	const addr = "0x29BbF7EbB9C5146c98851e76A5529985E4052116"
	got := Scrub("call to " + addr + " via https://other.example/v3/abc failed: key 0123456789abcdefghijABCDEFGHIJ0123 refused")
	if strings.Contains(got, "other.example") || strings.Contains(got, "0123456789abcdefghij") || !strings.Contains(got, addr) {
		t.Errorf("Scrub = %q", got)
	}
	long := strings.Repeat("é", 10*MaxTextLen)
	got = Scrub(long)
	if len(got) > MaxTextLen+40 || !strings.Contains(got, "more bytes)") || !strings.HasPrefix(got, "é") {
		t.Errorf("Scrub of %d bytes = %d bytes ending %q", len(long), len(got), got[len(got)-30:])
	}
	var nilRedactor *Redactor
	if nilRedactor.Known("https://a.example/KEY1234567") != "https://a.example/KEY1234567" || strings.Contains(nilRedactor.Text("https://a.example/KEY1234567"), "KEY") {
		t.Error("a nil Redactor must keep Known text whole and still Scrub Text")
	}
}
