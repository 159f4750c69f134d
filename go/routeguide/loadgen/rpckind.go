package main

import (
	"fmt"
	"strings"
)

// rpcKind is one of the four RouteGuide call shapes. Its value is what the
// results record as the "rpc" parameter, in the vocabulary of the report's
// "routeguide" layout (go/routeguide/reportlayout), so that Go and Lisp
// results of the same kind line up.
type rpcKind string

const (
	unary           rpcKind = "unary"            // GetFeature
	serverStreaming rpcKind = "server_streaming" // ListFeatures
	clientStreaming rpcKind = "client_streaming" // RecordRoute
	bidiStreaming   rpcKind = "bidi_streaming"   // RouteChat
)

// defaultRPCs is the -rpcs default: every kind, cheapest first, the order of
// the report's rows.
const defaultRPCs = "unary,server_streaming,client_streaming,bidi"

// rpcKindsByFlag maps the -rpcs spellings to kinds. "bidi" is the short
// name people type; "bidi_streaming", the recorded one, is accepted too so
// that a value copied from a results file works.
var rpcKindsByFlag = map[string]rpcKind{
	"unary":            unary,
	"server_streaming": serverStreaming,
	"client_streaming": clientStreaming,
	"bidi":             bidiStreaming,
	"bidi_streaming":   bidiStreaming,
}

// method is the RouteGuide method a kind calls, for messages.
func (k rpcKind) method() string {
	switch k {
	case unary:
		return "GetFeature"
	case serverStreaming:
		return "ListFeatures"
	case clientStreaming:
		return "RecordRoute"
	case bidiStreaming:
		return "RouteChat"
	}
	return string(k)
}

// parseRPCKinds parses a -rpcs value: a comma list of distinct kinds.
func parseRPCKinds(s string) ([]rpcKind, error) {
	items, err := splitList(s)
	if err != nil {
		return nil, err
	}
	var kinds []rpcKind
	seen := map[rpcKind]bool{}
	for _, item := range items {
		k, ok := rpcKindsByFlag[item]
		if !ok {
			return nil, fmt.Errorf("unknown RPC kind %q (want unary, server_streaming, client_streaming or bidi)", item)
		}
		if seen[k] {
			return nil, fmt.Errorf("RPC kind %q given twice", item)
		}
		seen[k] = true
		kinds = append(kinds, k)
	}
	return kinds, nil
}

// splitList splits a comma list, allowing spaces around items but no empty
// item: "unary,,bidi" is more likely a typo than a request.
func splitList(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty list")
	}
	items := strings.Split(s, ",")
	for i, item := range items {
		items[i] = strings.TrimSpace(item)
		if items[i] == "" {
			return nil, fmt.Errorf("empty item in %q", s)
		}
	}
	return items, nil
}
