package mockcri

import (
	"fmt"
	"math/rand/v2"
)

// random draws every generated value from one seeded PCG stream, in a fixed
// order, so that a Config always yields the same inventory.
type random struct {
	r *rand.Rand
}

func newRandom(seed uint64) *random {
	// The second PCG word is fixed: one seed, one stream.
	return &random{rand.New(rand.NewPCG(seed, 0x6d6f636b637269))} // "mockcri"
}

const hexDigits = "0123456789abcdef"

// hex returns n random lowercase hex digits, like container and sandbox ids
// (64) and sha256 digests.
func (g *random) hex(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = hexDigits[g.r.IntN(16)]
	}
	return string(b)
}

// safeAlphabet is what Kubernetes uses for generated name suffixes
// (k8s.io/apimachinery/pkg/util/rand: no vowels, no look-alikes).
const safeAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// suffix returns n characters of a generated pod-name suffix.
func (g *random) suffix(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = safeAlphabet[g.r.IntN(len(safeAlphabet))]
	}
	return string(b)
}

// uuid returns a random version-4 UUID, the form of pod UIDs.
func (g *random) uuid() string {
	h := []byte(g.hex(32))
	h[12] = '4'
	h[16] = "89ab"[g.r.IntN(4)]
	return fmt.Sprintf("%s-%s-%s-%s-%s", h[0:8], h[8:12], h[12:16], h[16:20], h[20:32])
}

// intn returns a value in [0, n).
func (g *random) intn(n int) int { return g.r.IntN(n) }

// oneIn reports true with probability 1/n.
func (g *random) oneIn(n int) bool { return g.r.IntN(n) == 0 }
