// Package testclock fixes the day the tests' simulated chains start on, so
// no test depends on the day or hour it runs.
package testclock

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// Variable names the day the simulated chain's clock starts on:
// a weekday ("saturday", "wednesday") or an RFC 3339 instant. Unset, it is
// a Wednesday.
//
// The simulated node stamps a block with the wall clock, or its parent's
// time plus one second when the wall clock is behind. A chain left on the
// wall clock made every test depend on the day it ran (the weekend hook
// refuses on a UTC Saturday, so the test set failed every weekend) and on
// the hour (a statistics test near midnight saw two days). The genesis is
// therefore put on the asked weekday at noon UTC, at least a day ahead of
// the wall clock: the wall clock never catches up during a test, so every
// block is its parent's time plus one second, plus what the test moves it
// by, on whatever day the test runs. CI runs the hook tests under both a
// Saturday and a Wednesday.
const Variable = "CLAMM_TEST_CLOCK"

// genesisAt is the simulated chain's first timestamp for the clock
// variable's value at the wall-clock time now.
func genesisAt(value string, now time.Time) (uint64, error) {
	now = now.UTC()
	value = strings.TrimSpace(value)
	if value == "" {
		value = "wednesday"
	}
	if at, err := time.Parse(time.RFC3339, value); err == nil {
		// Whole weeks forward keep the weekday and the hour.
		for at.Before(now.Add(24 * time.Hour)) {
			at = at.Add(7 * 24 * time.Hour)
		}
		return uint64(at.Unix()), nil
	}
	for d := time.Sunday; d <= time.Saturday; d++ {
		if !strings.EqualFold(d.String(), value) {
			continue
		}
		at := time.Date(now.Year(), now.Month(), now.Day(), 12, 0, 0, 0, time.UTC)
		for at.Weekday() != d || at.Before(now.Add(24*time.Hour)) {
			at = at.AddDate(0, 0, 1)
		}
		return uint64(at.Unix()), nil
	}
	return 0, fmt.Errorf("%s=%q: want a weekday (saturday, wednesday, ...) or an RFC 3339 time", Variable, value)
}

// Genesis is the timestamp the simulated chains of this test run start
// at (see Variable).
func Genesis() (uint64, error) {
	return genesisAt(os.Getenv(Variable), time.Now())
}
