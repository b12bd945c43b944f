package io.lastunit.common.topology;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import java.nio.charset.StandardCharsets;

/**
 * Topology values as protobuf JSON in znodes, readable with {@code zkCli}: compact, proto field
 * names ({@code shard_id}), UTF-8. Stateless, thread-safe.
 *
 * <p>Hazard: readers ignore unknown fields on purpose. During a rolling upgrade a newer writer
 * may add a field; an old router that refused the value would drop the whole topology.
 */
final class TopologyCodec {
    private static final JsonFormat.Printer PRINTER =
            JsonFormat.printer().omittingInsignificantWhitespace().preservingProtoFieldNames();
    private static final JsonFormat.Parser PARSER = JsonFormat.parser().ignoringUnknownFields();

    private TopologyCodec() {
    }

    static byte[] encode(Message value) {
        try {
            return PRINTER.print(value).getBytes(StandardCharsets.UTF_8);
        } catch (InvalidProtocolBufferException e) {
            // Only Any fields with unknown types fail to print; topology messages have none.
            throw new IllegalStateException("cannot print " + value.getDescriptorForType().getFullName(), e);
        }
    }

    /**
     * Parses {@code data} into {@code builder} and returns the message.
     *
     * @throws IllegalArgumentException naming {@code path} when the data is not such a message
     */
    @SuppressWarnings("unchecked")
    static <T extends Message> T decode(String path, byte[] data, Message.Builder builder) {
        if (data == null || data.length == 0) {
            throw new IllegalArgumentException(path + ": no data, expected " + builder.getDescriptorForType().getName());
        }
        try {
            PARSER.merge(new String(data, StandardCharsets.UTF_8), builder);
            return (T) builder.build();
        } catch (InvalidProtocolBufferException | RuntimeException e) {
            throw new IllegalArgumentException(path + ": not a " + builder.getDescriptorForType().getName()
                    + " in protobuf JSON: " + e.getMessage(), e);
        }
    }
}
