package io.lastunit.admin.cli;

import io.lastunit.common.topology.TreeAcls;
import io.lastunit.common.topology.ZooKeeperCredentials;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code lastunit admin acls apply}: gives every znode under the namespace lastunit's ACL (its
 * credentials: all; anyone else: nothing), for a topology created before the services had
 * credentials ({@link TreeAcls}).
 */
@Command(name = "acls", mixinStandardHelpOptions = true, subcommands = AclsCommand.Apply.class,
        description = "ZooKeeper ACLs of the topology.")
public final class AclsCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @ParentCommand
    AdminCommand admin;

    @Override
    public Integer call() {
        return LastunitCli.requireSubcommand(spec);
    }

    /** {@code acls apply}. */
    @Command(name = "apply", mixinStandardHelpOptions = true,
            description = {"Give every znode under the namespace lastunit's ACL: all for its credentials"
                    + " (--zookeeper-credentials or --secure-dir), nothing for anyone else.",
                    "Give every service the credentials first: a znode created later by one without them is open."})
    public static final class Apply implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @ParentCommand
        AclsCommand acls;

        @Override
        public Integer call() {
            AdminCommand admin = acls.admin;
            ZooKeeperCredentials credentials = admin.security.zookeeper();
            if (credentials == null) {
                throw CliError.usage("acls apply needs lastunit's ZooKeeper credentials (--zookeeper-credentials"
                        + " USER:PASSWORD or --secure-dir DIR): they are what the ACL admits");
            }
            PrintWriter out = spec.commandLine().getOut();
            try (ZooKeeperSession zk = admin.connect()) {
                int n;
                try {
                    n = TreeAcls.restrict(zk.client(), zk.namespace(), credentials);
                } catch (org.apache.zookeeper.KeeperException.NoAuthException e) {
                    throw CliError.usage("ZooKeeper refuses " + e.getPath() + " (NoAuth): it is restricted to other"
                            + " credentials");
                } catch (Exception e) {
                    throw CliError.unreachable("ZooKeeper at " + zk.connect() + ": " + e.getMessage());
                }
                out.println(n == 0 ? "nothing under " + zk.namespace() + " at " + zk.connect()
                        : n + " znode" + (n == 1 ? "" : "s") + " under " + zk.namespace() + " are lastunit's only"
                                + " (user " + credentials.user() + ")");
                out.flush();
                return ExitCodes.OK;
            }
        }
    }
}
