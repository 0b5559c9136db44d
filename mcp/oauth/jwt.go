package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
)

// PrivateKey is a client's key for signing its assertions: a P-256 ECDSA
// key (ES256) or an RSA key of at least 2048 bits (RS256). fmt (every
// verb) and log/slog print it as "[redacted]".
type PrivateKey struct {
	signer crypto.Signer
}

// NewPrivateKey wraps a P-256 *ecdsa.PrivateKey or an *rsa.PrivateKey of
// 2048 bits or more (or a crypto.Signer such as a hardware key, whose
// Public is one of those).
func NewPrivateKey(s crypto.Signer) (*PrivateKey, error) {
	if _, err := signingAlg(s); err != nil {
		return nil, err
	}
	return &PrivateKey{signer: s}, nil
}

// Public returns the public half, to register at the authorization
// server.
func (k *PrivateKey) Public() crypto.PublicKey { return k.signer.Public() }

// String returns "[redacted]".
func (*PrivateKey) String() string { return redacted }

// GoString returns "[redacted]".
func (*PrivateKey) GoString() string { return redacted }

// Format prints "[redacted]" whatever the verb.
func (*PrivateKey) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

// LogValue logs "[redacted]".
func (*PrivateKey) LogValue() slog.Value { return slog.StringValue(redacted) }

// ParsePrivateKey reads a PEM private key (PKCS #8 "PRIVATE KEY", SEC 1
// "EC PRIVATE KEY" or PKCS #1 "RSA PRIVATE KEY") for signing client
// assertions: a P-256 ECDSA key (ES256) or an RSA key of at least 2048
// bits (RS256). The error never quotes the key.
func ParsePrivateKey(pemBytes []byte) (*PrivateKey, error) {
	b, _ := pem.Decode(pemBytes)
	if b == nil {
		return nil, errors.New("oauth: private key: no PEM block")
	}
	var key any
	var err error
	switch b.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(b.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(b.Bytes)
	default:
		return nil, fmt.Errorf("oauth: private key: PEM block %q is not a private key", clip(b.Type, 40))
	}
	if err != nil {
		return nil, errors.New("oauth: private key: not a valid key of its PEM type")
	}
	s, ok := key.(crypto.Signer)
	if !ok {
		return nil, errors.New("oauth: private key: not a signing key")
	}
	return NewPrivateKey(s)
}

// signingAlg returns the JWS algorithm of key: ES256 for P-256, RS256 for
// RSA of 2048 bits or more.
func signingAlg(key crypto.Signer) (string, error) {
	switch k := key.Public().(type) {
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() {
			return "", errors.New("oauth: private key: an ECDSA key must be on P-256 (ES256)")
		}
		return "ES256", nil
	case *rsa.PublicKey:
		if k.N.BitLen() < 2048 {
			return "", errors.New("oauth: private key: an RSA key must have at least 2048 bits (RS256)")
		}
		return "RS256", nil
	}
	return "", fmt.Errorf("oauth: private key: %T keys are not supported (want P-256 ECDSA or RSA)", key.Public())
}

// signJWT returns the compact JWS (RFC 7515) of claims, signed by key with
// its algorithm; header gets "alg" added.
func signJWT(key crypto.Signer, header, claims map[string]any) (string, error) {
	alg, err := signingAlg(key)
	if err != nil {
		return "", err
	}
	header["alg"] = alg
	h, err := json.Marshal(header)
	if err != nil {
		return "", err
	}
	c, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	input := b64(h) + "." + b64(c)
	sum := sha256.Sum256([]byte(input))
	var sig []byte
	switch alg {
	case "ES256":
		// JWS wants r||s, each 32 bytes (RFC 7518 §3.4), not ASN.1.
		der, err := key.Sign(rand.Reader, sum[:], crypto.SHA256)
		if err != nil {
			return "", fmt.Errorf("oauth: signing: %w", err)
		}
		if sig, err = rawECDSA(der); err != nil {
			return "", err
		}
	default:
		if sig, err = key.Sign(rand.Reader, sum[:], crypto.SHA256); err != nil {
			return "", fmt.Errorf("oauth: signing: %w", err)
		}
	}
	return input + "." + b64(sig), nil
}

// rawECDSA converts an ASN.1 ECDSA signature, what crypto.Signer returns,
// to the 64-byte r||s of a P-256 JWS.
func rawECDSA(der []byte) ([]byte, error) {
	var sig struct{ R, S *big.Int }
	rest, err := asn1.Unmarshal(der, &sig)
	if err != nil || len(rest) != 0 || sig.R.Sign() <= 0 || sig.S.Sign() <= 0 || sig.R.BitLen() > 256 || sig.S.BitLen() > 256 {
		return nil, errors.New("oauth: signing: malformed ECDSA signature")
	}
	out := make([]byte, 64)
	sig.R.FillBytes(out[:32])
	sig.S.FillBytes(out[32:])
	return out, nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// publicJWK returns the public JWK (RFC 7517) of a P-256 key, its members
// in the lexicographic order a thumbprint (RFC 7638) hashes.
func publicJWK(k *ecdsa.PrivateKey) (map[string]any, error) {
	pub, err := k.PublicKey.ECDH()
	if err != nil {
		return nil, fmt.Errorf("oauth: DPoP key: %w", err)
	}
	raw := pub.Bytes() // 0x04 || X || Y
	return map[string]any{"crv": "P-256", "kty": "EC", "x": b64(raw[1:33]), "y": b64(raw[33:65])}, nil
}
