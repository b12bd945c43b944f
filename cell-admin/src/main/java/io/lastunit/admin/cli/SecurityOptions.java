package io.lastunit.admin.cli;

import io.lastunit.admin.platform.LocalCredentials;
import io.lastunit.common.tls.ClientTls;
import io.lastunit.common.tls.MutualTls;
import io.lastunit.common.tls.TlsCredentials;
import io.lastunit.common.topology.ZooKeeperCredentials;
import java.io.File;
import java.time.InstantSource;
import picocli.CommandLine.Option;

/**
 * The admin tools' credentials for a secured platform: ZooKeeper's digest credentials and the
 * admin's certificate for mutual TLS to shard nodes (and, for {@code admin serve}, its listener),
 * given one by one or found in a directory that {@code ./lastunit up --secure} wrote
 * ({@link ZooKeeperAuthOptions#SECURE_DIR_FILES}). Options given one by one win over the directory's files. Not
 * thread-safe (a command's options).
 */
public final class SecurityOptions {
    /** What {@code --secure-dir} holds: the names {@code up --secure} writes. */
    static final String CA_FILE = LocalCredentials.CA_FILE;
    static final String ADMIN_CERTIFICATE_FILE = LocalCredentials.ADMIN_CERTIFICATE_FILE;
    static final String ADMIN_KEY_FILE = LocalCredentials.ADMIN_KEY_FILE;

    @picocli.CommandLine.Mixin
    ZooKeeperAuthOptions zookeeperAuth = new ZooKeeperAuthOptions();

    @Option(names = "--tls-cert", paramLabel = "PEM",
            description = "The admin's certificate (role admin: spiffe://lastunit/admin/<name>) for mutual TLS.")
    File tlsCertificate;

    @Option(names = "--tls-key", paramLabel = "PEM", description = "Its PKCS#8 key.")
    File tlsKey;

    @Option(names = "--tls-ca", paramLabel = "PEM", description = "The CA of the platform's certificates.")
    File tlsCa;

    /** The ZooKeeper credentials, or null for none. */
    ZooKeeperCredentials zookeeper() {
        return zookeeperAuth.zookeeper();
    }

    /** TLS to ZooKeeper, or null for plaintext. */
    io.lastunit.common.tls.ZooKeeperTls zookeeperTls() {
        return zookeeperAuth.zookeeperTls();
    }

    /** The mutual-TLS files, or null when neither the three options nor --secure-dir give them. */
    MutualTls mutualTls() {
        File cert = pick(tlsCertificate, ADMIN_CERTIFICATE_FILE);
        File key = pick(tlsKey, ADMIN_KEY_FILE);
        File ca = pick(tlsCa, CA_FILE);
        if (cert == null && key == null && ca == null) {
            return null;
        }
        try {
            return MutualTls.fromSettings("--tls-", path(cert), path(key), path(ca),
                    MutualTls.RELOAD_INTERVAL_DEFAULT.toMillis());
        } catch (IllegalArgumentException e) {
            throw CliError.usage(e.getMessage().replace("--tls-certificate", "--tls-cert"));
        }
    }

    /**
     * How the command dials shard nodes: mutual TLS as the admin when configured, else TLS trusting
     * {@code shardTrust}, else plaintext. The certificate is read once (a command runs for seconds).
     */
    ClientTls shardTls(File shardTrust) {
        MutualTls files = mutualTls();
        if (files == null) {
            return ClientTls.trusting(shardTrust);
        }
        if (shardTrust != null) {
            throw CliError.usage("--shard-trust-certificate and mutual TLS (--tls-cert/--tls-key/--tls-ca or"
                    + " --secure-dir) are both given: give one");
        }
        try {
            return ClientTls.mutual(TlsCredentials.readOnce(files, InstantSource.system()));
        } catch (IllegalArgumentException e) {
            throw CliError.usage(e.getMessage());
        }
    }

    private File pick(File given, String name) {
        if (given != null) {
            return given;
        }
        File dir = zookeeperAuth.secureDir;
        return dir == null ? null : dir.toPath().resolve(name).toFile();
    }

    private static String path(File f) {
        return f == null ? "" : f.getPath();
    }
}
