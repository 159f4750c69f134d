package main

import (
	"bytes"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	k8sjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// The serialization micro-benchmark: Kubernetes' own serializers (those
// the API server and client-go use) on the objects the client benchmark
// sends, with nothing of HTTP around them.

// serializers are the four formats' serializers over scheme.
func serializers(scheme *runtime.Scheme) map[string]runtime.Serializer {
	return map[string]runtime.Serializer{
		mediaJSON:     k8sjson.NewSerializerWithOptions(k8sjson.DefaultMetaFactory, scheme, scheme, k8sjson.SerializerOptions{}),
		mediaYAML:     k8sjson.NewSerializerWithOptions(k8sjson.DefaultMetaFactory, scheme, scheme, k8sjson.SerializerOptions{Yaml: true}),
		mediaProtobuf: protobuf.NewSerializer(scheme, scheme),
		mediaCBOR:     cbor.NewSerializer(scheme, scheme),
	}
}

func benchScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := rbacv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// serialObject is one object of the micro-benchmark, named as the client
// benchmark that sends it.
type serialObject struct {
	Benchmark string // SerializationCM, SerializationRBAC
	Short     string // cm, rbac
	Obj       runtime.Object
	New       func() runtime.Object // an empty object to decode into
}

var serialObjects = []serialObject{
	{"SerializationCM", "cm", benchConfigMap("bench-cm", benchNamespace), func() runtime.Object { return &corev1.ConfigMap{} }},
	{"SerializationRBAC", "rbac", benchClusterRole("bench-rbac"), func() runtime.Object { return &rbacv1.ClusterRole{} }},
}

// codecCase is one measured function: encode or decode of one object in one
// format. Run does the work once; the loop around it is the caller's
// (b.Loop in the Go benchmarks, testing.Benchmark in the binary).
type codecCase struct {
	Object  serialObject
	Media   string
	Op      string // encode, decode
	Encoded int    // size of the encoded object, bytes
	Run     func() error
}

// codecCases builds every case for objects x media x {encode, decode},
// and checks each once (a round trip must give back an equal object), so a
// broken codec fails before anything is measured.
func codecCases(objects []serialObject, media []string) ([]codecCase, error) {
	scheme := benchScheme()
	sers := serializers(scheme)
	var cases []codecCase
	for _, o := range objects {
		for _, m := range media {
			s := sers[m]
			var enc bytes.Buffer
			if err := s.Encode(o.Obj, &enc); err != nil {
				return nil, fmt.Errorf("%s %s: encode: %w", o.Benchmark, m, err)
			}
			data := bytes.Clone(enc.Bytes())
			back := o.New()
			if _, _, err := s.Decode(data, nil, back); err != nil {
				return nil, fmt.Errorf("%s %s: decode: %w", o.Benchmark, m, err)
			}
			if !equalObjects(scheme, o.Obj, back) {
				return nil, fmt.Errorf("%s %s: the decoded object differs from the encoded one", o.Benchmark, m)
			}
			var buf bytes.Buffer
			cases = append(cases,
				codecCase{Object: o, Media: m, Op: "encode", Encoded: len(data), Run: func() error {
					buf.Reset()
					return s.Encode(o.Obj, &buf)
				}},
				codecCase{Object: o, Media: m, Op: "decode", Encoded: len(data), Run: func() error {
					_, _, err := s.Decode(data, nil, o.New())
					return err
				}},
			)
		}
	}
	return cases, nil
}

// equalObjects compares through JSON, which ignores the nil-vs-empty
// differences formats are allowed to have.
func equalObjects(scheme *runtime.Scheme, a, b runtime.Object) bool {
	s := serializers(scheme)[mediaJSON]
	var x, y bytes.Buffer
	if s.Encode(a, &x) != nil || s.Encode(b, &y) != nil {
		return false
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}
