package main

import (
	"context"

	"github.com/grpcbench/grpcbench/go/bench/harness"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// runRounds measures scenarios in rounds: each round runs one warmed-up
// repetition of every scenario in turn, and a scenario's results are its
// repetitions from all rounds. On a shared machine, where other builds come
// and go, a change in load thus falls on every method alike instead of on
// whichever happened to run at that moment; the methods' ratios are what
// the suite is about. Each round starts one scenario later than the one
// before (harness.InTurns), so that no method always runs first, after the
// previous round's last method has left its garbage to the server.
// sessions holds each codec's server; one not measured has no session.
func (b *bench) runRounds(ctx context.Context, sessions map[string]*session, scs []scenario) []schema.Result {
	type state struct {
		reps    []harness.Rep
		sampler *serverSampler
		err     error
	}
	states := make([]state, len(scs))
	rounds := b.cfg.harness.Reps
	harness.InTurns(len(scs), rounds, func(i, round int) {
		s := scs[i]
		st := &states[i]
		sess := sessions[s.codec]
		if st.err != nil {
			return // a failed scenario keeps its first error
		}
		r := &harness.Runner{
			Suite:    suite,
			Scenario: harness.TurnLabel(s.name(), round, rounds),
			Progress: b.log,
			Plan:     harness.Plan{Workers: 1, Ops: b.cfg.n, Reps: 1, Warmup: b.cfg.harness.Warmup},
		}
		if sess.cpu != nil {
			if st.sampler == nil {
				st.sampler = &serverSampler{cpu: sess.cpu, debug: sess.debug}
			}
			r.Server = st.sampler
		}
		reps, err := r.Run(ctx, newLister(sess.conn, s.containers, b.cfg.opTimeout).op(s))
		st.reps = append(st.reps, reps...)
		if err == nil && sess.proc != nil {
			err = sess.proc.ExitedEarly()
		}
		st.err = err
	})
	out := make([]schema.Result, len(scs))
	for i, s := range scs {
		st := states[i]
		out[i] = harness.Result(s.name(), s.params(sessions[s.codec].transport, b.cfg), st.reps, st.err)
		if st.sampler != nil {
			out[i].Metrics = append(out[i].Metrics, st.sampler.metrics(st.reps)...)
		}
	}
	return out
}
