module git.rickub.com/bots-garden/mini-me

go 1.23.0

require (
	github.com/google/jsonschema-go v0.4.3
	github.com/stretchr/testify v1.11.1
	github.com/tmaxmax/go-sse v0.11.0
	go.uber.org/goleak v1.3.0
	go.yaml.in/yaml/v3 v3.0.6
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/kr/text v0.2.0 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
