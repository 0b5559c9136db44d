package demo

import (
	_ "embed"
	"os"
)

//go:embed servers.yaml
var configTemplate string

// Running is the demo's servers, started by [Start]. Close them once, when
// done.
type Running struct {
	// Config is a configuration file (YAML) listing the servers, for
	// config.Parse.
	Config []byte
	stop   []func()
}

// Start serves [Text] and [Notes] over Streamable HTTP on 127.0.0.1 and
// returns them with the configuration that points at them, the embedded
// servers.yaml with their URLs filled in. Close stops them.
func Start() (*Running, error) {
	r := &Running{}
	urls := map[string]string{}
	for key, s := range map[string]*Server{"TEXT_URL": Text(), "NOTES_URL": Notes()} {
		url, stop, err := Serve(s)
		if err != nil {
			r.Close()
			return nil, err
		}
		r.stop = append(r.stop, stop)
		urls[key] = url
	}
	r.Config = []byte(os.Expand(configTemplate, func(key string) string { return urls[key] }))
	return r, nil
}

// Close stops the servers, closing their connections.
func (r *Running) Close() {
	for _, stop := range r.stop {
		stop()
	}
}
