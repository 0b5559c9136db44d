// Command gosdk-v1.2.0 is the interop tests' server (package gosdk) built with
// go-sdk v1.2.0.
package main

import "interop/gosdk"

func main() { gosdk.Main("gosdk-v1.2.0", nil) }
