package mockcri

import (
	"errors"
	"slices"
	"testing"
)

func TestSendChunks(t *testing.T) {
	for _, tc := range []struct {
		items, per int
		want       []int // chunk sizes
	}{
		{0, 16, nil},
		{1, 16, []int{1}},
		{32, 16, []int{16, 16}},
		{33, 16, []int{16, 16, 1}},
		{1024, 256, []int{256, 256, 256, 256}},
		{3, 1, []int{1, 1, 1}},
		{5, 100, []int{5}},
	} {
		items := make([]int, tc.items)
		for i := range items {
			items[i] = i
		}
		var sizes, seen []int
		err := sendChunks(items, tc.per, func(chunk []int) error {
			if cap(chunk) != len(chunk) {
				t.Errorf("chunk has capacity %d beyond its length %d", cap(chunk), len(chunk))
			}
			sizes = append(sizes, len(chunk))
			seen = append(seen, chunk...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(sizes, tc.want) || !slices.Equal(seen, items) {
			t.Errorf("%d items per %d: chunks %v covering %d items, want %v", tc.items, tc.per, sizes, len(seen), tc.want)
		}
	}
}

func TestSendChunksStopsAtError(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	err := sendChunks(make([]int, 10), 2, func([]int) error {
		calls++
		return boom
	})
	if !errors.Is(err, boom) || calls != 1 {
		t.Errorf("err %v after %d calls, want boom after 1", err, calls)
	}
}
