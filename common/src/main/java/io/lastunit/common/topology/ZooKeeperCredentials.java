package io.lastunit.common.topology;

import java.nio.charset.StandardCharsets;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;

/**
 * lastunit's ZooKeeper credentials: a digest user and password that every lastunit service and admin
 * tool authenticates with ({@code addauth digest user:password}), and the ACL every znode lastunit
 * creates gets: all permissions for that user, nothing for anyone else — not even reads, since the
 * topology names every shard's address and no lastunit client goes without the credentials. So a
 * client without them can neither change a tenant's cell nor read it (ZooKeeper answers NoAuth).
 * Immutable; {@link #toString()} does not show the password.
 *
 * <p>Hazard: ZooKeeper's digest scheme sends the password in the clear when the session starts;
 * run ZooKeeper's client port over TLS, or on a network only lastunit reaches.
 */
public record ZooKeeperCredentials(String user, String password) {
    public static final int PASSWORD_LENGTH_MIN = 8;
    public static final int PASSWORD_LENGTH_MAX = 256;

    public ZooKeeperCredentials {
        if (user == null || !user.matches("[A-Za-z0-9._-]{1,64}")) {
            throw new IllegalArgumentException("ZooKeeper user must be 1..64 of [A-Za-z0-9._-], got '" + user + "'");
        }
        if (password == null || password.length() < PASSWORD_LENGTH_MIN || password.length() > PASSWORD_LENGTH_MAX
                || !password.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
            throw new IllegalArgumentException("ZooKeeper password (of user " + user + ") must be "
                    + PASSWORD_LENGTH_MIN + ".." + PASSWORD_LENGTH_MAX + " printable ASCII characters without spaces");
        }
    }

    /**
     * {@code user:password} as a setting gives it, or null (no credentials, no ACLs) when blank.
     *
     * @param setting the setting's name, for the message
     */
    public static ZooKeeperCredentials parse(String setting, String userColonPassword) {
        if (userColonPassword == null || userColonPassword.isBlank()) {
            return null;
        }
        String v = userColonPassword.trim();
        int colon = v.indexOf(':');
        if (colon <= 0 || colon == v.length() - 1) {
            throw new IllegalArgumentException(setting + " is not <user>:<password>");
        }
        try {
            return new ZooKeeperCredentials(v.substring(0, colon), v.substring(colon + 1));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(setting + ": " + e.getMessage(), e);
        }
    }

    /** What {@code addauth digest} takes: {@code user:password}. */
    public byte[] authBytes() {
        return (user + ":" + password).getBytes(StandardCharsets.US_ASCII);
    }

    /** The digest id ZooKeeper keeps in an ACL: {@code user:base64(sha1(user:password))}. */
    public String digestId() {
        try {
            return DigestAuthenticationProvider.generateDigest(user + ":" + password);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The ACL of every lastunit znode: everything for this user, nothing for anyone else. */
    public List<ACL> acl() {
        // Not List.of: ZooKeeper asks the list whether it contains null, which List.of answers with an NPE.
        return java.util.Collections.unmodifiableList(new java.util.ArrayList<>(
                List.of(new ACL(ZooDefs.Perms.ALL, new Id("digest", digestId())))));
    }

    /** Gives {@link #acl()} to every znode a Curator client creates. */
    public ACLProvider aclProvider() {
        List<ACL> acl = acl();
        return new ACLProvider() {
            @Override
            public List<ACL> getDefaultAcl() {
                return acl;
            }

            @Override
            public List<ACL> getAclForPath(String path) {
                return acl;
            }
        };
    }

    @Override
    public String toString() {
        return "ZooKeeperCredentials[user=" + user + ", password=***]";
    }
}
