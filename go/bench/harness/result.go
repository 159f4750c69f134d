package harness

import (
	"fmt"
	"maps"

	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// Result turns the outcome of Runner.Run into a schema result. A scenario
// fails ("error" status) when the run returned an error or when a
// repetition completed no operation at all: numbers from a run that only
// failed describe the failure, not the system. Otherwise the first
// per-operation error, if any, is kept next to the "errors" metric. Where
// both sides' utilisations are known, the parameter "bottleneck" names the
// side that set the figures (see Bottleneck), so that a report judges only
// what the server did.
func Result(scenario string, params map[string]any, reps []Rep, runErr error) schema.Result {
	res := schema.Result{Scenario: scenario, Parameters: params, Metrics: Metrics(reps)}
	if b := bottleneckOf(&res, reps); b != "" {
		res.Parameters = maps.Clone(params)
		if res.Parameters == nil {
			res.Parameters = map[string]any{}
		}
		res.Parameters["bottleneck"] = b
	}
	switch {
	case runErr != nil:
		res.Status, res.Error = schema.StatusError, runErr.Error()
	case len(reps) == 0:
		res.Status, res.Error = schema.StatusError, "no repetitions ran"
	default:
		res.Status = schema.StatusOK
		for i, r := range reps {
			if r.Ops == 0 {
				res.Status = schema.StatusError
				res.Error = fmt.Sprintf("rep %d: no operation succeeded (%d failed)", i+1, r.Errors)
				if r.FirstError != "" {
					res.Error += ": " + r.FirstError
				}
				return res
			}
			if res.Error == "" && r.FirstError != "" {
				res.Error = r.FirstError
			}
		}
	}
	return res
}

// ErrorResult records a scenario that could not be run at all, e.g. because
// its server failed to start, so the report shows the failure instead of
// silently missing a row.
func ErrorResult(scenario string, params map[string]any, err error) schema.Result {
	return schema.Result{Scenario: scenario, Parameters: params, Status: schema.StatusError, Error: err.Error()}
}
