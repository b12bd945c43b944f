package io.lastunit.admin.platform;

import io.lastunit.common.tls.LocalAuthority;
import io.lastunit.common.tls.MutualTls;
import io.lastunit.common.tls.Role;
import io.lastunit.common.tls.ServiceIdentity;
import io.lastunit.common.tls.ZooKeeperTls;
import io.lastunit.common.topology.ZooKeeperCredentials;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;

/**
 * The credentials of a secure local platform ({@code ./lastunit up --secure}), made at its start in
 * a directory of their own: a CA ({@value #CA_FILE}), a certificate and key per service (role and
 * name in the file names), the admin tools' ({@value #ADMIN_CERTIFICATE_FILE}, {@value #ADMIN_KEY_FILE})
 * a random ZooKeeper password ({@value #ZOOKEEPER_CREDENTIALS_FILE}, {@code lastunit:<hex>}) and
 * the embedded ZooKeeper server's certificate ({@value #ZOOKEEPER_SERVER_CERTIFICATE_FILE}); every
 * service and the admin tools use their own certificate for TLS to ZooKeeper too.
 * {@code ./lastunit admin --secure-dir DIR} reads those names. Everything is valid for
 * {@link #VALIDITY}. Not thread-safe.
 *
 * <p>Hazard: the keys and the password are plain files, readable by this user only; the CA's key is
 * never written, so nothing else can be issued once the platform stops.
 */
public final class LocalCredentials {
    public static final String CA_FILE = "ca.pem";
    public static final String ADMIN_CERTIFICATE_FILE = "admin.pem";
    public static final String ADMIN_KEY_FILE = "admin.key";
    public static final String ZOOKEEPER_CREDENTIALS_FILE = "zookeeper-credentials";
    public static final String ZOOKEEPER_USER = "lastunit";
    public static final String ZOOKEEPER_SERVER_CERTIFICATE_FILE = "zookeeper-server.pem";
    public static final String ZOOKEEPER_SERVER_KEY_FILE = "zookeeper-server.key";
    public static final Duration VALIDITY = Duration.ofDays(30);

    private final Path directory;
    private final LocalAuthority authority;
    private final ZooKeeperCredentials zookeeper;
    private final Duration reloadInterval;

    private LocalCredentials(Path directory, LocalAuthority authority, ZooKeeperCredentials zookeeper,
                             Duration reloadInterval) {
        this.directory = directory;
        this.authority = authority;
        this.zookeeper = zookeeper;
        this.reloadInterval = reloadInterval;
    }

    /**
     * A new CA, the admin tools' certificate and a ZooKeeper password, written into {@code directory}.
     *
     * @param reloadInterval how often each service reads its files again
     */
    public static LocalCredentials create(Path directory, Duration reloadInterval) {
        LocalAuthority ca = LocalAuthority.create("lastunit-local-ca", VALIDITY);
        ca.writeCertificate(directory.resolve(CA_FILE));
        byte[] secret = new byte[24];
        new SecureRandom().nextBytes(secret);
        ZooKeeperCredentials zk = new ZooKeeperCredentials(ZOOKEEPER_USER, HexFormat.of().formatHex(secret));
        writeSecret(directory.resolve(ZOOKEEPER_CREDENTIALS_FILE), zk.user() + ":" + zk.password() + "\n");
        LocalCredentials c = new LocalCredentials(directory, ca, zk, reloadInterval);
        ca.issue(ServiceIdentity.of(Role.ADMIN, "cli"), VALIDITY)
                .writeTo(directory.resolve(ADMIN_CERTIFICATE_FILE), directory.resolve(ADMIN_KEY_FILE));
        return c;
    }

    /** A certificate for {@code role}/{@code name} (made on first call, the same files after), with the CA. */
    public MutualTls service(Role role, String name) {
        Path cert = directory.resolve(role.id() + "-" + name + ".pem");
        Path key = directory.resolve(role.id() + "-" + name + ".key");
        if (!Files.exists(cert)) {
            authority.issue(ServiceIdentity.of(role, name), VALIDITY).writeTo(cert, key);
        }
        return new MutualTls(cert.toFile(), key.toFile(), directory.resolve(CA_FILE).toFile(), reloadInterval);
    }

    /**
     * The embedded ZooKeeper server's certificate (CN=zookeeper, for 127.0.0.1 and localhost, no
     * lastunit identity: no lastunit service admits it) and key, made on first call, with the CA.
     */
    public ZooKeeperTls zookeeperServer() {
        Path cert = directory.resolve(ZOOKEEPER_SERVER_CERTIFICATE_FILE);
        Path key = directory.resolve(ZOOKEEPER_SERVER_KEY_FILE);
        if (!Files.exists(cert)) {
            authority.issue("zookeeper", null, java.time.Instant.now(), VALIDITY).writeTo(cert, key);
        }
        return new ZooKeeperTls(cert.toFile(), key.toFile(), directory.resolve(CA_FILE).toFile());
    }

    /** A service's TLS to ZooKeeper: its own certificate ({@link #service}) as the client's. */
    public ZooKeeperTls zookeeperClient(Role role, String name) {
        MutualTls files = service(role, name);
        return new ZooKeeperTls(files.certificate(), files.key(), files.ca());
    }

    /** The admin tools' files. */
    public MutualTls admin() {
        return new MutualTls(directory.resolve(ADMIN_CERTIFICATE_FILE).toFile(),
                directory.resolve(ADMIN_KEY_FILE).toFile(), directory.resolve(CA_FILE).toFile(), reloadInterval);
    }

    /** The CA that issued every certificate here (a test issues more with it). */
    public LocalAuthority authority() {
        return authority;
    }

    public ZooKeeperCredentials zookeeper() {
        return zookeeper;
    }

    public Path directory() {
        return directory;
    }

    private static void writeSecret(Path file, String text) {
        try {
            Files.deleteIfExists(file);
            Files.createFile(file);
            try {
                Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
            } catch (UnsupportedOperationException notPosix) {
                // the directory's own permissions protect it
            }
            Files.writeString(file, text, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }
}
