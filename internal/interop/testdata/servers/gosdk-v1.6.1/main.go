// Command gosdk-v1.6.1 is the interop tests' server (package gosdk) built with
// go-sdk v1.6.1.
package main

import "interop/gosdk"

func main() { gosdk.Main("gosdk-v1.6.1", nil) }
