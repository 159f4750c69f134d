package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// The content types are really used: against a real kcp, each of the four
// is the request Content-Type (for create and delete, which have bodies),
// the Accept header, and the response Content-Type of all three requests,
// and each body starts as that format does.
func TestContentTypesOnTheWire(t *testing.T) {
	kcp := startTestKCP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, k := range allKinds {
		for _, media := range allMediaTypes {
			t.Run(k.Benchmark+"/"+formatNames[media], func(t *testing.T) {
				xs, err := recordCycle(ctx, kcp.Config, k, media, "wire-test-"+k.Short+"-"+formatNames[media])
				if err != nil {
					t.Fatalf("create+get+delete: %v (exchanges: %+v)", err, xs)
				}
				wantMethods := []string{"POST", "GET", "DELETE"}
				if len(xs) != len(wantMethods) {
					t.Fatalf("recorded %d requests, want %v: %+v", len(xs), wantMethods, xs)
				}
				for i, x := range xs {
					if x.Method != wantMethods[i] {
						t.Errorf("request %d is %s, want %s", i, x.Method, wantMethods[i])
					}
					if x.Method != "GET" && len(x.RequestBody) == 0 {
						t.Errorf("%s %s: no request body recorded", x.Method, x.Path)
					}
					if err := checkExchange(x, media); err != nil {
						t.Error(err)
					}
					t.Logf("%s %s: Content-Type %q, Accept %q -> %d %q %q", x.Method, x.Path,
						x.RequestContentType, x.Accept, x.Status, x.ResponseContentType, x.ResponseBody)
				}
			})
		}
	}
	// The benchmark's own pre-flight check agrees.
	for _, media := range allMediaTypes {
		if n, err := verifyWire(ctx, kcp.Config, allKinds[0], media); err != nil || n != 3 {
			t.Errorf("verifyWire(%s) = %d, %v", media, n, err)
		}
	}
	// And a kind measured in every content type, in turns, gives each its
	// repetitions: a warm-up before each one's first turn only.
	var progress strings.Builder
	p := clientPlan{Plan: harness.Plan{Workers: 1, Ops: 2, Reps: 2, Warmup: harness.Warmup{Ops: 1}},
		ServerPID: kcp.PID(), ServerExited: kcp.ExitedEarly}
	results := runKind(ctx, kcp.Config, allKinds[0], allMediaTypes, p, &progress)
	if len(results) != len(allMediaTypes) {
		t.Fatalf("%d results for %d content types", len(results), len(allMediaTypes))
	}
	for i, r := range results {
		ops, _ := r.Metric(schema.MetricOps)
		if r.Status != schema.StatusOK || len(ops.Reps) != 2 || r.Parameters["content_type"] != allMediaTypes[i] {
			t.Errorf("%s: %s, %d repetitions: %s", r.Scenario, r.Status, len(ops.Reps), r.Error)
		}
	}
	if got := strings.Count(progress.String(), "warm-up"); got != len(allMediaTypes) {
		t.Errorf("%d warm-ups, want one per content type:\n%s", got, progress.String())
	}
}

// The check itself rejects what a client configured too late sends: JSON while
// claiming to benchmark another content type.
func TestCheckExchangeRejectsJSONForOtherTypes(t *testing.T) {
	jsonExchange := exchange{
		Method: "POST", Path: "/api/v1/namespaces/x/configmaps",
		RequestContentType: mediaJSON, Accept: mediaJSON, RequestBody: []byte(`{"kind":"ConfigMap"`),
		Status: 201, ResponseContentType: mediaJSON, ResponseBody: []byte(`{"kind":"ConfigMap"`),
	}
	if err := checkExchange(jsonExchange, mediaJSON); err != nil {
		t.Errorf("a JSON exchange fails the JSON check: %v", err)
	}
	for _, media := range []string{mediaYAML, mediaProtobuf, mediaCBOR} {
		if err := checkExchange(jsonExchange, media); err == nil {
			t.Errorf("a JSON exchange passes the %s check", media)
		}
	}
	// A server that labels JSON as protobuf is caught by the body.
	lying := jsonExchange
	lying.RequestContentType, lying.Accept, lying.ResponseContentType = mediaProtobuf, mediaProtobuf, mediaProtobuf
	lying.RequestBody = []byte("k8s\x00\n\x0f")
	if err := checkExchange(lying, mediaProtobuf); err == nil || !strings.Contains(err.Error(), "response body") {
		t.Errorf("JSON labelled as protobuf: err = %v", err)
	}
}

func TestLooksLike(t *testing.T) {
	for _, c := range []struct {
		media string
		body  string
		want  bool
	}{
		{mediaJSON, `{"apiVersion":"v1"}`, true},
		{mediaJSON, "apiVersion: v1\n", false},
		{mediaYAML, "apiVersion: v1\n", true},
		{mediaYAML, `{"apiVersion":"v1"}`, false},
		{mediaProtobuf, "k8s\x00\n\x0f", true},
		{mediaProtobuf, `{"a":1}`, false},
		{mediaCBOR, "\xd9\xd9\xf7\xa4", true},
		{mediaCBOR, `{"a":1}`, false},
		{mediaCBOR, "", false},
	} {
		if got := looksLike(c.media, []byte(c.body)); got != c.want {
			t.Errorf("looksLike(%s, %q) = %v, want %v", c.media, c.body, got, c.want)
		}
	}
}
