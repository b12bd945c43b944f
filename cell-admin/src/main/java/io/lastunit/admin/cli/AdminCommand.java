package io.lastunit.admin.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code lastunit admin}: the operator's commands against a running platform's topology in
 * ZooKeeper — cells, tenants and the invariant check across every shard.
 */
@Command(name = "admin", mixinStandardHelpOptions = true,
        subcommands = {CellsCommand.class, TenantsCommand.class, MovesCommand.class, CheckCommand.class,
                TopologyCommand.class, AdminServeCommand.class, AclsCommand.class},
        description = "Cells, tenant placement and moves, the invariant check of a running platform, topology"
                + " backup and restore, ZooKeeper ACLs; the admin server.")
public final class AdminCommand implements Callable<Integer> {
    static final String ZOOKEEPER_DEFAULT = "127.0.0.1:2181";
    static final String NAMESPACE_DEFAULT = "/lastunit";

    @Spec
    CommandSpec spec;

    @Option(names = "--zookeeper", paramLabel = "HOST:PORT[,HOST:PORT...]",
            description = "ZooKeeper connect string (default: LASTUNIT_ZOOKEEPER, else " + ZOOKEEPER_DEFAULT + ").")
    String zookeeper = envOr("LASTUNIT_ZOOKEEPER", ZOOKEEPER_DEFAULT);

    @Option(names = "--namespace", paramLabel = "PATH",
            description = "Topology root znode (default ${DEFAULT-VALUE}).")
    String namespace = NAMESPACE_DEFAULT;

    @Option(names = "--shard-trust-certificate", paramLabel = "PEM",
            description = "CA certificate of shard nodes that serve TLS without client certificates (default:"
                    + " plaintext to shards; for mutual TLS use --tls-cert/--tls-key/--tls-ca or --secure-dir).")
    java.io.File shardTrustCertificate;

    @picocli.CommandLine.Mixin
    SecurityOptions security = new SecurityOptions();

    @Override
    public Integer call() {
        return LastunitCli.requireSubcommand(spec);
    }

    /** A probe of the shard nodes, as {@link #shardTls()} dials them. */
    ShardProbe probe() {
        return new ShardProbe(shardTls());
    }

    /** How the commands dial shard nodes: mutual TLS as the admin, TLS trusting --shard-trust-certificate, or plaintext. */
    io.lastunit.common.tls.ClientTls shardTls() {
        return security.shardTls(shardTrust());
    }

    /** The --shard-trust-certificate, checked readable (null: plaintext to shards). */
    java.io.File shardTrust() {
        if (shardTrustCertificate != null && !shardTrustCertificate.canRead()) {
            throw CliError.usage("--shard-trust-certificate: cannot read " + shardTrustCertificate);
        }
        return shardTrustCertificate;
    }

    /** Checks --zookeeper and --namespace, then connects (exit 3 when ZooKeeper does not answer). */
    ZooKeeperSession connect() {
        validate();
        return ZooKeeperSession.open(zookeeper, namespace, security.zookeeper(), security.zookeeperTls());
    }

    void validate() {
        if (zookeeper == null || zookeeper.isBlank() || zookeeper.chars().anyMatch(Character::isWhitespace)) {
            throw CliError.usage("--zookeeper '" + zookeeper + "' is not a connect string like 127.0.0.1:2181");
        }
        for (String server : zookeeper.split("/", 2)[0].split(",")) {
            int colon = server.lastIndexOf(':');
            if (colon <= 0 || !isPort(server.substring(colon + 1))) {
                throw CliError.usage("--zookeeper: '" + server + "' is not HOST:PORT (ZooKeeper's port is usually 2181;"
                        + " './lastunit up' prints the one it uses)");
            }
        }
        if (!namespace.matches("(/[\\x21-\\x2E\\x30-\\x7E]+)+")) {
            throw CliError.usage("--namespace '" + namespace + "' is not a znode path like /lastunit (no trailing '/')");
        }
    }

    private static boolean isPort(String s) {
        try {
            int p = Integer.parseInt(s);
            return p >= 1 && p <= 65_535;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    static String envOr(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v;
    }
}
