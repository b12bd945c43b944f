package io.lastunit.common.tls;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A certificate authority kept in memory, for a platform on one machine ({@code ./lastunit up
 * --secure}) and for tests: it issues each service a certificate naming its {@link ServiceIdentity}
 * (URI SAN), valid for TLS server and client use on 127.0.0.1 and localhost, with an EC P-256 key.
 * Files are written as PEM (certificate; PKCS#8 key readable by the owner only), each replaced in
 * one rename so a reader never sees half a file. Not for production: its key lives only in this
 * process and nothing revokes what it issued. Needs BouncyCastle ({@code bcpkix}) on the class path.
 * Thread-safe.
 */
public final class LocalAuthority {
    /** A certificate with its key. */
    public record Issued(X509Certificate certificate, PrivateKey key) {
        /** Writes the key first, then the certificate (a reloading service reads the pair once both match). */
        public void writeTo(Path certificateFile, Path keyFile) {
            try {
                writeAtomically(keyFile, pem(new JcaPKCS8Generator(key, null)), true);
            } catch (org.bouncycastle.util.io.pem.PemGenerationException e) {
                throw new IllegalStateException("cannot write the key as PKCS#8", e);
            }
            writeAtomically(certificateFile, pem(certificate), false);
        }
    }

    private static final SecureRandom RANDOM = new SecureRandom();
    private final KeyPair keys;
    private final X509Certificate certificate;

    private LocalAuthority(KeyPair keys, X509Certificate certificate) {
        this.keys = keys;
        this.certificate = certificate;
    }

    /** A new CA named {@code CN=<name>}, valid from an hour ago for {@code validity}. */
    public static LocalAuthority create(String name, Duration validity) {
        try {
            KeyPair kp = newKeyPair();
            X500Name subject = new X500Name("CN=" + name);
            Instant now = Instant.now();
            X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(subject, serial(),
                    Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(validity)), subject, kp.getPublic());
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
            b.addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(kp.getPublic()));
            return new LocalAuthority(kp, sign(b, kp.getPrivate()));
        } catch (IOException | GeneralSecurityException | org.bouncycastle.operator.OperatorCreationException e) {
            throw new IllegalStateException("cannot create a CA certificate", e);
        }
    }

    /** The CA's certificate (what services trust). */
    public X509Certificate certificate() {
        return certificate;
    }

    /** Writes the CA's certificate as PEM. */
    public void writeCertificate(Path file) {
        writeAtomically(file, pem(certificate), false);
    }

    /** A certificate for {@code identity} on 127.0.0.1 and localhost, valid from an hour ago for {@code validity}. */
    public Issued issue(ServiceIdentity identity, Duration validity) {
        return issue(identity.role() + "-" + identity.name(), identity, Instant.now(), validity);
    }

    /**
     * A certificate named {@code CN=<commonName>} with {@code identity} as its URI SAN, or none when
     * it is null (a certificate lastunit refuses to admit: tests), valid from {@code notBefore}
     * minus an hour for {@code validity}.
     */
    public Issued issue(String commonName, ServiceIdentity identity, Instant notBefore, Duration validity) {
        try {
            KeyPair kp = newKeyPair();
            X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(certificate, serial(),
                    Date.from(notBefore.minus(Duration.ofHours(1))), Date.from(notBefore.plus(validity)),
                    new X500Name("CN=" + commonName), kp.getPublic());
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            List<GeneralName> names = new ArrayList<>();
            if (identity != null) {
                names.add(new GeneralName(GeneralName.uniformResourceIdentifier, identity.uri()));
            }
            names.add(new GeneralName(GeneralName.iPAddress, "127.0.0.1"));
            names.add(new GeneralName(GeneralName.dNSName, "localhost"));
            b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(names.toArray(GeneralName[]::new)));
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
            b.addExtension(Extension.extendedKeyUsage, false,
                    new ExtendedKeyUsage(new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
            b.addExtension(Extension.authorityKeyIdentifier, false, ext.createAuthorityKeyIdentifier(certificate));
            return new Issued(sign(b, keys.getPrivate()), kp.getPrivate());
        } catch (IOException | GeneralSecurityException | org.bouncycastle.operator.OperatorCreationException e) {
            throw new IllegalStateException("cannot issue a certificate for " + commonName, e);
        }
    }

    private static KeyPair newKeyPair() throws GeneralSecurityException {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
        return g.generateKeyPair();
    }

    private static BigInteger serial() {
        return new BigInteger(127, RANDOM).add(BigInteger.ONE);
    }

    private static X509Certificate sign(X509v3CertificateBuilder b, PrivateKey signer)
            throws GeneralSecurityException, org.bouncycastle.operator.OperatorCreationException {
        ContentSigner s = new JcaContentSignerBuilder("SHA256withECDSA").build(signer);
        return new JcaX509CertificateConverter().getCertificate(b.build(s));
    }

    private static String pem(Object o) {
        StringWriter w = new StringWriter();
        try (JcaPEMWriter p = new JcaPEMWriter(w)) {
            p.writeObject(o);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return w.toString();
    }

    /** Writes {@code text} beside {@code file} and renames it over {@code file}; {@code secret}: owner-only permissions. */
    static void writeAtomically(Path file, String text, boolean secret) {
        try {
            Path dir = file.toAbsolutePath().getParent();
            Files.createDirectories(dir);
            Path tmp = Files.createTempFile(dir, "." + file.getFileName(), ".tmp");
            try {
                if (secret) {
                    try {
                        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-------"));
                    } catch (UnsupportedOperationException notPosix) {
                        // the file system has no POSIX permissions: the directory's own protect it
                    }
                }
                Files.writeString(tmp, text, StandardCharsets.US_ASCII);
                try {
                    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                Files.deleteIfExists(tmp);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }
}
