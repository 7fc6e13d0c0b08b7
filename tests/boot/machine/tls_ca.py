"""A throwaway certificate authority for a boot machine's TLS services (host side; `cryptography`).

A machine that fetches from a service over HTTPS verifies it as it would the real one: the service presents a
certificate for the real host name, issued by this CA, and the machine's trust store (its
/etc/ssl/certs/ca-certificates.crt, what Ubuntu's OpenSSL, Python and curl read by default) holds the image's bundle
plus this CA. Nothing on the machine is told to trust less: a script that checks certificates checks this one.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

TRUST_STORE = "/etc/ssl/certs/ca-certificates.crt"


@dataclass(frozen=True)
class ServerCertificate:
    cert: Path
    key: Path
    ca_pem: str


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def issue(host: str, directory: Path) -> ServerCertificate:
    """A new CA and a server certificate for `host` signed by it, written under `directory`."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("accelstack boot harness test CA"))
        .issuer_name(_name("accelstack boot harness test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(_name(host))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    directory.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = directory / "server.pem", directory / "server.key"
    cert_path.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return ServerCertificate(cert_path, key_path, ca.public_bytes(serialization.Encoding.PEM).decode())


def trust_store_with(ca_pem: str) -> str:
    """The image's CA bundle (the host's, which the machine's /etc overlays) with the test CA appended."""
    bundle = Path(TRUST_STORE)
    return (bundle.read_text() if bundle.exists() else "") + ca_pem
