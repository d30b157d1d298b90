package sqlstore

import (
	"strconv"
	"testing"
)

// The writer's entity cache stays within cacheSize entries however many
// entities a history touches, and keeps those used again and again (a
// strike, a pool) while entities touched once stream past.
func TestEntityCacheKeepsWhatIsUsedWithinItsBound(t *testing.T) {
	var c entityCache
	hot := []key{{"Strike", "a"}, {"Pool", "b"}}
	for _, k := range hot {
		c.put(k, &change{lower: 1})
	}
	for i := range 10 * cacheSize {
		c.put(key{"LpDeposit", strconv.Itoa(i)}, &change{})
		if i%1000 == 0 {
			for _, k := range hot {
				if v, ok := c.get(k); !ok || v.lower != 1 {
					t.Fatalf("after %d entities touched once, %v is no longer cached", i, k)
				}
			}
		}
		if n := len(c.cur) + len(c.old); n > cacheSize {
			t.Fatalf("%d entities cached, more than %d", n, cacheSize)
		}
	}
	if _, ok := c.get(key{"LpDeposit", "0"}); ok {
		t.Error("an entity touched once, long ago, is still cached")
	}
	// a newer version replaces the cached one
	c.put(hot[0], &change{lower: 2})
	if v, _ := c.get(hot[0]); v.lower != 2 {
		t.Errorf("cached %+v after a newer version was put", v)
	}
	c.clear()
	if _, ok := c.get(hot[1]); ok {
		t.Error("cached after clear")
	}
}
