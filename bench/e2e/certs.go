package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the files both servers and the client use: one CA, a serving certificate for 127.0.0.1
// and a client certificate, all ECDSA P-256 (the same key type for both servers, so both pay the
// same handshake).
type pki struct {
	CA, ServerCert, ServerKey, ClientCert, ClientKey string
}

func writePEM(path, kind string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600)
}

func newPKI(dir string) (pki, error) {
	p := pki{
		CA: filepath.Join(dir, "ca.crt"), ServerCert: filepath.Join(dir, "server.crt"),
		ServerKey: filepath.Join(dir, "server.key"), ClientCert: filepath.Join(dir, "client.crt"),
		ClientKey: filepath.Join(dir, "client.key"),
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return p, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "warrant-bench-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return p, err
	}
	caCert, _ := x509.ParseCertificate(caDER)
	if err := writePEM(p.CA, "CERTIFICATE", caDER); err != nil {
		return p, err
	}
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage, certPath, keyPath string) error {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		}
		if usage == x509.ExtKeyUsageServerAuth {
			tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			return err
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return err
		}
		if err := writePEM(certPath, "CERTIFICATE", der); err != nil {
			return err
		}
		return writePEM(keyPath, "PRIVATE KEY", keyDER)
	}
	if err := leaf(2, "127.0.0.1", x509.ExtKeyUsageServerAuth, p.ServerCert, p.ServerKey); err != nil {
		return p, err
	}
	return p, leaf(3, "kube-apiserver", x509.ExtKeyUsageClientAuth, p.ClientCert, p.ClientKey)
}

// kubeconfig writes the webhook kubeconfig for a server at url (path included, used as written
// by the webhook client) authenticating with the client certificate.
func (p pki) kubeconfig(dir, name, url string) (string, error) {
	path := filepath.Join(dir, "kubeconfig-"+name+".yaml")
	body := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
  - name: %[1]s
    cluster:
      server: %[2]s
      certificate-authority: %[3]s
users:
  - name: kube-apiserver
    user:
      client-certificate: %[4]s
      client-key: %[5]s
contexts:
  - name: webhook
    context: {cluster: %[1]s, user: kube-apiserver}
current-context: webhook
`, name, url, p.CA, p.ClientCert, p.ClientKey)
	return path, os.WriteFile(path, []byte(body), 0o600)
}
