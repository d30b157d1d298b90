package testclock

import (
	"testing"
	"time"
)

// The genesis lands on the asked weekday at noon, a day or more ahead of
// the wall clock, whatever day the wall clock says.
func TestGenesis(t *testing.T) {
	for day := 0; day < 7; day++ {
		now := time.Date(2026, 11, 23+day, 23, 59, 30, 0, time.UTC) // Monday on
		for _, c := range []struct {
			value string
			want  time.Weekday
		}{{"", time.Wednesday}, {"Saturday", time.Saturday}, {"wednesday", time.Wednesday}, {"2026-11-28T09:30:00Z", time.Saturday}} {
			g, err := genesisAt(c.value, now)
			if err != nil {
				t.Fatal(err)
			}
			at := time.Unix(int64(g), 0).UTC()
			if at.Weekday() != c.want || at.Before(now.Add(24*time.Hour)) || at.After(now.Add(9*24*time.Hour)) {
				t.Errorf("%q at %s: genesis %s", c.value, now, at)
			}
			if c.value != "" && c.value[0] != '2' && at.Hour() != 12 {
				t.Errorf("%q: genesis %s is not at noon", c.value, at)
			}
		}
	}
	if _, err := genesisAt("someday", time.Now()); err == nil {
		t.Error("an unknown day was taken")
	}
}
