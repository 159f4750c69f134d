package criwire

import (
	"encoding/binary"
	"errors"
	"unicode/utf8"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ErrDeclined is UnmarshalListing's error for a message it leaves to
// protobuf-go: an unknown or mistyped field, a sub-message given twice, a
// string that is not UTF-8, or a malformed encoding.
var ErrDeclined = errors.New("criwire: not a plain container listing, decode it with protobuf-go")

// UnmarshalListing decodes a listing message into its containers. It
// fails, with ErrDeclined, wherever protobuf-go would keep more than the
// fields' values or would fail itself; see the package documentation.
func UnmarshalListing(b []byte) ([]*runtimeapi.Container, error) {
	return decodeListing(b, func() string { return string(b) })
}

// UnmarshalListingString is UnmarshalListing of the bytes of s, whose
// substrings the containers' strings are: no copy. A caller that gathers a
// message from pieces can thus copy it once, into a strings.Builder, which
// unlike make([]byte) does not clear the memory first.
func UnmarshalListingString(s string) ([]*runtimeapi.Container, error) {
	// The decoder only reads b.
	return decodeListing(unsafe.Slice(unsafe.StringData(s), len(s)), func() string { return s })
}

// decodeListing decodes b, whose bytes as a string str returns: only once
// b proves to be a listing.
func decodeListing(b []byte, str func() string) ([]*runtimeapi.Container, error) {
	d := decoder{b: b}
	n, err := d.count(0, len(b), listingContainers, true)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	d.s = str()
	cs := make([]*runtimeapi.Container, n)
	parts := make([]containerParts, n)
	for k, i := 0, 0; i < len(b); k++ {
		// count accepted every field, so each is a container.
		_, _, j, err := d.tag(i, len(b))
		if err != nil {
			return nil, err
		}
		start, end, err := d.span(j, len(b))
		if err != nil {
			return nil, err
		}
		p := &parts[k]
		if err := d.container(&p.container, &p.metadata, &p.image, start, end); err != nil {
			return nil, err
		}
		d.hints = [2]int{len(p.container.Labels), len(p.container.Annotations)}
		cs[k] = &p.container
		i = end
	}
	return cs, nil
}

// containerParts is a container with room for its metadata and image
// spec, allocated together: a stream of one container per message would
// otherwise allocate three times per message.
type containerParts struct {
	container runtimeapi.Container
	metadata  runtimeapi.ContainerMetadata
	image     runtimeapi.ImageSpec
}

// decoder reads a message as b and cuts its strings from s, the same bytes
// as a string.
type decoder struct {
	b []byte
	s string
	// hints are the sizes of the last container's labels and annotations
	// (decodeListing keeps them), once hinted.
	hints  [2]int
	hinted bool
}

// tag reads the field tag at b[i:end] and returns where its value starts.
func (d *decoder) tag(i, end int) (protowire.Number, protowire.Type, int, error) {
	if i < end && d.b[i] >= 1<<3 && d.b[i] < 0x80 { // fields 1 to 15: one byte
		return protowire.Number(d.b[i] >> 3), protowire.Type(d.b[i] & 7), i + 1, nil
	}
	num, typ, n := protowire.ConsumeTag(d.b[i:end])
	if n < 0 {
		return 0, 0, 0, ErrDeclined
	}
	return num, typ, i + n, nil
}

// span reads the length-delimited value at b[i:end] and returns its bounds.
func (d *decoder) span(i, end int) (start, stop int, err error) {
	if i < end && d.b[i] < 0x80 { // shorter than 128 bytes
		if n := int(d.b[i]); n < end-i {
			return i + 1, i + 1 + n, nil
		}
		return 0, 0, ErrDeclined
	}
	v, n := protowire.ConsumeVarint(d.b[i:end])
	if n < 0 || v > uint64(end-i-n) {
		return 0, 0, ErrDeclined
	}
	start = i + n
	return start, start + int(v), nil
}

// str reads the string value at b[i:end] and returns where it ends.
// Unless ascii says the whole of b[i:end] is ASCII already, it checks
// that the string is UTF-8, which protobuf-go requires of proto3 strings.
func (d *decoder) str(i, end int, ascii bool) (string, int, error) {
	start, stop, err := d.span(i, end)
	if err != nil {
		return "", 0, err
	}
	s := d.s[start:stop]
	if !ascii && !utf8.ValidString(s) {
		return "", 0, ErrDeclined
	}
	return s, stop, nil
}

// ascii reports whether b[i:end] is all ASCII, eight bytes at a time. A
// map entry of short ASCII strings is: its tags and lengths are below 128
// too. One check of an entry costs less than checking its key and value.
func (d *decoder) ascii(i, end int) bool {
	b := d.b[i:end]
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b)&0x8080808080808080 != 0 {
			return false
		}
		b = b[8:]
	}
	var or byte
	for _, c := range b {
		or |= c
	}
	return or < 0x80
}

// varint reads the varint value at b[i:end] and returns where it ends.
func (d *decoder) varint(i, end int) (uint64, int, error) {
	v, n := protowire.ConsumeVarint(d.b[i:end])
	if n < 0 {
		return 0, 0, ErrDeclined
	}
	return v, i + n, nil
}

// count counts the length-delimited fields num in b[i:end]. If only, it
// declines any other field.
func (d *decoder) count(i, end int, num protowire.Number, only bool) (int, error) {
	n, _, err := d.count2(i, end, num, 0, only)
	return n, err
}

// count2 counts the length-delimited fields num1 and num2 in b[i:end]. If
// only, it declines any other field.
func (d *decoder) count2(i, end int, num1, num2 protowire.Number, only bool) (n1, n2 int, err error) {
	for i < end {
		f, typ, j, err := d.tag(i, end)
		if err != nil {
			return 0, 0, err
		}
		switch {
		case typ == protowire.BytesType && f == num1:
			n1++
		case typ == protowire.BytesType && f == num2:
			n2++
		case only:
			return 0, 0, ErrDeclined
		}
		if typ == protowire.BytesType {
			_, i, err = d.span(j, end)
			if err != nil {
				return 0, 0, err
			}
			continue
		}
		skip := protowire.ConsumeFieldValue(f, typ, d.b[j:end])
		if skip < 0 {
			return 0, 0, ErrDeclined
		}
		i = j + skip
	}
	return n1, n2, nil
}

// entry decodes the map entry at b[i:end] into m and returns where it
// ends.
func (d *decoder) entry(m map[string]string, i, end int) (int, error) {
	start, stop, err := d.span(i, end)
	if err != nil {
		return 0, err
	}
	var k, v string // absent key or value: the empty string
	ascii := d.ascii(start, stop)
	for j := start; j < stop; {
		num, typ, at, err := d.tag(j, stop)
		if err != nil {
			return 0, err
		}
		if typ != protowire.BytesType || (num != mapKey && num != mapValue) {
			return 0, ErrDeclined
		}
		var s string
		if s, j, err = d.str(at, stop, ascii); err != nil {
			return 0, err
		}
		if num == mapKey {
			k = s
		} else {
			v = s
		}
	}
	m[k] = v
	return stop, nil
}

// newMap makes the map of field num, whose first entry's tag is at
// b[i:end], with room for all its entries: growing a map rehashes it.
func (d *decoder) newMap(i, end int, num protowire.Number) map[string]string {
	n, err := d.count(i, end, num, false)
	if err != nil {
		n = 0 // the decoding proper reports it
	}
	return make(map[string]string, n)
}

// containerMap makes the map of a container's labels or annotations (num)
// when its first entry is at b[i:end], with room for as many entries as
// the previous container's map had: the containers of one listing mostly
// have as many as each other, and a map that grows rehashes. The first
// container of a message counts its entries.
func (d *decoder) containerMap(num protowire.Number, i, end int) map[string]string {
	if !d.hinted {
		labels, annotations, err := d.count2(i, end, containerLabels, containerAnnotations, false)
		if err == nil { // else the decoding proper fails where counting did
			d.hints = [2]int{labels, annotations}
		}
		d.hinted = true
	}
	return make(map[string]string, d.hints[num-containerLabels])
}

// container decodes the container at b[i:end] into c, and its metadata and
// image spec, if present, into meta and img.
func (d *decoder) container(c *runtimeapi.Container, meta *runtimeapi.ContainerMetadata, img *runtimeapi.ImageSpec, i, end int) error {
	for i < end {
		num, typ, j, err := d.tag(i, end)
		if err != nil {
			return err
		}
		switch {
		case typ == protowire.VarintType && (num == containerState || num == containerCreatedAt):
			var v uint64
			if v, i, err = d.varint(j, end); err != nil {
				return err
			}
			if num == containerState {
				c.State = runtimeapi.ContainerState(int32(v))
			} else {
				c.CreatedAt = int64(v)
			}
		case typ != protowire.BytesType:
			return ErrDeclined
		case num == containerID:
			c.Id, i, err = d.str(j, end, false)
		case num == containerPodSandboxID:
			c.PodSandboxId, i, err = d.str(j, end, false)
		case num == containerImageRef:
			c.ImageRef, i, err = d.str(j, end, false)
		case num == containerImageID:
			c.ImageId, i, err = d.str(j, end, false)
		case num == containerLabels:
			if c.Labels == nil {
				c.Labels = d.containerMap(num, i, end)
			}
			i, err = d.entry(c.Labels, j, end)
		case num == containerAnnotations:
			if c.Annotations == nil {
				c.Annotations = d.containerMap(num, i, end)
			}
			i, err = d.entry(c.Annotations, j, end)
		case num == containerMetadata && c.Metadata == nil:
			var start int
			if start, i, err = d.span(j, end); err == nil {
				err = d.metadata(meta, start, i)
				c.Metadata = meta
			}
		case num == containerImage && c.Image == nil:
			var start int
			if start, i, err = d.span(j, end); err == nil {
				err = d.image(img, start, i)
				c.Image = img
			}
		default: // unknown, or a sub-message protobuf-go would merge
			return ErrDeclined
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) metadata(m *runtimeapi.ContainerMetadata, i, end int) error {
	for i < end {
		num, typ, j, err := d.tag(i, end)
		if err != nil {
			return err
		}
		switch {
		case num == metadataName && typ == protowire.BytesType:
			m.Name, i, err = d.str(j, end, false)
		case num == metadataAttempt && typ == protowire.VarintType:
			var v uint64
			v, i, err = d.varint(j, end)
			m.Attempt = uint32(v)
		default:
			return ErrDeclined
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) image(s *runtimeapi.ImageSpec, i, end int) error {
	for i < end {
		num, typ, j, err := d.tag(i, end)
		if err != nil {
			return err
		}
		if typ != protowire.BytesType {
			return ErrDeclined
		}
		switch num {
		case imageImage:
			s.Image, i, err = d.str(j, end, false)
		case imageAnnotations:
			if s.Annotations == nil {
				s.Annotations = d.newMap(i, end, num)
			}
			i, err = d.entry(s.Annotations, j, end)
		case imageUserSpecifiedImage:
			s.UserSpecifiedImage, i, err = d.str(j, end, false)
		case imageRuntimeHandler:
			s.RuntimeHandler, i, err = d.str(j, end, false)
		case imageImageRef:
			s.ImageRef, i, err = d.str(j, end, false)
		default:
			return ErrDeclined
		}
		if err != nil {
			return err
		}
	}
	return nil
}
