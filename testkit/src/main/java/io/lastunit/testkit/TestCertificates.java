package io.lastunit.testkit;

import java.io.File;
import java.io.FileWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A self-signed certificate for 127.0.0.1 and localhost, written as PEM files (certificate
 * chain and PKCS#8 key) into a temporary directory, for tests of TLS listeners. The
 * certificate is its own CA, so the same file serves as the client's trust anchor. Immutable.
 */
public final class TestCertificates {
    private final File certificate;
    private final File key;

    private TestCertificates(File certificate, File key) {
        this.certificate = certificate;
        this.key = key;
    }

    public static TestCertificates selfSigned() {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
            g.initialize(2048, new SecureRandom());
            KeyPair kp = g.generateKeyPair();
            X500Name name = new X500Name("CN=lastunit-test");
            Instant now = Instant.now();
            JcaX509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(name, BigInteger.valueOf(now.toEpochMilli()),
                    Date.from(now.minus(Duration.ofDays(1))), Date.from(now.plus(Duration.ofDays(30))), name,
                    kp.getPublic());
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
            b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName[] {
                new GeneralName(GeneralName.iPAddress, "127.0.0.1"),
                new GeneralName(GeneralName.dNSName, "localhost")}));
            X509Certificate cert = new JcaX509CertificateConverter()
                    .getCertificate(b.build(new JcaContentSignerBuilder("SHA256withRSA").build(kp.getPrivate())));
            Path dir = Files.createTempDirectory("lastunit-tls");
            File certFile = dir.resolve("cert.pem").toFile();
            File keyFile = dir.resolve("key.pem").toFile();
            try (Writer w = new FileWriter(certFile); JcaPEMWriter pem = new JcaPEMWriter(w)) {
                pem.writeObject(cert);
            }
            try (Writer w = new FileWriter(keyFile); JcaPEMWriter pem = new JcaPEMWriter(w)) {
                pem.writeObject(new JcaPKCS8Generator(kp.getPrivate(), null));
            }
            certFile.deleteOnExit();
            keyFile.deleteOnExit();
            dir.toFile().deleteOnExit();
            return new TestCertificates(certFile, keyFile);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (Exception e) {
            throw new IllegalStateException("could not make a test certificate", e);
        }
    }

    /** PEM certificate (also the trust anchor). */
    public File certificate() {
        return certificate;
    }

    /** PEM PKCS#8 private key. */
    public File key() {
        return key;
    }
}
