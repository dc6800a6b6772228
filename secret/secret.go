// Package secret encrypts what Vigia keeps that must stay secret at rest: source
// credentials (DSNs) and webhook signing secrets. AES-256-GCM with a key derived from
// VIGIA_SECRET_KEY; every box starts with a version byte so keys can be rotated.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const version1 byte = 1

// ErrOpen is returned when a box cannot be opened (wrong key or tampered data). It says
// nothing about the content.
var ErrOpen = errors.New("secret: cannot decrypt (wrong VIGIA_SECRET_KEY or damaged data)")

// Box seals and opens secrets with one key.
type Box struct {
	aead cipher.AEAD
}

// New derives the key from any non-empty text (SHA-256 of it).
func New(key string) (*Box, error) {
	if strings.TrimSpace(key) == "" {
		return nil, errors.New("secret: empty key")
	}
	k := sha256.Sum256([]byte(key))
	block, err := aes.NewCipher(k[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plaintext; aad binds the box to its owner (e.g. the connection id) so a
// box copied onto another row does not open.
func (b *Box) Seal(plaintext, aad []byte) ([]byte, error) {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out := append([]byte{version1}, nonce...)
	return b.aead.Seal(out, nonce, plaintext, aad), nil
}

// Open decrypts a box made by Seal with the same aad.
func (b *Box) Open(box, aad []byte) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(box) < 1+n || box[0] != version1 {
		return nil, ErrOpen
	}
	pt, err := b.aead.Open(nil, box[1:1+n], box[1+n:], aad)
	if err != nil {
		return nil, ErrOpen
	}
	return pt, nil
}

// LoadKey returns VIGIA_SECRET_KEY, or for local development a key kept in a file under
// the user's config directory (created with mode 0600 on first use). generated reports
// whether the development key file was used, so the caller can warn.
func LoadKey(env string) (key string, generated bool, err error) {
	if env != "" {
		return env, false, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", false, fmt.Errorf("secret: VIGIA_SECRET_KEY is not set and there is no config directory for a development key")
	}
	path := filepath.Join(dir, "vigia", "dev-secret-key")
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) >= 32 {
		return strings.TrimSpace(string(b)), true, nil
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", false, err
	}
	k := hex.EncodeToString(raw[:])
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, fmt.Errorf("secret: create %s: %w", filepath.Dir(path), err)
	}
	if err := os.WriteFile(path, []byte(k+"\n"), 0o600); err != nil {
		return "", false, fmt.Errorf("secret: write development key: %w", err)
	}
	return k, true, nil
}
