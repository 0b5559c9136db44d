module interop/gosdk-v1.2.0

go 1.23.0

require interop/gosdk v0.0.0

require (
	github.com/google/jsonschema-go v0.3.0 // indirect
	github.com/modelcontextprotocol/go-sdk v1.2.0 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/oauth2 v0.30.0 // indirect
	interop/tap v0.0.0 // indirect
)

replace (
	interop/gosdk => ../gosdk
	interop/tap => ../tap
)
