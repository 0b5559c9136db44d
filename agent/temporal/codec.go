package temporal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"
)

// CodecKeySize is the size in bytes of a Codec's key: AES-256.
const CodecKeySize = 32

// codecEncoding marks a payload a Codec sealed; it is also the
// additional data of the seal, so that no other payload passes for one.
const codecEncoding = "binary/minime-aes256gcm"

// Codec seals what a Temporal client writes: it is a
// converter.PayloadCodec that encrypts each payload whole (its data and
// its metadata) with AES-256-GCM under the host's key and a random nonce,
// so that the Temporal server and its store hold only ciphertext. A run's
// history holds the conversation, its tool outputs, its approvals and its
// result; set a Codec, through ClientOptions, on the clients of every
// worker and every starter of a task queue (the one key shared by them
// and by nobody else), then set Activities.SealedHistory.
//
// Decode passes through a payload it did not seal, so that histories
// written before a Codec was set stay readable; a sealed payload that
// does not open (another key, a changed byte) is an error. There is one
// key: rotating it means draining the runs begun under the old one. A
// Codec is safe for concurrent use.
type Codec struct {
	aead cipher.AEAD
}

// NewCodec returns a Codec sealing with key, CodecKeySize random bytes
// kept out of the workflow's input (from a secret store or an
// environment variable the host reads itself).
func NewCodec(key []byte) (*Codec, error) {
	if len(key) != CodecKeySize {
		return nil, fmt.Errorf("agent/temporal: a codec key has %d bytes, not %d", CodecKeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("agent/temporal: codec key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("agent/temporal: codec key: %w", err)
	}
	return &Codec{aead: aead}, nil
}

// Encode seals each payload.
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("agent/temporal: sealing a payload: %w", err)
		}
		nonce := make([]byte, c.aead.NonceSize())
		_, _ = rand.Read(nonce) // never fails (crypto/rand)
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{converter.MetadataEncoding: []byte(codecEncoding)},
			Data:     c.aead.Seal(nonce, nonce, plain, []byte(codecEncoding)),
		}
	}
	return out, nil
}

// errUnseal is the error of a sealed payload that does not open; it says
// nothing of the payload.
var errUnseal = errors.New("agent/temporal: a sealed payload does not open with this codec's key")

// Decode opens each payload Encode sealed, and passes the others through.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != codecEncoding {
			out[i] = p
			continue
		}
		n := c.aead.NonceSize()
		if len(p.GetData()) < n {
			return nil, errUnseal
		}
		plain, err := c.aead.Open(nil, p.Data[:n], p.Data[n:], []byte(codecEncoding))
		if err != nil {
			return nil, errUnseal
		}
		out[i] = &commonpb.Payload{}
		if err := proto.Unmarshal(plain, out[i]); err != nil {
			return nil, fmt.Errorf("agent/temporal: opening a sealed payload: %w", err)
		}
	}
	return out, nil
}

// ClientOptions returns opts with c set: a DataConverter that seals every
// payload after opts' own (the SDK's default when nil) has encoded it,
// and a FailureConverter that moves the message and the stack of every
// failure (a tool source's error, say) into a sealed payload.
func (c *Codec) ClientOptions(opts client.Options) client.Options {
	parent := opts.DataConverter
	if parent == nil {
		parent = converter.GetDefaultDataConverter()
	}
	opts.DataConverter = converter.NewCodecDataConverter(parent, c)
	opts.FailureConverter = temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{
		DataConverter: opts.DataConverter, EncodeCommonAttributes: true})
	return opts
}
