package gctune

import (
	"errors"
	"io/fs"
	"math"
	"strings"
	"testing"
)

// files is a fake /sys/fs/cgroup: a path absent is fs.ErrNotExist, as
// os.ReadFile reports it.
func files(kv map[string]string) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		if v, ok := kv[p]; ok {
			return []byte(v), nil
		}
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
}

const (
	v2 = "/sys/fs/cgroup/memory.max"
	v1 = "/sys/fs/cgroup/memory/memory.limit_in_bytes"
)

func TestCgroupLimit(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		want  int64
	}{
		{"no cgroup files (a host)", nil, 0},
		{"v2 512 MiB", map[string]string{v2: "536870912\n"}, 536870912},
		{"v2 no limit", map[string]string{v2: "max\n"}, 0},
		{"v1 1 GiB", map[string]string{v1: "1073741824\n"}, 1073741824},
		// v1's "no limit": PAGE_COUNTER_MAX pages of 4 KiB, 2^63 - 4096.
		{"v1 no limit", map[string]string{v1: "9223372036854771712\n"}, 0},
		{"v2 before v1", map[string]string{v2: "536870912", v1: "1073741824"}, 536870912},
	} {
		got, err := CgroupLimit(files(c.files))
		if err != nil || got != c.want {
			t.Errorf("%s: %d, %v; want %d", c.name, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "lots", "-1", "0", "1.5e9"} {
		if got, err := CgroupLimit(files(map[string]string{v2: bad})); err == nil || !strings.Contains(err.Error(), v2) {
			t.Errorf("%q: %d, %v; want an error naming the file", bad, got, err)
		}
	}
	denied := func(string) ([]byte, error) { return nil, fs.ErrPermission }
	if _, err := CgroupLimit(denied); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("unreadable file: %v", err)
	}
}

// Expected values worked by hand (Python fractions): 2·256 MiB + 256 MiB =
// 805306368; 0.75 × 536870912 = 402653184 exactly; 0.75 × 536870913 =
// 402653184.75, floored; 0.75 × 1 GiB = 805306368, the wanted limit
// itself, so not capped below it.
func TestSoftLimit(t *testing.T) {
	for _, c := range []struct {
		cache, cgroup, limit, wanted int64
	}{
		{256 << 20, 0, 805306368, 805306368},
		{256 << 20, 536870912, 402653184, 805306368},
		{256 << 20, 536870913, 402653184, 805306368},
		{256 << 20, 1 << 30, 805306368, 805306368},
		{64 << 20, 536870912, 402653184, 402653184},
		{256 << 20, math.MaxInt64, 805306368, 805306368},
	} {
		limit, wanted := SoftLimit(c.cache, c.cgroup)
		if limit != c.limit || wanted != c.wanted {
			t.Errorf("SoftLimit(%d, %d) = %d, %d; want %d, %d", c.cache, c.cgroup, limit, wanted, c.limit, c.wanted)
		}
	}
	// (402653184 - 268435456) / 2 = 67108864: the cache whose wanted
	// limit fits a 512 MiB container's share.
	if got := CacheFitting(402653184); got != 67108864 {
		t.Errorf("CacheFitting = %d, want 67108864", got)
	}
	if got := CacheFitting(100 << 20); got != 0 {
		t.Errorf("CacheFitting under the margin = %d, want 0", got)
	}
}
