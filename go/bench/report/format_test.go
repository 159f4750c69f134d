package report

import "testing"

func TestFormatValue(t *testing.T) {
	tests := []struct {
		v    float64
		unit string
		want string
	}{
		{3.5, "s", "3.50 s"},
		{0.0656, "s", "65.6 ms"},
		{2.67e6, "ns", "2.67 ms"},
		{174000, "ns", "174 µs"},
		{850, "ns", "850 ns"},
		{9.996, "s", "10.0 s"},
		{4289, "ns/op", "4.29 µs/op"},
		{880 * 1024, "B/op", "880 KiB"},
		{19.3 * 1024 * 1024, "B/op", "19.3 MiB"},
		{512, "B/op", "512 B"},
		{19.3 * 1024, "B", "19.3 KiB"},
		{14271, "allocs/op", "14,271"},
		{30850.4, "req/s", "30,850 req/s"},
		{1.2947, "ratio", "1.29x"},
		{1300, "count", "1,300"},
		{0, "count", "0"},
		{0.1333, "ratio", "0.133x"},
	}
	for _, tt := range tests {
		if got := FormatValue(tt.v, tt.unit); got != tt.want {
			t.Errorf("FormatValue(%v, %q) = %q, want %q", tt.v, tt.unit, got, tt.want)
		}
	}
}

func TestFormatPercentAndFactor(t *testing.T) {
	for _, tt := range []struct {
		got, want string
	}{
		{FormatPercent(0.257), "26%"},
		{FormatPercent(0.0013), "0.13%"},
		{FormatPercent(1.017), "102%"},
		{FormatFactor(2.108), "2.1x"},
		{FormatFactor(794.2), "794x"},
		{FormatFactor(1234.5), "1,235x"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
