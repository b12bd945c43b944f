package io.lastunit.admin.cli;

import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.Limits;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * One {@code --shard ID=REGION=HOST:PORT} of {@code admin cells create}: a shard of the cell being
 * created, the region it serves and the address of its shard node. Immutable.
 */
public record ShardSpec(String shardId, String region, String host, int port) {
    /** Longest shard id and region: a ZooKeeper path segment (TopologyStore's bound). */
    static final int NAME_LENGTH_MAX = 64;
    static final int HOST_LENGTH_MAX = 249;

    /**
     * Parses {@code ID=REGION=HOST:PORT}.
     *
     * @throws IllegalArgumentException naming what is wrong
     */
    public static ShardSpec parse(String text) {
        String[] parts = text.split("=", -1);
        if (parts.length != 3) {
            throw new IllegalArgumentException("'" + text + "' is not ID=REGION=HOST:PORT");
        }
        String id = parts[0];
        String region = parts[1];
        String address = parts[2];
        requireName("shard id", id, text);
        requireName("region", region, text);
        int colon = address.lastIndexOf(':');
        if (colon <= 0 || colon == address.length() - 1) {
            throw new IllegalArgumentException("'" + text + "': address '" + address + "' is not HOST:PORT");
        }
        String host = address.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        if (!Limits.isId(host, HOST_LENGTH_MAX)) {
            throw new IllegalArgumentException("'" + text + "': host '" + host + "' is not 1.." + HOST_LENGTH_MAX
                    + " printable characters without spaces");
        }
        int port;
        try {
            port = Integer.parseInt(address.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "': port '" + address.substring(colon + 1) + "' is not a number");
        }
        if (port < 1 || port > 65_535) {
            throw new IllegalArgumentException("'" + text + "': port " + port + " is outside [1, 65535]");
        }
        return new ShardSpec(id, region, host, port);
    }

    /** True for a name that may be a ZooKeeper path segment: 1..64 printable ASCII characters, no '/'. */
    static boolean isName(String s) {
        return Limits.isId(s, NAME_LENGTH_MAX) && s.indexOf('/') < 0 && !s.equals(".") && !s.equals("..");
    }

    static void requireName(String what, String value, String context) {
        if (!isName(value)) {
            throw new IllegalArgumentException("'" + context + "': " + what + " '" + value + "' is not 1.."
                    + NAME_LENGTH_MAX + " printable ASCII characters without spaces or '/'");
        }
    }

    public String address() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }

    public ShardInfo toShardInfo(String cell) {
        return ShardInfo.newBuilder().setShardId(shardId).setCell(cell).setRegion(region).setAddress(address()).build();
    }

    /** picocli's converter for {@code --shard}. */
    public static final class Converter implements ITypeConverter<ShardSpec> {
        @Override
        public ShardSpec convert(String value) {
            try {
                return parse(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }
}
