package io.lastunit.common.tls;

import io.grpc.util.CertificateUtils;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.Optional;

/**
 * One read of a service's {@link MutualTls} files, checked whole: the chain parses and its leaf is
 * valid at {@code now}, names a lastunit identity, and matches the key; the CA file holds at least
 * one certificate. Immutable (the arrays are not handed out to be changed).
 */
record TlsFiles(X509Certificate[] chain, PrivateKey key, X509Certificate[] authorities, ServiceIdentity identity) {

    /** @param bytes the certificate, key and CA files' contents, in that order */
    static TlsFiles parse(MutualTls files, byte[][] bytes, Instant now) {
        X509Certificate[] chain = certificates(files.certificate(), bytes[0]);
        X509Certificate leaf = chain[0];
        if (now.isBefore(leaf.getNotBefore().toInstant()) || now.isAfter(leaf.getNotAfter().toInstant())) {
            throw new IllegalArgumentException(files.certificate() + ": the certificate is valid from "
                    + leaf.getNotBefore().toInstant() + " to " + leaf.getNotAfter().toInstant() + ", not now (" + now + ")");
        }
        Optional<ServiceIdentity> identity = ServiceIdentity.of(leaf);
        if (identity.isEmpty()) {
            throw new IllegalArgumentException(files.certificate() + ": the certificate " + leaf.getSubjectX500Principal()
                    + " names no lastunit identity (a URI subject alternative name spiffe://lastunit/<role>/<name>)");
        }
        PrivateKey key;
        try {
            key = CertificateUtils.getPrivateKey(new ByteArrayInputStream(bytes[1]));
        } catch (IOException | GeneralSecurityException | RuntimeException e) {
            throw new IllegalArgumentException(files.key() + ": not a PKCS#8 PEM private key (" + e.getMessage() + ")", e);
        }
        if (!matches(key, leaf)) {
            throw new IllegalArgumentException(files.key() + " is not the key of the certificate in " + files.certificate()
                    + " (a rotation half written? both files are read again at the next reload)");
        }
        X509Certificate[] authorities = certificates(files.ca(), bytes[2]);
        return new TlsFiles(chain, key, authorities, identity.get());
    }

    static X509Certificate[] certificates(java.io.File file, byte[] pem) {
        X509Certificate[] certs;
        try {
            certs = CertificateUtils.getX509Certificates(new ByteArrayInputStream(pem));
        } catch (GeneralSecurityException | RuntimeException e) {
            throw new IllegalArgumentException(file + ": not PEM certificates (" + e.getMessage() + ")", e);
        }
        if (certs.length == 0) {
            throw new IllegalArgumentException(file + ": no certificate in it");
        }
        return certs;
    }

    /** Whether {@code key} signs what {@code cert}'s public key verifies. */
    static boolean matches(PrivateKey key, X509Certificate cert) {
        String algorithm = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            default -> key.getAlgorithm(); // Ed25519, Ed448 name their own signature
        };
        try {
            byte[] challenge = new byte[32];
            new SecureRandom().nextBytes(challenge);
            Signature s = Signature.getInstance(algorithm);
            s.initSign(key);
            s.update(challenge);
            byte[] signed = s.sign();
            Signature v = Signature.getInstance(algorithm);
            v.initVerify(cert.getPublicKey());
            v.update(challenge);
            return v.verify(signed);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }
}
