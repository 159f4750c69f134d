package features_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	dto "github.com/prometheus/client_model/go"

	"github.com/grpcbench/grpcbench/go/bench/serverproc"
	"github.com/grpcbench/grpcbench/internal/runfile"
	pb "github.com/grpcbench/grpcbench/proto/routeguide"
)

var lispRouteguideServer = flag.String("lisp_routeguide_server", "", "rlocation of //lisp/routeguide:server")

// parseExposition parses Prometheus text with Prometheus' own parser.
func parseExposition(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("Prometheus' parser refused the exposition: %v\n%s", err, text)
	}
	return families
}

// sample is the metric of family name whose labels include want, or nil.
func sample(families map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	family := families[name]
	if family == nil {
		return nil
	}
	for _, m := range family.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		matches := true
		for k, v := range want {
			if labels[k] != v {
				matches = false
			}
		}
		if matches {
			return m
		}
	}
	return nil
}

func TestTraceContextReachesGrpcGo(t *testing.T) {
	lis := listen(t)
	p := startPeer(t, lis)
	got := runGrpccall(t, lis.Addr().String(), "-method", flakyPath, "-calls", "2", "-trace", "-metadata", "call-id=traced")
	if len(got) != 2 || got[0].Code != "OK" || len(p.seen("traced")) != 2 {
		t.Fatalf("the calls: %+v", got)
	}
	var seen []string
	for _, a := range p.seen("traced") {
		seen = append(seen, a.trace)
	}
	// OpenTelemetry's own W3C propagator must accept what clgrpc sent.
	var traces []string
	for _, header := range seen {
		ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": header})
		sc := trace.SpanContextFromContext(ctx)
		if !sc.IsValid() || !sc.IsSampled() {
			t.Errorf("traceparent %q: OpenTelemetry extracts %+v, want a valid sampled span context", header, sc)
		}
		traces = append(traces, sc.TraceID().String())
	}
	if len(traces) == 2 && traces[0] == traces[1] {
		t.Errorf("two calls outside any trace shared trace %s; each should start its own", traces[0])
	}
	t.Logf("traceparent grpc-go received: %q", seen)
}

func TestClientMetricsAreAScrapePrometheusReads(t *testing.T) {
	lis := listen(t)
	startPeer(t, lis)
	out := filepath.Join(t.TempDir(), "metrics.txt")
	runGrpccall(t, lis.Addr().String(), "-method", flakyPath, "-calls", "3", "-metrics_out", out,
		"-metadata", "call-id=counted")
	runGrpccall(t, lis.Addr().String(), "-method", flakyPath, "-metrics_out", out+".failed",
		"-metadata", "call-id=failed,fail-first=1,fail-code=9")
	text, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	families := parseExposition(t, string(text))
	// A66's grpc.target: the target as gRPC names it canonically.
	target := "dns:///" + lis.Addr().String()
	ok := sample(families, "grpc_client_call_duration_seconds", map[string]string{
		"grpc_method": "features.Peer/Flaky", "grpc_target": target, "grpc_status": "OK"})
	if ok == nil || ok.GetHistogram().GetSampleCount() != 3 {
		t.Errorf("grpc_client_call_duration_seconds{OK}: %v, want 3 calls\n%s", ok, text)
	}
	attempts := sample(families, "grpc_client_attempt_started_total", map[string]string{"grpc_method": "features.Peer/Flaky"})
	if attempts == nil || attempts.GetCounter().GetValue() != 3 {
		t.Errorf("grpc_client_attempt_started_total: %v, want 3", attempts)
	}
	// A call grpc-go fails twice with UNAVAILABLE and a retry policy: three
	// attempts, each with its duration, status and request octets.
	runGrpccall(t, lis.Addr().String(), "-method", flakyPath, "-request", "0102", "-metrics_out", out+".retried",
		"-service_config", retryConfig(4, "0.01s", ""), "-timeout", "10s",
		"-metadata", "call-id=retried,fail-first=2")
	retriedText, err := os.ReadFile(out + ".retried")
	if err != nil {
		t.Fatal(err)
	}
	retried := parseExposition(t, string(retriedText))
	for _, line := range strings.Split(string(retriedText), "\n") {
		if strings.Contains(line, "_count{") || strings.HasPrefix(line, "grpc_client_attempt_started_total{") {
			t.Logf("scrape: %s", line)
		}
	}
	for _, want := range []struct {
		family, status string
		count          uint64
	}{
		{"grpc_client_attempt_duration_seconds", "UNAVAILABLE", 2},
		{"grpc_client_attempt_duration_seconds", "OK", 1},
		{"grpc_client_attempt_sent_total_compressed_message_size_bytes", "UNAVAILABLE", 2},
		{"grpc_client_call_duration_seconds", "OK", 1},
	} {
		got := sample(retried, want.family, map[string]string{"grpc_method": "features.Peer/Flaky", "grpc_status": want.status})
		if got == nil || got.GetHistogram().GetSampleCount() != want.count {
			t.Errorf("%s{%s} after two retries: %v, want %d\n%s", want.family, want.status, got, want.count, retriedText)
		}
	}
	// Each failed attempt sent the two-octet request.
	if sent := sample(retried, "grpc_client_attempt_sent_total_compressed_message_size_bytes",
		map[string]string{"grpc_status": "UNAVAILABLE"}); sent != nil && sent.GetHistogram().GetSampleSum() != 4 {
		t.Errorf("request octets of the two failed attempts: %v, want 4", sent.GetHistogram().GetSampleSum())
	}

	failedText, err := os.ReadFile(out + ".failed")
	if err != nil {
		t.Fatal(err)
	}
	failed := sample(parseExposition(t, string(failedText)), "grpc_client_call_duration_seconds",
		map[string]string{"grpc_status": "FAILED_PRECONDITION"})
	if failed == nil || failed.GetHistogram().GetSampleCount() != 1 {
		t.Errorf("a call grpc-go failed with FAILED_PRECONDITION: %v, want it counted under that status\n%s", failed, failedText)
	}
}

func TestServerMetricsOfTheLispRouteGuideServer(t *testing.T) {
	if *lispRouteguideServer == "" {
		t.Fatal("-lisp_routeguide_server is required")
	}
	metricsPort, err := serverproc.FreeLoopbackPort()
	if err != nil {
		t.Fatal(err)
	}
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", metricsPort)
	server := serverproc.StartForTest(t, "lisp routeguide server",
		[]string{runfile.Path(*lispRouteguideServer), "-addr", "127.0.0.1:0", "-metrics_addr", metricsAddr},
		30*time.Second, 10*time.Second)

	conn, err := grpc.NewClient(server.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := pb.NewRouteGuideClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := 0; i < 5; i++ {
		if _, err := client.GetFeature(ctx, &pb.Point{Latitude: 409146138, Longitude: -746188906}); err != nil {
			t.Fatalf("GetFeature: %v", err)
		}
	}
	stream, err := client.ListFeatures(ctx, &pb.Rectangle{Lo: &pb.Point{Latitude: 400000000, Longitude: -750000000},
		Hi: &pb.Point{Latitude: 420000000, Longitude: -730000000}})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := stream.Recv(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("ListFeatures: %v", err)
		}
	}

	// The call ends on the server just after its client has the trailers.
	var families map[string]*dto.MetricFamily
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		families = parseExposition(t, scrape(t, metricsAddr))
		list := sample(families, "grpc_server_call_duration_seconds", map[string]string{"grpc_method": "routeguide.RouteGuide/ListFeatures"})
		if list != nil || time.Now().After(deadline) {
			break
		}
	}
	started := sample(families, "grpc_server_call_started_total", map[string]string{"grpc_method": "routeguide.RouteGuide/GetFeature"})
	if started == nil || started.GetCounter().GetValue() != 5 {
		t.Errorf("grpc_server_call_started_total{GetFeature}: %v, want 5", started)
	}
	duration := sample(families, "grpc_server_call_duration_seconds", map[string]string{
		"grpc_method": "routeguide.RouteGuide/GetFeature", "grpc_status": "OK"})
	if duration == nil || duration.GetHistogram().GetSampleCount() != 5 {
		t.Errorf("grpc_server_call_duration_seconds{GetFeature, OK}: %v, want 5", duration)
	}
	sent := sample(families, "grpc_server_call_sent_total_compressed_message_size_bytes", map[string]string{
		"grpc_method": "routeguide.RouteGuide/ListFeatures", "grpc_status": "OK"})
	if sent == nil || sent.GetHistogram().GetSampleCount() != 1 || sent.GetHistogram().GetSampleSum() < 1000 {
		t.Errorf("ListFeatures' sent octets: %v, want one call of its many features", sent)
	}
}

// scrape is the body of GET /metrics at addr.
func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s, %v", resp.Status, err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("scrape Content-Type %q, want Prometheus' text format", ct)
	}
	return string(body)
}
