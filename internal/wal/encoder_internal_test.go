package wal

import "testing"

// TestCheckRecordLimit checks the payload limit without allocating 4 GiB.
func TestCheckRecordLimit(t *testing.T) {
	tests := []struct {
		name  string
		typ   byte
		n     uint64
		panic bool
	}{
		{"empty", 1, 0, false},
		{"at the limit", 255, MaxPayload, false},
		{"past the limit", 1, MaxPayload + 1, true},
		{"type 0", 0, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if got := recover() != nil; got != tt.panic {
					t.Fatalf("panicked: %v, want %v", got, tt.panic)
				}
			}()
			checkRecord(tt.typ, tt.n)
		})
	}
}
