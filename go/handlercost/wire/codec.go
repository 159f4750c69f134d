package wire

import "fmt"

// Codec passes messages through as raw octets: a message is a []byte (or a
// *[]byte), and unmarshals into a *[]byte. Both sides force it
// (grpc.ForceServerCodec, grpc.ForceCodec), so no protobuf is involved.
type Codec struct{}

// Name is the content subtype the client sends: "application/grpc+raw".
func (Codec) Name() string { return "raw" }

// Marshal returns the octets of a []byte or *[]byte message.
func (Codec) Marshal(v any) ([]byte, error) {
	switch m := v.(type) {
	case []byte:
		return m, nil
	case *[]byte:
		return *m, nil
	}
	return nil, fmt.Errorf("wire: cannot marshal a %T, only []byte", v)
}

// Unmarshal stores a copy of data in v, a *[]byte: the transport may reuse
// its buffer.
func (Codec) Unmarshal(data []byte, v any) error {
	m, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("wire: cannot unmarshal into a %T, only *[]byte", v)
	}
	*m = append((*m)[:0], data...)
	return nil
}
