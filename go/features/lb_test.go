package features_test

import (
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"
)

// listenOn is a listener on addr ("tcp" or "unix" network), or a skip
// when the machine has no such address.
func listenOn(t *testing.T, network, addr string) net.Listener {
	t.Helper()
	lis, err := net.Listen(network, addr)
	if err != nil {
		t.Fatalf("listen %s %s: %v", network, addr, err)
	}
	return lis
}

// ok counts the outcomes that were OK.
func ok(outcomes []outcome) int {
	n := 0
	for _, o := range outcomes {
		if o.Code == "OK" {
			n++
		}
	}
	return n
}

func TestRoundRobinSpreadsOverThreeGrpcGoServers(t *testing.T) {
	var peers []*peer
	var addrs []string
	for _, host := range []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"} {
		lis := listenOn(t, "tcp", host+":0")
		peers = append(peers, startPeer(t, lis))
		addrs = append(addrs, lis.Addr().String())
	}
	target := fmt.Sprintf("ipv4:%s,%s,%s", addrs[0], addrs[1], addrs[2])
	got := runGrpccall(t, "", "-target", target, "-lb_policy", "round_robin", "-method", flakyPath,
		"-calls", "90", "-metadata", "call-id=spread")
	if ok(got) != 90 {
		t.Fatalf("%d of 90 calls OK", ok(got))
	}
	for i, p := range peers {
		if n := len(p.seen("spread")); n != 30 {
			t.Errorf("server %s answered %d of 90 calls, want 30", addrs[i], n)
		}
	}

	// The same policy, from the service config's loadBalancingConfig (its
	// first entry is one clgrpc does not have).
	got = runGrpccall(t, "", "-target", target, "-method", flakyPath, "-calls", "90",
		"-service_config", `{"loadBalancingConfig": [{"weighted_round_robin": {}}, {"round_robin": {}}]}`,
		"-metadata", "call-id=configured")
	if ok(got) != 90 {
		t.Fatalf("%d of 90 calls OK with the policy from the service config", ok(got))
	}
	for i, p := range peers {
		if n := len(p.seen("configured")); n != 30 {
			t.Errorf("loadBalancingConfig round_robin: server %s answered %d of 90 calls, want 30", addrs[i], n)
		}
	}
}

func TestRoundRobinLeavesAStoppedServerAndRejoinsItWhenItReturns(t *testing.T) {
	var peers []*peer
	var addrs []string
	stops := make([]func(), 3)
	for i, host := range []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"} {
		lis := listenOn(t, "tcp", host+":0")
		p, stop := startStoppablePeer(t, lis)
		peers, stops[i] = append(peers, p), stop
		addrs = append(addrs, lis.Addr().String())
	}
	target := fmt.Sprintf("ipv4:%s,%s,%s", addrs[0], addrs[1], addrs[2])

	// 200 calls 20 ms apart (about 5 s): server 2 stops after 1 s and
	// comes back on its address at 2.5 s.
	var restarted time.Time
	var back *peer
	go func() {
		time.Sleep(time.Second)
		stops[1]()
		time.Sleep(1500 * time.Millisecond)
		lis := listenOn(t, "tcp", addrs[1])
		restarted = time.Now()
		back = startPeer(t, lis)
	}()
	got := runGrpccall(t, "", "-target", target, "-lb_policy", "round_robin", "-method", flakyPath,
		"-calls", "200", "-interval", "20ms", "-metadata", "call-id=churn")
	if ok(got) != 200 {
		t.Errorf("%d of 200 calls OK through the stop and the restart: %+v", ok(got), firstFailure(got))
	}
	before := len(peers[1].seen("churn"))
	after := 0
	if back != nil {
		after = len(back.seen("churn"))
	}
	t.Logf("server 2 answered %d calls before it stopped and %d after it came back (at %s); servers 1 and 3: %d, %d",
		before, after, restarted.Format("15:04:05.000"), len(peers[0].seen("churn")), len(peers[2].seen("churn")))
	if before == 0 || after == 0 {
		t.Errorf("server 2 answered %d calls before stopping and %d after returning; want some of each", before, after)
	}
	if one, three := len(peers[0].seen("churn")), len(peers[2].seen("churn")); one-three > 4 || three-one > 4 {
		t.Errorf("servers 1 and 3 answered %d and %d calls: the stopped server's turns were not shared evenly", one, three)
	}
}

func firstFailure(outcomes []outcome) *outcome {
	for i := range outcomes {
		if outcomes[i].Code != "OK" {
			return &outcomes[i]
		}
	}
	return nil
}

func TestPickFirstUsesTheFirstAddressThatAnswers(t *testing.T) {
	down := listen(t)
	downAddr := down.Addr().String()
	down.Close()
	lis1, lis2 := listen(t), listen(t)
	second, third := startPeer(t, lis1), startPeer(t, lis2)
	got := runGrpccall(t, "", "-target", fmt.Sprintf("ipv4:%s,%s,%s", downAddr, lis1.Addr(), lis2.Addr()),
		"-method", flakyPath, "-calls", "10", "-metadata", "call-id=first")
	if ok(got) != 10 || len(second.seen("first")) != 10 || len(third.seen("first")) != 0 {
		t.Errorf("pick_first past a closed port: %d OK, %d to the second address, %d to the third; want 10, 10, 0",
			ok(got), len(second.seen("first")), len(third.seen("first")))
	}
}

func TestTargetsNamedAsGrpcNamesThem(t *testing.T) {
	tcp := listen(t)
	startPeer(t, tcp)
	_, port, _ := net.SplitHostPort(tcp.Addr().String())
	v6 := listenOn(t, "tcp", "[::1]:0")
	startPeer(t, v6)
	sock := filepath.Join(t.TempDir(), "peer.sock")
	unix := listenOn(t, "unix", sock)
	startPeer(t, unix)
	for _, target := range []string{
		"dns:///localhost:" + port,
		"localhost:" + port,
		"ipv6:" + v6.Addr().String(),
		"unix://" + sock,
	} {
		got := runGrpccall(t, "", "-target", target, "-method", flakyPath, "-request", "2a")
		if len(got) != 1 || got[0].Code != "OK" || got[0].Response != "2a" {
			t.Errorf("target %s: %+v, want the request echoed", target, got)
		}
	}
	_, stderr, code := runGrpccallExit(t, "-target", "dns://8.8.8.8/example.com:443", "-method", flakyPath)
	if code != 2 {
		t.Errorf("a dns:// target with its own server: exit %d (%s), want 2", code, stderr)
	}
}
