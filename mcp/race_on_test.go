//go:build race

package mcp_test

// largeResultBound is how many times its size a large result may
// allocate (TestLargeResultAllocatesItsSize). Under the race detector
// sync.Pool drops items at random, so that a pooled buffer may be made
// again at every call: the chunks, the event data or the body, then the
// text, about 3 times the size.
const largeResultBound = 3.5
