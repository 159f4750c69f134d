package wire

import (
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	for _, d := range []time.Duration{0, time.Microsecond, 200 * time.Microsecond, 20 * time.Second, MaxMicros * time.Microsecond} {
		got, err := Decode(Encode(d))
		if err != nil || got != d {
			t.Errorf("Decode(Encode(%v)) = %v, %v", d, got, err)
		}
	}
}

func TestDecodeRefuses(t *testing.T) {
	for _, req := range [][]byte{{1}, {0, 0, 0, 0, 0}, {0xff, 0xff, 0xff, 0xff}} {
		if d, err := Decode(req); err == nil {
			t.Errorf("Decode(%v) = %v, want an error", req, d)
		}
	}
	if d, err := Decode(nil); err != nil || d != 0 {
		t.Errorf("Decode(nil) = %v, %v, want 0", d, err)
	}
}

func TestCodec(t *testing.T) {
	var c Codec
	b, err := c.Marshal(Encode(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	if err := c.Unmarshal(b, &out); err != nil || string(out) != string(b) {
		t.Fatalf("Unmarshal: %v, %v", out, err)
	}
	if _, err := c.Marshal("text"); err == nil {
		t.Error("Marshal of a string: no error")
	}
	if err := c.Unmarshal(b, &struct{}{}); err == nil {
		t.Error("Unmarshal into a struct: no error")
	}
}
