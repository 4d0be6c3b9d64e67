#!/usr/bin/env bash
# Makes the certificates of the mutual TLS between the matcher and the
# Agones allocator, for a local or test cluster (a real deployment would
# use its own PKI, e.g. cert-manager):
#
#   allocator-ca.crt/.key    CA of the allocator's server certificate
#   allocator.crt/.key       the allocator's server certificate, for the
#                            names of its Service inside the cluster
#   client-ca.crt/.key       CA the allocator accepts client certificates from
#   matcher-client.crt/.key  the matcher's client certificate
#
# Usage: deploy/make-certs.sh [DIR]   (default: ./certs; existing files are
# kept, delete them to make new ones). ALLOCATOR_EXTRA_SANS adds names to
# the server certificate, e.g. ALLOCATOR_EXTRA_SANS=DNS:localhost,IP:127.0.0.1
# to reach it through `kubectl port-forward`. Keys are P-256, PKCS#8;
# certificates are valid for DAYS days (default 365).
set -euo pipefail

dir=${1:-certs}
days=${DAYS:-365}
namespace=${AGONES_NAMESPACE:-agones-system}
service=agones-allocator
sans="DNS:${service},DNS:${service}.${namespace},DNS:${service}.${namespace}.svc,DNS:${service}.${namespace}.svc.cluster.local"
if [[ -n "${ALLOCATOR_EXTRA_SANS:-}" ]]; then
    sans="${sans},${ALLOCATOR_EXTRA_SANS}"
fi

mkdir -p "$dir"
cd "$dir"
umask 077

key() {
    [[ -f "$1.key" ]] || openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key"
}

ca() { # name, common name
    key "$1"
    [[ -f "$1.crt" ]] || openssl req -x509 -new -key "$1.key" -subj "/CN=$2" -days "$days" \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" \
        -out "$1.crt"
}

leaf() { # name, common name, CA name, extensions
    key "$1"
    [[ -f "$1.crt" ]] && return
    printf '%s\n' "$4" > "$1.ext"
    openssl req -new -key "$1.key" -subj "/CN=$2" -out "$1.csr"
    openssl x509 -req -in "$1.csr" -CA "$3.crt" -CAkey "$3.key" -CAcreateserial \
        -days "$days" -extfile "$1.ext" -out "$1.crt"
    rm -f "$1.csr" "$1.ext"
}

ca allocator-ca "netcode allocator server CA"
ca client-ca "netcode allocator client CA"
leaf allocator "${service}.${namespace}.svc" allocator-ca \
"basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=${sans}"
leaf matcher-client netcode-matcher client-ca \
"basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"

chmod 644 ./*.crt
openssl verify -CAfile allocator-ca.crt allocator.crt
openssl verify -CAfile client-ca.crt matcher-client.crt
echo "certificates in $(pwd)"
