package mockcri

// DefaultPerChunk is the chunk size of ListContainersChunked when the
// client leaves per_chunk at 0.
const DefaultPerChunk = 64

// sendChunks sends items in order, in consecutive chunks of at most per
// items (per >= 1); no items, no chunks. The chunks are subslices of items
// with their capacity cut to their length, so nothing can append into the
// inventory through them.
func sendChunks[T any](items []T, per int, send func(chunk []T) error) error {
	for len(items) > 0 {
		n := min(per, len(items))
		if err := send(items[:n:n]); err != nil {
			return err
		}
		items = items[n:]
	}
	return nil
}
