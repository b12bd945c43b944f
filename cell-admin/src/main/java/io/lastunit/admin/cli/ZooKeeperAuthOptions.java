package io.lastunit.admin.cli;

import io.lastunit.admin.platform.LocalCredentials;
import io.lastunit.common.tls.ZooKeeperTls;
import io.lastunit.common.topology.ZooKeeperCredentials;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * A command's ZooKeeper credentials for a platform with ACLs: given as {@code USER:PASSWORD}, or
 * read from the directory {@code ./lastunit up --secure} wrote. The option wins over the directory.
 * And its TLS to ZooKeeper's secure client port ({@code --zookeeper-tls-*}, all three or none).
 * Not thread-safe (a command's options).
 */
public final class ZooKeeperAuthOptions {
    static final String SECURE_DIR_ENV = "LASTUNIT_SECURE_DIR";
    static final String ZOOKEEPER_CREDENTIALS_ENV = "LASTUNIT_ZOOKEEPER_CREDENTIALS";
    static final String ZOOKEEPER_CREDENTIALS_FILE = LocalCredentials.ZOOKEEPER_CREDENTIALS_FILE;
    static final String SECURE_DIR_FILES = LocalCredentials.CA_FILE + ", " + LocalCredentials.ADMIN_CERTIFICATE_FILE
            + ", " + LocalCredentials.ADMIN_KEY_FILE + ", " + ZOOKEEPER_CREDENTIALS_FILE;

    @Option(names = "--secure-dir", paramLabel = "DIR",
            description = {"The credentials a './lastunit up --secure' wrote (it prints the directory): "
                    + SECURE_DIR_FILES + " (default: " + SECURE_DIR_ENV + ")."})
    File secureDir = envFile(SECURE_DIR_ENV);

    @Option(names = "--zookeeper-credentials", paramLabel = "USER:PASSWORD",
            description = "ZooKeeper digest credentials of a platform with ACLs (default: " + ZOOKEEPER_CREDENTIALS_ENV
                    + ", else --secure-dir's).")
    String zookeeperCredentials = System.getenv(ZOOKEEPER_CREDENTIALS_ENV);

    @Option(names = "--zookeeper-tls-cert", paramLabel = "PEM",
            description = "Client certificate for TLS to ZooKeeper's secure client port (with --zookeeper-tls-key"
                    + " and --zookeeper-tls-ca; default: --secure-dir's admin certificate, else plaintext).")
    File zookeeperTlsCertificate;

    @Option(names = "--zookeeper-tls-key", paramLabel = "PEM", description = "Its PKCS#8 key.")
    File zookeeperTlsKey;

    @Option(names = "--zookeeper-tls-ca", paramLabel = "PEM", description = "The CA of ZooKeeper's server certificate.")
    File zookeeperTlsCa;

    /**
     * TLS to ZooKeeper, checked now, or null for plaintext: the three options, else with
     * {@code --secure-dir} the admin's certificate from it (a secure local platform's ZooKeeper
     * serves TLS only), else none.
     */
    ZooKeeperTls zookeeperTls() {
        File cert = zookeeperTlsCertificate;
        File key = zookeeperTlsKey;
        File ca = zookeeperTlsCa;
        if (cert == null && key == null && ca == null && secureDir != null) {
            cert = secureDir.toPath().resolve(LocalCredentials.ADMIN_CERTIFICATE_FILE).toFile();
            key = secureDir.toPath().resolve(LocalCredentials.ADMIN_KEY_FILE).toFile();
            ca = secureDir.toPath().resolve(LocalCredentials.CA_FILE).toFile();
        }
        try {
            return ZooKeeperTls.fromSettings("--zookeeper-tls-", path(cert), path(key), path(ca));
        } catch (IllegalArgumentException e) {
            throw CliError.usage(e.getMessage().replace("--zookeeper-tls-certificate", "--zookeeper-tls-cert"));
        }
    }

    private static String path(File f) {
        return f == null ? "" : f.getPath();
    }

    /** The ZooKeeper credentials, or null for none. */
    ZooKeeperCredentials zookeeper() {
        String given = zookeeperCredentials;
        if ((given == null || given.isBlank()) && secureDir != null) {
            Path f = secureDir.toPath().resolve(ZOOKEEPER_CREDENTIALS_FILE);
            try {
                given = Files.readString(f, StandardCharsets.US_ASCII).strip();
            } catch (IOException e) {
                throw CliError.usage("--secure-dir: cannot read " + f + " (" + e.getMessage() + ")");
            }
        }
        try {
            return ZooKeeperCredentials.parse("--zookeeper-credentials", given);
        } catch (IllegalArgumentException e) {
            throw CliError.usage(e.getMessage());
        }
    }

    private static File envFile(String name) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? null : new File(v);
    }
}
