package protocoltest

import "time"

// ToWeekday moves the chain's clock forward to the next day d (today if
// the latest block is on d before noon) at noon UTC and mines a block there,
// so a test of a rule by weekday holds on whatever day it runs.
func (c *Chain) ToWeekday(d time.Weekday) {
	now := time.Unix(int64(c.Now()), 0).UTC()
	at := time.Date(now.Year(), now.Month(), now.Day(), 12, 0, 0, 0, time.UTC)
	for at.Weekday() != d || !at.After(now) {
		at = at.AddDate(0, 0, 1)
	}
	c.AdjustTime(at.Sub(now))
}
