package secret_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/vigia-data/vigia/secret"
)

func TestSealOpen(t *testing.T) {
	b, err := secret.New("a test key")
	if err != nil {
		t.Fatal(err)
	}
	pt := []byte("postgres://u:S3cret@db/x")
	box, err := b.Seal(pt, []byte("conn-1"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(box, []byte("S3cret")) {
		t.Fatal("plaintext visible in the box")
	}
	got, err := b.Open(box, []byte("conn-1"))
	if err != nil || !bytes.Equal(got, pt) {
		t.Fatalf("open: %q %v", got, err)
	}
	t.Run("OtherOwnerFails", func(t *testing.T) {
		if _, err := b.Open(box, []byte("conn-2")); !errors.Is(err, secret.ErrOpen) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("OtherKeyFails", func(t *testing.T) {
		o, _ := secret.New("another key")
		if _, err := o.Open(box, []byte("conn-1")); !errors.Is(err, secret.ErrOpen) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("TamperedFails", func(t *testing.T) {
		box[len(box)-1] ^= 1
		if _, err := b.Open(box, []byte("conn-1")); !errors.Is(err, secret.ErrOpen) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("EmptyKeyRefused", func(t *testing.T) {
		if _, err := secret.New("  "); err == nil {
			t.Fatal("empty key accepted")
		}
	})
}

func TestLoadKeyDevelopmentFile(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	k1, gen, err := secret.LoadKey("")
	if err != nil || !gen || len(k1) != 64 {
		t.Fatalf("%q %v %v", k1, gen, err)
	}
	k2, _, _ := secret.LoadKey("")
	if k1 != k2 {
		t.Fatal("development key not reused")
	}
	if k, gen, _ := secret.LoadKey("from-env"); k != "from-env" || gen {
		t.Fatal("env key not preferred")
	}
}
