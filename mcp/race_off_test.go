//go:build !race

package mcp_test

// largeResultBound is how many times its size a large result may
// allocate (TestLargeResultAllocatesItsSize): the text, and a little.
const largeResultBound = 1.5
