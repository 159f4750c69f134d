package main

import "time"

// epoch is the only timestamp ociassemble writes (config, history, layer entries): the Unix epoch,
// so that digests do not depend on when or where an image was built.
var epoch = time.Unix(0, 0).UTC()
