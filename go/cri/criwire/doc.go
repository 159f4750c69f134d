// Package criwire encodes and decodes CRI container listings directly with
// protowire, without protobuf-go's reflection.
//
// A listing is any message whose only field is `repeated runtime.v1.Container
// containers = 1`: cri-api's ListContainersResponse and
// StreamContainersResponse and grpcbench's ListContainersChunkedResponse.
// Profiles of the CRI benchmark put 75% of a client's CPU and 85% of a
// server's in protobuf-go's generic map code, which a container's labels and
// annotations (36 entries in the benchmark's inventory) go through entry by
// entry: boxed values, reflect conversions and a copy of every key and value.
// Here a map entry costs a map insert and nothing else:
//
//   - Decoding copies the message into one string once (or takes one,
//     UnmarshalListingString) and takes every string field as a substring
//     of it, allocates the containers with their metadata and image specs as
//     one array per message, and sizes each map by the previous container's.
//     A container thus keeps its whole message alive, which is what a
//     listing is read for. UTF-8 is checked as protobuf-go does, a map entry
//     at a time where it is all ASCII.
//   - Encoding sizes each container once (MarshalListing), then writes it.
//
// The wire format is protobuf's, so either side may be protobuf-go. Decoding
// declines what it does not handle exactly as protobuf-go would, such as an
// unknown field (kept by protobuf-go) or a repeated sub-message (merged by
// protobuf-go), with an error: callers then decode with proto.Unmarshal,
// which also gives the canonical error for a malformed message.
package criwire
