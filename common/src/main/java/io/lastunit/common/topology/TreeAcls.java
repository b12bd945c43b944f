package io.lastunit.common.topology;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

/**
 * Gives every znode of an existing tree lastunit's ACL ({@link ZooKeeperCredentials#acl()}): for a
 * platform whose topology was created before its services had credentials. Run it after every
 * service has them (a znode created meanwhile by a process without them would be open again).
 * Each node's children are listed before its ACL is set, so a client without the credentials could
 * walk an open tree; run it with them, so that a second run (of a tree already restricted) works
 * too. Bounded by {@value #NODES_MAX} znodes. Stateless.
 */
public final class TreeAcls {
    /** A larger tree is refused part-way (with the count done): lastunit's topology is far smaller. */
    public static final int NODES_MAX = 1_000_000;

    private TreeAcls() {
    }

    /**
     * Sets the ACL on {@code root} and every znode below it.
     *
     * @return how many znodes it set; 0 when {@code root} does not exist
     * @throws KeeperException.NoAuthException when a znode is already restricted to other credentials
     */
    public static int restrict(CuratorFramework client, String root, ZooKeeperCredentials credentials) throws Exception {
        if (client.checkExists().forPath(root) == null) {
            return 0;
        }
        Deque<String> todo = new ArrayDeque<>(List.of(root));
        int done = 0;
        while (!todo.isEmpty()) {
            if (done == NODES_MAX) {
                throw new IllegalStateException("more than " + NODES_MAX + " znodes under " + root + "; " + done
                        + " were restricted");
            }
            String path = todo.pop();
            List<String> children;
            try {
                children = client.getChildren().forPath(path);
            } catch (KeeperException.NoNodeException gone) {
                continue; // an ephemeral registration that went meanwhile
            }
            for (String c : children) {
                todo.push(path + "/" + c);
            }
            try {
                client.setACL().withACL(credentials.acl()).forPath(path);
            } catch (KeeperException.NoNodeException gone) {
                continue;
            }
            done++;
        }
        return done;
    }
}
