package market

import "testing"

// A window is cut into the whole UTC days inside it and the parts of the
// days at its ends; together they are the window, none overlapping.
func TestStatsSpans(t *testing.T) {
	const d = int64(86400)
	for _, c := range []struct {
		from, to, dayFrom, dayTo int64
		parts                    [2][2]int64
	}{
		{10 * d, 12 * d, 10 * d, 12 * d, [2][2]int64{{10 * d, 10 * d}, {12 * d, 12 * d}}},             // whole days only
		{10*d + 5, 12*d + 7, 11 * d, 12 * d, [2][2]int64{{10*d + 5, 11 * d}, {12 * d, 12*d + 7}}},     // cut at both ends
		{10*d + 5, 10*d + 9, 11 * d, 11 * d, [2][2]int64{{10*d + 5, 10*d + 9}, {10*d + 9, 10*d + 9}}}, // inside one day
		{10*d + 5, 11 * d, 11 * d, 11 * d, [2][2]int64{{10*d + 5, 11 * d}, {11 * d, 11 * d}}},         // one cut day, no whole one
		{10 * d, 10*d + 1, 10 * d, 10 * d, [2][2]int64{{10 * d, 10*d + 1}, {10*d + 1, 10*d + 1}}},     // one second
		{10*d - 1, 11*d + 1, 10 * d, 11 * d, [2][2]int64{{10*d - 1, 10 * d}, {11 * d, 11*d + 1}}},     // a second either side
	} {
		dayFrom, dayTo, parts := statsSpans(c.from, c.to)
		covered := parts[0][1] - parts[0][0] + parts[1][1] - parts[1][0] + max(dayTo-dayFrom, 0)
		if dayFrom != c.dayFrom || dayTo != c.dayTo || parts != c.parts || covered != c.to-c.from {
			t.Errorf("[%d, %d): days [%d, %d) parts %v (covering %d s); want [%d, %d) %v", c.from, c.to, dayFrom, dayTo, parts, covered, c.dayFrom, c.dayTo, c.parts)
		}
	}
}
