package features_test

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

// retryConfig is a service config with a retry policy for features.Peer.
func retryConfig(attempts int, backoff string, extra string) string {
	return fmt.Sprintf(`{"methodConfig": [{"name": [{"service": "features.Peer"}],
		"retryPolicy": {"maxAttempts": %d, "initialBackoff": %q, "maxBackoff": %q,
			"backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]%s}`,
		attempts, backoff, backoff, extra)
}

// previous is the grpc-previous-rpc-attempts of each attempt.
func previous(attempts []attempt) []string {
	var values []string
	for _, a := range attempts {
		values = append(values, a.previous)
	}
	return values
}

func TestRetryPolicyTriesAgainWithTheAttemptCount(t *testing.T) {
	lis := listen(t)
	p := startPeer(t, lis)
	got := runGrpccall(t, lis.Addr().String(), "-method", flakyPath, "-request", "0102",
		"-service_config", retryConfig(4, "0.01s", ""), "-timeout", "10s",
		"-metadata", "call-id=unary,fail-first=2")
	if len(got) != 1 || got[0].Code != "OK" || got[0].Response != "0102" {
		t.Fatalf("the call: %+v, want OK with the request echoed", got)
	}
	if want := []string{"", "1", "2"}; !slices.Equal(previous(p.seen("unary")), want) {
		t.Errorf("grpc-previous-rpc-attempts of the attempts grpc-go saw: %q, want %q", previous(p.seen("unary")), want)
	}
	for _, a := range p.seen("unary") {
		t.Logf("attempt at %s, grpc-previous-rpc-attempts %q", a.at.Format("15:04:05.000"), a.previous)
	}

	// maxAttempts counts every attempt: three, then the last status.
	got = runGrpccall(t, lis.Addr().String(), "-method", flakyPath, "-service_config", retryConfig(3, "0.01s", ""),
		"-metadata", "call-id=exhausted,fail-first=9")
	if len(got) != 1 || got[0].Code != "UNAVAILABLE" || len(p.seen("exhausted")) != 3 {
		t.Errorf("always failing, maxAttempts 3: %+v after %d attempts, want UNAVAILABLE after 3", got, len(p.seen("exhausted")))
	}

	// A status the policy does not name is not retried.
	got = runGrpccall(t, lis.Addr().String(), "-method", flakyPath, "-service_config", retryConfig(4, "0.01s", ""),
		"-metadata", "call-id=internal,fail-first=1,fail-code=13")
	if len(got) != 1 || got[0].Code != "INTERNAL" || len(p.seen("internal")) != 1 {
		t.Errorf("INTERNAL: %+v after %d attempts, want INTERNAL after 1", got, len(p.seen("internal")))
	}
}

func TestRetryPolicySendsAClientStreamAgainWhole(t *testing.T) {
	lis := listen(t)
	p := startPeer(t, lis)
	got := runGrpccall(t, lis.Addr().String(), "-method", sumPath, "-kind", "client_streaming", "-messages", "25",
		"-request", "ff", "-service_config", retryConfig(3, "0.01s", ""), "-timeout", "10s",
		"-metadata", "call-id=stream,fail-first=2")
	if len(got) != 1 || got[0].Code != "OK" || got[0].Response != "00000019" {
		t.Fatalf("the call: %+v, want OK with 25 messages counted", got)
	}
	seen := p.seen("stream")
	if len(seen) != 3 {
		t.Fatalf("grpc-go saw %d attempts, want 3", len(seen))
	}
	for i, a := range seen {
		if a.messages != 25 {
			t.Errorf("attempt %d carried %d messages, want all 25", i, a.messages)
		}
	}
}

func TestRetryPushbackSetsTheDelayOrForbidsTheRetry(t *testing.T) {
	lis := listen(t)
	p := startPeer(t, lis)
	got := runGrpccall(t, lis.Addr().String(), "-method", flakyPath, "-service_config", retryConfig(3, "0.001s", ""),
		"-timeout", "10s", "-metadata", "call-id=pushback,fail-first=2,pushback-ms=300")
	seen := p.seen("pushback")
	if len(got) != 1 || got[0].Code != "OK" || len(seen) != 3 {
		t.Fatalf("with a 300 ms pushback: %+v after %d attempts, want OK after 3", got, len(seen))
	}
	for i := 1; i < len(seen); i++ {
		if gap := seen[i].at.Sub(seen[i-1].at); gap < 300*time.Millisecond {
			t.Errorf("attempt %d came %v after the one before, under the server's 300 ms pushback", i, gap)
		}
	}

	got = runGrpccall(t, lis.Addr().String(), "-method", flakyPath, "-service_config", retryConfig(3, "0.001s", ""),
		"-metadata", "call-id=refused,fail-first=2,pushback-ms=-1")
	if len(got) != 1 || got[0].Code != "UNAVAILABLE" || len(p.seen("refused")) != 1 {
		t.Errorf("with a pushback of -1: %+v after %d attempts, want UNAVAILABLE after 1", got, len(p.seen("refused")))
	}
}

func TestRetryThrottlingStopsRetriesOnceHalfTheTokensAreGone(t *testing.T) {
	lis := listen(t)
	p := startPeer(t, lis)
	// Ten tokens; each failed attempt takes one, and retries stop once five
	// or fewer are left: two calls retry, the rest do not.
	got := runGrpccall(t, lis.Addr().String(), "-method", flakyPath, "-calls", "6",
		"-service_config", retryConfig(2, "0.001s", `, "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}`),
		"-metadata", "call-id=throttled,fail-first=1000")
	if want := []string{"UNAVAILABLE", "UNAVAILABLE", "UNAVAILABLE", "UNAVAILABLE", "UNAVAILABLE", "UNAVAILABLE"}; !slices.Equal(statusNames(got), want) {
		t.Fatalf("the calls ended %q, want %q", statusNames(got), want)
	}
	if want := []string{"", "1", "", "1", "", "", "", ""}; !slices.Equal(previous(p.seen("throttled")), want) {
		t.Errorf("attempts grpc-go saw (their grpc-previous-rpc-attempts): %q, want %q", previous(p.seen("throttled")), want)
	}
}

func TestServiceConfigTimeoutAndMessageLimit(t *testing.T) {
	lis := listen(t)
	p := startPeer(t, lis)
	config := `{"methodConfig": [{"name": [{"service": "features.Peer", "method": "Flaky"}],
		"timeout": "0.2s", "maxRequestMessageBytes": 8}]}`
	got := runGrpccall(t, lis.Addr().String(), "-method", flakyPath, "-service_config", config,
		"-metadata", "call-id=slow,sleep-ms=3000")
	if len(got) != 1 || got[0].Code != "DEADLINE_EXCEEDED" || got[0].Ms > 2000 {
		t.Errorf("a 3 s handler under the config's 0.2 s timeout: %+v, want DEADLINE_EXCEEDED at once", got)
	}
	if seen := p.seen("slow"); len(seen) != 1 || seen[0].timeout <= 0 || seen[0].timeout > 200*time.Millisecond {
		t.Errorf("grpc-go saw %+v, want one attempt with at most 0.2 s left", seen)
	}
	got = runGrpccall(t, lis.Addr().String(), "-method", flakyPath, "-service_config", config,
		"-request", strings.Repeat("00", 9), "-metadata", "call-id=big")
	if len(got) != 1 || got[0].Code != "RESOURCE_EXHAUSTED" || len(p.seen("big")) != 0 {
		t.Errorf("9 octets past the config's 8: %+v, %d attempts reached grpc-go; want RESOURCE_EXHAUSTED, none",
			got, len(p.seen("big")))
	}
}

func TestWaitForReadyRidesOutAServerNotYetListening(t *testing.T) {
	lis := listen(t)
	addr := lis.Addr().String()
	lis.Close()

	got := runGrpccall(t, addr, "-method", flakyPath, "-timeout", "5s")
	if len(got) != 1 || got[0].Code != "UNAVAILABLE" {
		t.Fatalf("nothing listening, failing fast: %+v, want UNAVAILABLE", got)
	}

	started := make(chan *peer, 1)
	go func() {
		time.Sleep(500 * time.Millisecond)
		lis, err := net.Listen("tcp", addr)
		if err != nil {
			t.Error(err)
			started <- nil
			return
		}
		started <- startPeer(t, lis)
	}()
	config := `{"methodConfig": [{"name": [{"service": "features.Peer"}], "waitForReady": true}]}`
	got = runGrpccall(t, addr, "-method", flakyPath, "-service_config", config, "-timeout", "10s",
		"-metadata", "call-id=ready")
	p := <-started
	if len(got) != 1 || got[0].Code != "OK" || p == nil || len(p.seen("ready")) != 1 {
		t.Errorf("waiting for ready while the server starts: %+v, want OK", got)
	}
}

func TestInvalidServiceConfigIsAUsageError(t *testing.T) {
	for _, config := range []string{
		`{"methodConfig": [{"name": [{"service": "features.Peer"}], "timeout": "1 second"}]}`,
		`{"methodConfig": [{"name": [{"service": "features.Peer"}], "retryPolicy": {"maxAttempts": 1}}]}`,
	} {
		_, stderr, code := runGrpccallExit(t, "-addr", "127.0.0.1:1", "-method", flakyPath, "-service_config", config)
		if code != 2 || !strings.Contains(stderr, "invalid service config") {
			t.Errorf("config %s: exit %d, stderr %q; want 2 and the reason", config, code, stderr)
		}
	}
}

func TestHedgingAnswersFromASecondAttemptWhileTheFirstIsSlow(t *testing.T) {
	lis := listen(t)
	p := startPeer(t, lis)
	config := `{"methodConfig": [{"name": [{"service": "features.Peer"}],
		"hedgingPolicy": {"maxAttempts": 3, "hedgingDelay": "0.1s", "nonFatalStatusCodes": ["UNAVAILABLE"]}}]}`
	got := runGrpccall(t, lis.Addr().String(), "-method", flakyPath, "-request", "07", "-service_config", config,
		"-timeout", "10s", "-metadata", "call-id=hedged,sleep-first-ms=5000")
	if len(got) != 1 || got[0].Code != "OK" || got[0].Response != "07" || got[0].Ms > 2000 {
		t.Fatalf("a hedged call whose first attempt takes 5 s: %+v, want OK from the hedge within about 0.1 s", got)
	}
	if want := []string{"", "1"}; !slices.Equal(previous(p.seen("hedged")), want) {
		t.Errorf("grpc-go saw attempts with grpc-previous-rpc-attempts %q, want %q", previous(p.seen("hedged")), want)
	}
	// The slow attempt is cancelled once the hedge has answered.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		p.mu.Lock()
		cancelled := p.cancelled["hedged"]
		p.mu.Unlock()
		if cancelled == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slow first attempt was not cancelled")
		}
	}
	t.Logf("answered in %d ms by the hedge; the first attempt cancelled", got[0].Ms)

	// A non-fatal failure sends the next hedge at once, whatever the delay.
	config = `{"methodConfig": [{"name": [{"service": "features.Peer"}],
		"hedgingPolicy": {"maxAttempts": 3, "hedgingDelay": "10s", "nonFatalStatusCodes": ["UNAVAILABLE"]}}]}`
	got = runGrpccall(t, lis.Addr().String(), "-method", flakyPath, "-service_config", config, "-timeout", "10s",
		"-metadata", "call-id=nonfatal,fail-first=1")
	if len(got) != 1 || got[0].Code != "OK" || got[0].Ms > 2000 || len(p.seen("nonfatal")) != 2 {
		t.Errorf("first attempt UNAVAILABLE (non-fatal): %+v after %d attempts, want OK at once after 2", got, len(p.seen("nonfatal")))
	}
}
