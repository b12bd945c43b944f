package io.lastunit.common.tls;

import io.grpc.util.CertificateUtils;
import java.io.ByteArrayInputStream;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A lastunit process's files for TLS to ZooKeeper's secure client port: its client certificate
 * chain (PEM, leaf first), its PKCS#8 PEM key, and the CA certificates (PEM) that ZooKeeper's
 * server certificate chains to. {@link io.lastunit.common.topology.Curators} turns them into the
 * ZooKeeper client's own TLS settings. Immutable.
 *
 * <p>ZooKeeper reads a PEM key store as one file holding both the key and the chain: a client's
 * is kept current by {@link ZooKeeperKeyStore} (a rotated certificate is used from the next
 * connection on), a server's is written once by {@link #writeKeyStore()}. The CA file is handed
 * over as it is, and ZooKeeper reads it at every connection.
 */
public record ZooKeeperTls(File certificate, File key, File ca) {

    /** Checks the three files now: readable, parse, the key is the certificate's, the certificate is valid. */
    public ZooKeeperTls {
        List<String> problems = new ArrayList<>();
        if (certificate == null || key == null || ca == null) {
            problems.add("certificate, key and ca go together");
        }
        for (File f : new File[] {certificate, key, ca}) {
            if (f != null && !f.canRead()) {
                problems.add("cannot read " + f);
            }
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("ZooKeeper TLS: " + String.join("; ", problems));
        }
        check(certificate, key, ca, Instant.now());
    }

    /**
     * From a service's settings: null (TLS to ZooKeeper off) when all three paths are blank;
     * otherwise all three are required and checked.
     *
     * @param prefix the settings' prefix for messages, e.g. {@code lastunit.shard.zookeeper-tls-}
     * @throws IllegalArgumentException naming the settings that are missing, unreadable or wrong
     */
    public static ZooKeeperTls fromSettings(String prefix, String certificate, String key, String ca) {
        if (!MutualTls.allOrNone(prefix, certificate, key, ca)) {
            return null;
        }
        try {
            return new ZooKeeperTls(new File(certificate), new File(key), new File(ca));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(prefix + "*: " + e.getMessage(), e);
        }
    }

    /**
     * Writes the key and the certificate chain into one new PEM file readable by the owner only
     * (what ZooKeeper's {@code zookeeper.ssl.keyStore.type=PEM} reads), deleted when the JVM exits.
     */
    public Path writeKeyStore() {
        try {
            byte[] keyPem = Files.readAllBytes(key.toPath());
            byte[] chainPem = Files.readAllBytes(certificate.toPath());
            Path file = Files.createTempFile("lastunit-zookeeper-tls-", ".pem");
            file.toFile().deleteOnExit();
            ZooKeeperKeyStore.writeOwnerOnly(file, chainPem, keyPem);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException("ZooKeeper TLS: cannot write the key store of " + certificate, e);
        }
    }

    private static void check(File certificate, File key, File ca, Instant now) {
        checkPair(certificate, read(certificate), key, read(key), now);
        TlsFiles.certificates(ca, read(ca));
    }

    /**
     * The contents of a certificate file and a key file make a pair ZooKeeper's client can use:
     * PEM certificates, a PKCS#8 PEM key that is the first certificate's, that certificate valid
     * at {@code now}; the files are named in the messages only.
     *
     * @throws IllegalArgumentException naming the file and the problem
     */
    static void checkPair(File certificate, byte[] certificatePem, File key, byte[] keyPem, Instant now) {
        X509Certificate[] chain = TlsFiles.certificates(certificate, certificatePem);
        X509Certificate leaf = chain[0];
        if (now.isBefore(leaf.getNotBefore().toInstant()) || now.isAfter(leaf.getNotAfter().toInstant())) {
            throw new IllegalArgumentException("ZooKeeper TLS: " + certificate + ": the certificate is valid from "
                    + leaf.getNotBefore().toInstant() + " to " + leaf.getNotAfter().toInstant() + ", not now (" + now + ")");
        }
        PrivateKey privateKey;
        try {
            privateKey = CertificateUtils.getPrivateKey(new ByteArrayInputStream(keyPem));
        } catch (IOException | GeneralSecurityException | RuntimeException e) {
            throw new IllegalArgumentException("ZooKeeper TLS: " + key + ": not a PKCS#8 PEM private key ("
                    + e.getMessage() + ")", e);
        }
        if (!TlsFiles.matches(privateKey, leaf)) {
            throw new IllegalArgumentException("ZooKeeper TLS: " + key + " is not the key of the certificate in "
                    + certificate);
        }
    }

    private static byte[] read(File f) {
        try {
            return Files.readAllBytes(f.toPath());
        } catch (IOException e) {
            throw new IllegalArgumentException("ZooKeeper TLS: cannot read " + f + " (" + e.getMessage() + ")", e);
        }
    }
}
